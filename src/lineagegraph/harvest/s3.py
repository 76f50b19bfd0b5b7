"""S3 listing harvester: objects become ``:File`` nodes PART_OF their folded ``:Dataset``.

Why this shape:

* Listing is network-bound and graph writes are CPU-bound in another process, so lister
  threads (one per prefix, or per inventory data file) feed pages through a bounded queue to
  one writer. Both overlap, and at most ``s3.queue_pages`` pages plus one write batch are held
  in memory however large the bucket.
* A scope (bucket + key prefix) soft-deletes the objects it no longer sees only when its scan
  completed; a scope that failed, was interrupted or was denied deletes nothing, and a complete
  scan that would lose more than ``s3.max_delete_share`` of its scope stops: a
  rewrite (a dataset whose old objects were replaced by new ones) is not a loss
  (docs/deletion.md).
* Dataset rollups (objects, bytes, per storage class) are recomputed from the graph's present
  files afterwards, so they also count files outside the scanned prefix.

The S3 Inventory reader (``s3_inventory``) reuses the same scan, writer and settlement.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Generator, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

import boto3
import botocore.session
import botocore.utils
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
)

from lineagegraph.errors import ConfigError, HarvestError, LineageGraphError
from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.harvest.base import HarvestReport, Progress, Tick
from lineagegraph.identity import (
    FoldRules,
    IdentityError,
    is_folder_marker,
    name_of,
    s3_dataset_urn_for_key,
    s3_file_urn,
)
from lineagegraph.pipeline import HarvestRun, harvest_run, now_ms
from lineagegraph.settings import S3Settings, Settings

log = logging.getLogger(__name__)

SYSTEM = "s3"
STANDARD = "STANDARD"
ROLLUP_PAGE = 2000  # datasets per rollup round trip
_DATASET_CACHE = 65_536  # dataset urns remembered as written in this run (bounded memory)
_DIRECTORY_CACHE = 65_536  # directory -> dataset urn, so folding runs once per directory

_THROTTLED = frozenset({
    "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
    "TooManyRequestsException", "RequestThrottled", "ServiceUnavailable", "503",
})  # fmt: skip
_DENIED = frozenset({"AccessDenied", "AllAccessDisabled", "Forbidden", "403"})
_BAD_CREDENTIALS = frozenset({
    "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
    "TokenRefreshRequired", "InvalidSecurity",
})  # fmt: skip
_WRONG_REGION = frozenset({"PermanentRedirect", "AuthorizationHeaderMalformed", "301"})
_UNREACHABLE = (
    EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, ConnectionClosedError,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class S3Object:
    """One listed object, as S3 reports it (times in epoch ms; the Intelligent-Tiering access
    tier only from an inventory that has the field). No ETag: no query reads it, and it cost
    ~50 B per object in the embedded store (benchmarks/bench_file_node.py)."""

    key: str
    size: int
    last_modified: int | None
    storage_class: str = STANDARD
    access_tier: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """A batch of objects from one lister, `seen` at this time; `skipped` counts rows a reader
    dropped on purpose (old versions, keys outside the prefix)."""

    objects: list[S3Object]
    seen: int
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Scope:
    """What one complete scan vouches for: every object of `bucket` whose key starts with
    `prefix`. Soft deletes and the mass-delete check are confined to it."""

    bucket: str
    prefix: str = ""

    @property
    def url(self) -> str:
        """`s3://bucket/prefix`: also what the urns of the scope's objects start with."""
        return f"s3://{self.bucket}/{self.prefix}"


@dataclass(frozen=True)
class Task:
    """One unit a lister thread runs: a prefix listing or an inventory data file."""

    scope: Scope
    what: str  # for messages: "listing s3://b/p", "reading s3://inv/data/x.csv.gz"
    key: str  # the key (or prefix) the messages name
    pages: Callable[[], Generator[Page, None, None]]


@dataclass
class ScanStats:
    """Running totals for the progress display and the final report."""

    objects: int = 0
    bytes: int = 0
    folder_markers: int = 0
    files_written: int = 0
    write_seconds: float = 0.0  # time the writer spent in graph writes (they overlap listing)
    urn_clashes: int = 0  # objects not written: their urn (or their dataset's) is another asset's
    started: float = field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        return self.objects / self.elapsed if self.elapsed > 0 else 0.0


