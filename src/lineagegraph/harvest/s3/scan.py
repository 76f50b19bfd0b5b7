"""The scan: lister threads feed pages through a bounded queue to one writer.

Listing is network-bound and graph writes are CPU-bound in another process, so lister threads
(one per prefix, or per inventory data file) hand their pages to the one thread that writes.
Both overlap, and at most ``s3.queue_pages`` pages plus one write batch are held in memory
however large the bucket.

Why `FileWriter` and not the pipeline's `GraphWriter` (graph/writer.py): a listing is millions
of rows of one shape, a file with its PART_OF edge to a dataset most files share. FileWriter
writes a batch's new datasets first, each once per run (a bounded cache), then each file with
its edge in one statement (s3_merge_files, which finds the dataset through the urn index);
GraphWriter needs a model item per file and per edge and two statements (merge_files, then
merge_part_of looking both ends up again), costing the listers' process more CPU under the same
GIL. Urn clashes are counted as skipped objects (skipped_urn_clashes), not dropped edges. The
figures are in docs/s3.md ("Why S3 writes through its own writer").
"""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import threading
import time
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.harvest.s3.client import describe_error
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.identity import (
    FoldRules,
    is_folder_marker,
    name_of,
    s3_dataset_urn_for_key,
    s3_file_urn,
)
from lineagegraph.pipeline import HarvestRun
from lineagegraph.values.pricing import SMALL_OBJECT_BYTES

log = logging.getLogger(__name__)

STANDARD = "STANDARD"
_DATASET_CACHE = 65_536  # dataset urns remembered as written in this run (bounded memory)
_DIRECTORY_CACHE = 65_536  # directory -> dataset urn, so folding runs once per directory


@dataclass(frozen=True, slots=True)
class S3Object:
    """One listed object, as S3 reports it (times in epoch ms; the Intelligent-Tiering access
    tier only from an inventory that has the field). No ETag: no query reads it, and every
    byte of a :File node counts at ten million objects (docs/benchmarks.md, bench_file_node)."""

    key: str
    size: int
    last_modified: int | None
    storage_class: str = STANDARD
    access_tier: str | None = None


NONCURRENT = "noncurrent"
DELETE_MARKER = "delete_marker"
UPLOAD = "upload"


@dataclass(frozen=True, slots=True)
class Hidden:
    """What S3 bills that is not a current object (docs/s3.md, "Hidden cost"): a noncurrent
    version, a delete marker (billed as its key's UTF-8 bytes at Standard), or an incomplete
    multipart upload (its parts' bytes, `parts` of them, begun at `initiated`, epoch ms)."""

    kind: str  # NONCURRENT, DELETE_MARKER or UPLOAD
    key: str
    size: int = 0
    storage_class: str = STANDARD
    parts: int = 0
    initiated: int | None = None


COUNTED_AS = {
    NONCURRENT: "noncurrent_versions",
    DELETE_MARKER: "delete_markers",
    UPLOAD: "incomplete_uploads",
}
"""The run counter of each kind of hidden cost."""
_CLASS_SAFE = re.compile(r"[^A-Za-z0-9_]")
HIDDEN_PREFIX = "hidden_"
"""Dataset properties holding hidden cost start with this (and only they do)."""
HIDDEN_SEEN = "hidden_seen"


def class_suffix(storage_class: str) -> str:
    """The storage class as a property-name suffix: bytes_STANDARD_IA, objects_GLACIER."""
    return _CLASS_SAFE.sub("_", storage_class)