ScanProgress = Callable[[ScanStats], None]


@dataclass
class S3Report:
    """What a harvest did; `errors` are the reasons it is partial (the CLI exits non-zero)."""

    run_id: str
    scope: str
    status: str
    stats: ScanStats
    datasets: int = 0
    soft_deleted: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    interrupted: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    watermark: int | None = None


# --- client and errors ---------------------------------------------------------------------


def parse_timestamp(value: Any) -> datetime:
    """botocore's timestamp parser, with a fast path for the ISO 8601 UTC times that listings
    carry (`2024-05-01T12:00:00.000Z`): botocore reads every one with dateutil, which took about
    60 % of the CPU time of a ListObjectsV2 page. Anything else goes to botocore's own parser,
    so values are the same either way (aware datetimes in UTC)."""
    if isinstance(value, str) and value.endswith("Z") and "T" in value:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    return botocore.utils.parse_timestamp(value)


def make_client(settings: S3Settings) -> BaseClient:
    """An S3 client for any S3-compatible endpoint, retrying throttling with backoff."""
    secret = settings.secret_access_key
    token = settings.session_token
    core = botocore.session.get_session()
    core.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=parse_timestamp
    )
    try:
        session = boto3.session.Session(
            botocore_session=core,
            profile_name=settings.profile,
            aws_access_key_id=settings.access_key_id,
            aws_secret_access_key=secret.get_secret_value() if secret else None,
            aws_session_token=token.get_secret_value() if token else None,
            region_name=settings.region,
        )
    except ProfileNotFound:
        raise ConfigError(
            f"s3.profile {settings.profile!r} is not in the AWS config files "
            "(~/.aws/config, ~/.aws/credentials); fix LINEAGEGRAPH_S3__PROFILE or [s3] profile"
        ) from None
    config = Config(
        retries={"mode": settings.retry_mode, "total_max_attempts": settings.retry_attempts},
        connect_timeout=settings.connect_timeout,
        read_timeout=settings.read_timeout,
        max_pool_connections=max(10, 2 * settings.parallelism),
        s3={"addressing_style": settings.addressing_style},
    )
    try:
        return session.client("s3", endpoint_url=settings.endpoint_url, config=config)
    except ValueError as exc:  # botocore rejects malformed endpoints and regions here
        raise ConfigError(
            f"cannot make an S3 client (check s3.endpoint_url and s3.region): {exc}"
        ) from None


def endpoint_of(client: BaseClient) -> str:
    return str(client.meta.endpoint_url)


def describe_error(exc: BaseException, what: str, bucket: str, key: str, endpoint: str) -> str:
    """One line saying what failed where and how to fix it, for an S3 client error."""
    where = f"s3://{bucket}/{key}"
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        detail = error.get("Message") or code or status
        if code == "NoSuchBucket":
            return (
                f"bucket {bucket!r} does not exist at {endpoint} ({what}); "
                "check the bucket name and s3.endpoint_url / s3.region"
            )
        if code in ("NoSuchKey", "404"):
            return f"{where} does not exist ({what})"
        if code in _DENIED:
            need = "s3:ListBucket" if what.startswith("listing") else "s3:GetObject"
            return f"access denied {what}: the credentials need {need} on {where} ({detail})"
        if code in _BAD_CREDENTIALS:
            return (
                f"{endpoint} rejected the credentials ({code}) {what}; check s3.access_key_id / "
                "s3.secret_access_key or s3.profile"
            )
        if code in _THROTTLED:
            attempts = exc.response.get("ResponseMetadata", {}).get("RetryAttempts", 0) + 1
            return (
                f"S3 kept throttling ({code}) {what} after {attempts} attempts; "
                "lower s3.parallelism or raise s3.retry_attempts"
            )
        if code in _WRONG_REGION:
            return f"bucket {bucket!r} is in another region ({detail}); set s3.region ({what})"
        return f"S3 error {code or status} {what}: {detail}"
    if isinstance(exc, _UNREACHABLE):
        return f"cannot reach S3 at {endpoint} ({what}): {exc}; check s3.endpoint_url"
    if isinstance(exc, NoCredentialsError):
        return (
            f"no AWS credentials found ({what}); set s3.profile or s3.access_key_id and "
            "s3.secret_access_key (or the AWS_* environment variables)"
        )
    if isinstance(exc, BotoCoreError):
        return f"S3 client error {what}: {exc}"
    if isinstance(exc, LineageGraphError | IdentityError):
        return str(exc)
    return f"unexpected {type(exc).__name__} {what}: {exc}"


# --- listing -------------------------------------------------------------------------------


def listed_object(entry: dict[str, Any]) -> S3Object:
    """An S3Object from a ListObjectsV2 `Contents` entry."""
    return S3Object(
        key=entry["Key"],
        size=int(entry["Size"]),
        last_modified=int(entry["LastModified"].timestamp() * 1000),
        storage_class=entry.get("StorageClass") or STANDARD,
    )


def list_pages(client: BaseClient, scope: Scope, page_size: int) -> Generator[Page, None, None]:
    """ListObjectsV2 pages of a scope, streamed: nothing beyond one page is held.

    A page that fails after the retries ends the scope's listing: the pages before it are
    written, the scope is incomplete (nothing in it is soft-deleted) and the error says where
    the listing stopped. The next run lists the scope from its start again.
    """
    paginator = client.get_paginator("list_objects_v2")
    pages = paginator.paginate(
        Bucket=scope.bucket, Prefix=scope.prefix, PaginationConfig={"PageSize": page_size}
    )
    listed, last = 0, ""
    try:
        for response in pages:
            objects = [listed_object(e) for e in response.get("Contents", ())]
            yield Page(objects, now_ms())
            listed, last = listed + len(objects), objects[-1].key if objects else last
    except (ClientError, BotoCoreError) as exc:
        if not listed:
            raise
        what = f"listing {scope.url}"
        reason = describe_error(exc, what, scope.bucket, scope.prefix, endpoint_of(client))
        raise HarvestError(
            f"{reason}; stopped after {listed:,} objects, the last {last!r}: nothing under "
            f"{scope.url} was soft-deleted"
        ) from exc


def distinct_scopes(bucket: str, prefixes: Iterable[str]) -> list[Scope]:
    """The scopes to list, without one that another contains (listing it twice gains nothing)."""
    wanted = sorted(set(prefixes) or {""})
    kept: list[str] = []
    for prefix in wanted:  # sorted: a containing prefix comes before what it contains
        if not any(prefix.startswith(k) for k in kept):
            kept.append(prefix)
    return [Scope(bucket, p) for p in kept]


# --- writing -------------------------------------------------------------------------------