@dataclass
class HiddenTallies:
    """The hidden cost a scan met, per dataset, as the dataset properties that store it (flat
    scalars: `hidden_noncurrent_bytes_STANDARD`, `hidden_delete_markers`, ...; see
    cypher/cost_hidden_usage.cypher), and every dataset the scan touched (whose hidden cost the
    scan vouches for: one it saw none of drops to none). Memory: a few counters per dataset."""

    props: dict[str, Counter[str]] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)

    @staticmethod
    def billed(item: Hidden) -> bool:
        """Whether S3 bills the item beside the objects: a noncurrent version of a folder
        marker (a zero-byte `dir/`) is no data, and is left out as the marker is."""
        return not (item.kind == NONCURRENT and is_folder_marker(item.key, item.size))

    def add(self, dataset: str, item: Hidden) -> None:
        counts = self.props.setdefault(dataset, Counter())
        if item.kind == DELETE_MARKER:
            counts["hidden_delete_markers"] += 1
            counts["hidden_delete_marker_bytes"] += len(item.key.encode("utf-8", "surrogatepass"))
            return
        base, suffix = f"{HIDDEN_PREFIX}{item.kind}", class_suffix(item.storage_class)
        counts[f"{base}_objects_{suffix}"] += 1
        counts[f"{base}_bytes_{suffix}"] += item.size
        if item.size < SMALL_OBJECT_BYTES:
            counts[f"{base}_small_objects_{suffix}"] += 1
            counts[f"{base}_small_bytes_{suffix}"] += item.size
        if item.kind == UPLOAD:
            counts[f"{base}_parts_{suffix}"] += item.parts
            if item.initiated is not None:
                oldest = f"{base}_oldest"
                if oldest not in counts or item.initiated < counts[oldest]:
                    counts[oldest] = item.initiated


@dataclass(frozen=True, slots=True)
class Page:
    """A batch of objects from one lister, `seen` at this time; `skipped` counts rows a reader
    dropped on purpose (keys outside the prefix); `hidden` holds what the bucket bills beside
    its current objects."""

    objects: list[S3Object]
    seen: int
    skipped: dict[str, int] = field(default_factory=dict)
    hidden: list[Hidden] = field(default_factory=list)


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


class FileWriter:
    """Turns pages into graph rows: each batch writes its datasets first (each once), then the
    files with their PART_OF edge (MATCHing the dataset, never MERGEing it per row)."""

    def __init__(
        self,
        store: GraphStore,
        rules: FoldRules,
        run: HarvestRun,
        stats: ScanStats,
        region: str | None = None,
    ):
        self.store = store
        self.region = region  # the bucket's, stored on its datasets (None: keep what they hold)
        self.rules = rules
        self.run = run
        self.stats = stats
        self._bucket = ""
        self._files: dict[str, dict[str, Any]] = {}  # by urn: a batch MERGEs each key once
        self._datasets: dict[str, dict[str, Any]] = {}
        self._written: OrderedDict[str, None] = OrderedDict()
        self._directories: dict[str, str] = {}
        self.hidden = HiddenTallies()

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
                self._new_dataset(dataset, page.seen)
            urn = s3_file_urn(bucket, obj.key)
            self._files[urn] = {
                "urn": urn, "dataset": dataset, "name": name_of(urn), "size": obj.size,
                "storage_class": obj.storage_class, "last_modified": obj.last_modified,
                "access_tier": obj.access_tier, "seen": page.seen,
            }  # fmt: skip
        for item in page.hidden:
            if not self.hidden.billed(item):
                continue
            dataset = self._dataset_of(bucket, item.key)
            if dataset not in self._written and dataset not in self._datasets:
                self._new_dataset(dataset, page.seen)
            self.hidden.add(dataset, item)
            counts[COUNTED_AS[item.kind]] += 1
        counts["objects"] = self.stats.objects
        counts["bytes"] = self.stats.bytes
        if len(self._files) >= self.store.batch_size:
            self.flush()

    def _new_dataset(self, urn: str, seen: int) -> None:
        self._datasets[urn] = {"urn": urn, "name": name_of(urn), "seen": seen}
        self.hidden.touched.add(urn)

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
            self.stats.urn_clashes += len(rows) - written
            self._files.clear()

    def _run_batches(self, name: str, rows: list[dict[str, Any]]) -> int:
        """Write `rows` in transactions of the store's batch size; returns the rows written."""
        written = 0
        for chunk in chunks(rows, self.store.batch_size):
            params = {"rows": chunk, "bucket": self._bucket}
            if name == "s3_merge_datasets":
                params["region"] = self.region
            result = self.store.run(name, params)
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