class FileWriter:
    """Turns pages into graph rows: each batch writes its datasets first (each once), then the
    files with their PART_OF edge (MATCHing the dataset, never MERGEing it per row)."""

    def __init__(self, store: GraphStore, rules: FoldRules, run: HarvestRun, stats: ScanStats):
        self.store = store
        self.rules = rules
        self.run = run
        self.stats = stats
        self._bucket = ""
        self._files: dict[str, dict[str, Any]] = {}  # by urn: a batch MERGEs each key once
        self._datasets: dict[str, dict[str, Any]] = {}
        self._written: OrderedDict[str, None] = OrderedDict()
        self._directories: dict[str, str] = {}

    def add(self, bucket: str, page: Page) -> None:
        if bucket != self._bucket:
            self.flush()
            self._bucket, self._directories = bucket, {}
        counts = self.run.counts
        counts["pages"] += 1
        for reason, n in page.skipped.items():
            counts[reason] += n
        for obj in page.objects:
            if is_folder_marker(obj.key, obj.size):
                self.stats.folder_markers += 1
                counts["folder_markers"] += 1
                continue
            self.stats.objects += 1
            self.stats.bytes += obj.size
            dataset = self._dataset_of(bucket, obj.key)
            if dataset not in self._written and dataset not in self._datasets:
                self._datasets[dataset] = {"urn": dataset, "name": name_of(dataset),
                                           "seen": page.seen}  # fmt: skip
            urn = s3_file_urn(bucket, obj.key)
            self._files[urn] = {
                "urn": urn, "dataset": dataset, "name": name_of(urn), "size": obj.size,
                "storage_class": obj.storage_class, "last_modified": obj.last_modified,
                "access_tier": obj.access_tier, "seen": page.seen,
            }  # fmt: skip
        counts["objects"] = self.stats.objects
        counts["bytes"] = self.stats.bytes
        if len(self._files) >= self.store.batch_size:
            self.flush()

    def _dataset_of(self, bucket: str, key: str) -> str:
        # The dataset depends only on the key's directories: fold each directory once.
        directory = key[: key.rfind("/") + 1]
        dataset = self._directories.get(directory)
        if dataset is None:
            if len(self._directories) >= _DIRECTORY_CACHE:
                self._directories.clear()
            dataset = self._directories[directory] = s3_dataset_urn_for_key(bucket, key, self.rules)
        return dataset

    def flush(self) -> None:
        began = time.perf_counter()
        self._write()
        self.stats.write_seconds += time.perf_counter() - began

    def _write(self) -> None:
        counts = self.run.counts
        if self._datasets:
            rows = list(self._datasets.values())
            written = self._run_batches("s3_merge_datasets", rows)
            counts["datasets"] += written
            counts["skipped_dataset_urn_clashes"] += len(rows) - written
            for urn in self._datasets:
                self._written[urn] = None
                if len(self._written) > _DATASET_CACHE:
                    self._written.popitem(last=False)
            self._datasets.clear()
        if self._files:
            rows = list(self._files.values())
            written = self._run_batches("s3_merge_files", rows)
            counts["files"] += written
            counts["skipped_urn_clashes"] += len(rows) - written
            self.stats.files_written += written
            self.stats.urn_clashes += len(rows) - written
            self._files.clear()

    def _run_batches(self, name: str, rows: list[dict[str, Any]]) -> int:
        """Write `rows` in transactions of the store's batch size; returns the rows written."""
        written = 0
        for chunk in chunks(rows, self.store.batch_size):
            result = self.store.run(name, {"rows": chunk, "bucket": self._bucket})
            written += int(result.rows[0][0])
        return written


# --- the scan ------------------------------------------------------------------------------


def scan(
    tasks: Sequence[Task],
    writer: FileWriter,
    settings: S3Settings,
    endpoint: str,
    progress: ScanProgress | None = None,
) -> dict[Scope, list[str]]:
    """Run the tasks in lister threads and write their pages as they arrive.

    Returns the error messages of the scopes that did not complete. A store error or Ctrl-C
    stops every lister and propagates.
    """
    failures: dict[Scope, list[str]] = defaultdict(list)
    pages: queue.Queue[tuple[Task, Page | None, BaseException | None]] = queue.Queue(
        maxsize=settings.queue_pages
    )
    stop = threading.Event()
    pool = ThreadPoolExecutor(
        max_workers=max(1, min(settings.parallelism, len(tasks))), thread_name_prefix="s3-list"
    )
    try:
        for task in tasks:
            pool.submit(_list_task, task, pages, stop)
        remaining = len(tasks)
        while remaining:
            task, page, error = pages.get()
            if page is not None:
                writer.add(task.scope.bucket, page)
                if pages.empty():
                    writer.flush()  # nothing waiting: write now, not in a long tail at the end
                if progress:
                    progress(writer.stats)
                continue
            remaining -= 1
            if error is not None:
                log.debug("%s failed", task.what, exc_info=error)
                message = describe_error(error, task.what, task.scope.bucket, task.key, endpoint)
                if message not in failures[task.scope]:
                    failures[task.scope].append(message)
        writer.flush()
    finally:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
    return {scope: messages for scope, messages in failures.items() if messages}


def _list_task(task: Task, pages: queue.Queue[Any], stop: threading.Event) -> None:
    """A lister thread: every page, then a final (task, None, error-or-None) marker."""
    error: BaseException | None = None
    try:
        with contextlib.closing(task.pages()) as it:
            for page in it:
                if not _put(pages, (task, page, None), stop):
                    return
    except Exception as exc:
        error = exc
    _put(pages, (task, None, error), stop)


def _put(pages: queue.Queue[Any], item: Any, stop: threading.Event) -> bool:
    """Put, waiting while the writer is busy; give up when the scan is being stopped."""
    while not stop.is_set():
        try:
            pages.put(item, timeout=0.2)
            return True
        except queue.Full:
            continue
    return False


def settle(
    store: GraphStore,
    scopes: Sequence[Scope],
    failures: dict[Scope, list[str]],
    started: int,
    settings: S3Settings,
    allow_mass_delete: bool,
    run: HarvestRun,
    previous: dict[Scope, int],
) -> list[str]:
    """Soft-delete what complete scopes no longer hold, then refresh dataset rollups.

    `previous` is each scope's live object count before the scan. Returns the reasons the run
    is partial (failed scopes, refused mass deletes).
    """
    errors = [message for scope in scopes for message in failures.get(scope, [])]
    for scope in scopes:
        if scope in failures:
            continue
        params = {"root": scope.url, "started": started}
        counts = store.read("s3_scope_counts", params)[0]
        present, unseen = int(counts["present"] or 0), int(counts["unseen"] or 0)
        if not unseen:
            continue
        if not allow_mass_delete:
            before = max(previous[scope], unseen)  # what it did not see was there before it
            refusal = mass_delete_refusal(
                store, scope, params, before, present - unseen, unseen, settings.max_delete_share
            )
            if refusal:
                errors.append(refusal)
                continue
        deleted = store.run("s3_soft_delete", params).records()[0]["deleted"]
        run.counts["soft_deleted"] += int(deleted)
    for scope in scopes:
        if scope not in failures:  # its objects, one by one, replace its inventory roll-ups
            params = {"bucket": scope.bucket, "prefix": scope.prefix, "seen": started}
            store.run("s3_supersede_rollups", params)
        refresh_rollups(store, scope)
    return errors


def mass_delete_refusal(
    store: GraphStore,
    scope: Scope,
    params: dict[str, Any],
    previous: int,
    live: int,
    unseen: int,
    share: float,
) -> str | None:
    """Why soft-deleting `unseen` objects of a complete scan looks like a loss, or None.

    The share counts losses, not rewrites: an unseen object whose dataset still
    has live objects was replaced (a Spark overwrite) and does not count. A loss is a scope
    whose live count falls below (1 - share) of its `previous` count (an empty listing), or
    datasets that vanish entirely with more than `share` of it (a mis-scoped listing).
    """
    advice = (
        "check the bucket, prefix and credentials, and if the objects really are gone rerun "
        "with --allow-mass-delete"
    )
    what = f"stopped before soft-deleting {unseen:,} of {previous:,} objects under {scope.url}"
    limit = f"more than s3.max_delete_share ({share:.0%})"
    if live < (1 - share) * previous:
        return (
            f"{what}: the scan sees {live:,} live objects where the scope had {previous:,} "
            f"({1 - live / previous:.0%} fewer), {limit}; {advice}"
        )
    vanished = store.read("s3_scope_vanished", params)
    lost = sum(int(row["objects"]) for row in vanished)
    if lost > share * previous:
        names = ", ".join(row["dataset"] for row in vanished[:3])
        more = f" and {len(vanished) - 3:,} more" if len(vanished) > 3 else ""
        return (
            f"{what}: {len(vanished):,} datasets would vanish entirely ({names}{more}) with "
            f"{lost:,} objects ({lost / previous:.0%} of the scope), {limit}; {advice}"
        )
    return None


# --- dataset rollups -----------------------------------------------------------------------


_CLASS_SAFE = re.compile(r"[^A-Za-z0-9_]")
ROLLUP_KEY_PREFIXES = ("objects_", "bytes_")


def class_suffix(storage_class: str) -> str:
    """The storage class as a property-name suffix: bytes_STANDARD_IA, objects_GLACIER."""
    return _CLASS_SAFE.sub("_", storage_class)


def refresh_rollups(store: GraphStore, scope: Scope) -> int:
    """Recompute the rollups of every dataset holding an object of the scope.

    The scope's datasets are found in one pass over its objects, then summed a page at a time
    (a page per pass over the objects made the work grow with datasets times objects); memory
    holds the scope's dataset urns, far fewer than its objects.
    """
    params = {"root": scope.url}
    urns = [row["dataset"] for row in store.read("s3_scope_datasets", params)]
    for page in chunks(urns, ROLLUP_PAGE):
        per_dataset: dict[str, dict[str, tuple[int, int]]] = {urn: {} for urn in page}
        for row in store.read("s3_dataset_rollup", {"datasets": page}):
            if row["storage_class"] is not None:
                per_dataset[row["dataset"]][row["storage_class"]] = (
                    int(row["objects"]),
                    int(row["bytes"]),
                )
        write_rollups(store, per_dataset)
    return len(urns)


def write_rollups(store: GraphStore, rollups: dict[str, dict[str, tuple[int, int]]]) -> None:
    """Store `objects`, `bytes` and per-class `objects_<C>`/`bytes_<C>` on each dataset; a
    class the dataset no longer holds drops to 0 (properties cannot be removed by name here)."""
    for urns in chunks(({"urn": u} for u in rollups), store.batch_size):
        names = [u["urn"] for u in urns]
        existing = {r["dataset"]: r["keys"] for r in store.read("s3_dataset_keys", {"urns": names})}
        rows = []
        for urn in names:
            props: dict[str, int] = {
                key: 0 for key in existing.get(urn, []) if key.startswith(ROLLUP_KEY_PREFIXES)
            }
            classes = rollups[urn]
            props["objects"] = sum(o for o, _ in classes.values())
            props["bytes"] = sum(b for _, b in classes.values())
            for storage_class, (objects, size) in classes.items():
                suffix = class_suffix(storage_class)
                props[f"objects_{suffix}"] = props.get(f"objects_{suffix}", 0) + objects
                props[f"bytes_{suffix}"] = props.get(f"bytes_{suffix}", 0) + size
            rows.append({"urn": urn, "props": props})
        store.write_batches("s3_set_dataset_rollup", rows, ("urn",))


# --- the harvest ---------------------------------------------------------------------------


def live_objects(store: GraphStore, scope: Scope) -> int:
    """The scope's present (not soft-deleted) objects: its live count before a scan."""
    params = {"root": scope.url, "started": 0}
    return int(store.read("s3_scope_counts", params)[0]["present"] or 0)


def run_scope_label(scopes: Sequence[Scope]) -> str:
    """The :HarvestRun scope: `s3://bucket/prefix`, space-separated when several."""
    return " ".join(scope.url for scope in scopes)


def scan_and_settle(
    store: GraphStore,
    run: HarvestRun,
    settings: Settings,
    tasks: Sequence[Task],
    scopes: Sequence[Scope],
    started: int,
    endpoint: str,
    *,
    allow_mass_delete: bool,
    progress: ScanProgress | None,
) -> S3Report:
    """The body of a harvest run, shared by listing and S3 Inventory: scan, then soft-delete
    and roll up. After Ctrl-C it returns at once with `interrupted` set and nothing deleted, so
    the run closes as 'partial' and the caller re-raises KeyboardInterrupt."""
    stats = ScanStats()
    writer = FileWriter(store, settings.identity.rules(), run, stats)
    previous = {scope: live_objects(store, scope) for scope in scopes}
    report = S3Report(run.id, run.scope, "running", stats)
    try:
        failures = scan(tasks, writer, settings.s3, endpoint, progress)
    except KeyboardInterrupt:
        run.error = "interrupted: nothing was soft-deleted; the next run lists again"
        with contextlib.suppress(LineageGraphError):
            writer.flush()  # whole pages already listed are correct sightings
        report.interrupted = True
        return report
    report.errors = settle(
        store, scopes, failures, started, settings.s3, allow_mass_delete, run, previous
    )
    if stats.urn_clashes:
        report.warnings.append(
            f"{stats.urn_clashes:,} objects were not recorded because their urn, or their "
            "dataset's, is already another asset's (an object `a` beside objects under `a/`); "
            "the run counts them as skipped_urn_clashes"
        )
    report.datasets = run.counts["datasets"]
    report.soft_deleted = run.counts["soft_deleted"]
    if report.errors:
        run.error = "; ".join(report.errors)
    else:
        run.watermark = started  # the time of the last complete scan of this scope
    return report


def harvest_s3(
    store: GraphStore,
    settings: Settings,
    bucket: str,
    prefixes: Iterable[str] = ("",),
    *,
    allow_mass_delete: bool = False,
    progress: ScanProgress | None = None,
) -> S3Report:
    """List `bucket` (under each prefix, in parallel) into the graph as one :HarvestRun.

    The run is 'partial' with reasons in `errors` when a prefix failed or a mass delete was
    refused; Ctrl-C records a partial run and re-raises KeyboardInterrupt.
    """
    if not bucket or "/" in bucket:
        raise ConfigError(f"not a bucket name: {bucket!r} (give the name only, no s3:// or '/')")
    client = make_client(settings.s3)
    endpoint = endpoint_of(client)
    scopes = distinct_scopes(bucket, prefixes)
    tasks = [
        Task(
            scope,
            f"listing {scope.url}",
            scope.prefix,
            partial(list_pages, client, scope, settings.s3.page_size),
        )
        for scope in scopes
    ]
    with harvest_run(store, SYSTEM, run_scope_label(scopes)) as (run, _):
        report = scan_and_settle(
            store, run, settings, tasks, scopes, now_ms(), endpoint,
            allow_mass_delete=allow_mass_delete, progress=progress,
        )  # fmt: skip
    return finished(report, run)


def finished(report: S3Report, run: HarvestRun) -> S3Report:
    """The report with the run's final status; Ctrl-C is re-raised once the run is recorded."""
    if report.interrupted:
        raise KeyboardInterrupt
    report.status = run.status
    report.counts, report.watermark = dict(run.counts), run.watermark
    return report


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def summary(report: S3Report) -> str:
    """The line a person reads about a listing or an inventory report."""
    stats = report.stats
    marker = "marker" if stats.folder_markers == 1 else "markers"
    return (
        f"{report.scope}: {stats.objects:,} objects ({human_bytes(stats.bytes)}), "
        f"{stats.folder_markers:,} folder {marker}, {report.datasets:,} datasets, "
        f"{report.soft_deleted:,} soft-deleted, in {stats.elapsed:,.1f} s "
        f"({stats.rate:,.0f} objects/s); run {report.run_id}: {report.status}"
    )


def harvest_report(report: S3Report) -> HarvestReport:
    """The S3 report as every source reports."""
    return HarvestReport(
        report.run_id, SYSTEM, report.scope, report.status, report.counts, report.watermark,
        report.warnings, report.errors, summary(report),
    )  # fmt: skip


def ticks(source: str, progress: Progress) -> ScanProgress:
    """A listing's running totals as the progress every source reports."""
    return lambda stats: progress(
        Tick(source, stats.objects, "objects", stats.rate, human_bytes(stats.bytes))
    )


@dataclass
class S3Harvester:
    """`harvest s3`: every bucket of [s3] buckets (or `bucket`), under each prefix."""

    bucket: str | None = None
    prefixes: tuple[str, ...] = ()
    allow_mass_delete: bool = False
    name = "s3"
    section = "s3"
    needs = "[s3] buckets"

    def not_configured(self, settings: Settings) -> str | None:
        return None if self.bucket or settings.s3.buckets else "no [s3] buckets"

    def run(
        self, store: GraphStore, settings: Settings, *, progress: Progress
    ) -> list[HarvestReport]:
        buckets = [self.bucket] if self.bucket else settings.s3.buckets
        if not buckets:
            raise ConfigError("give a bucket, or list buckets in the s3.buckets setting")
        prefixes = list(self.prefixes) or settings.s3.prefixes or [""]
        reports = []
        for bucket in buckets:
            report = harvest_s3(
                store, settings, bucket, prefixes, allow_mass_delete=self.allow_mass_delete,
                progress=ticks(f"s3://{bucket}", progress),
            )  # fmt: skip
            reports.append(harvest_report(report))
        return reports
