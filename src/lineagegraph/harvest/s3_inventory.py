"""S3 Inventory harvester, for buckets too big to list: read a report's manifest and data files.

Trust comes first: the manifest must match its ``manifest.checksum``, and each data file is
downloaded to a temporary file and checked against the size and MD5 the manifest states before
any of its rows is written. So a corrupt or mismatched report writes nothing wrong. A data file
that is missing, mismatched or unreadable is skipped, and a row that cannot be read (wrong field
count, bad size or date, a key that is not URL-encoded UTF-8) is skipped and reported by data
file and row; the other files and rows are written, and the run is 'partial' and deletes
nothing (an object whose row was skipped is still in the bucket).

An inventory is a snapshot taken at its ``creationTimestamp``: that time is the sighting time of
its objects and the start of its scan, so a listing newer than the report is never undone.

Keys are URL-encoded in CSV reports only (AWS: "When you use the CSV file format, the key name
is URL-encoded"); Parquet keys are used as stored.

For lakes too big for one node per object, ``inventory_rollups_with_spark`` reads the data files
in Spark tasks (each with its own boto3 client, so no Hadoop S3 connector is needed) and tallies
them per dataset, storage class, access tier and exclusion; ``harvest_s3_inventory_spark``
writes those tallies as :Rollup nodes, which the orphan and cost reports price exactly.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import re
import sys
import tempfile
import zlib
from collections import Counter
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph.errors import HarvestError
from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.identity import (
    FoldRules,
    IdentityError,
    decode_inventory_key,
    is_folder_marker,
    name_of,
    s3_dataset_urn_for_key,
    s3_file_urn,
)
from lineagegraph.pipeline import harvest_run
from lineagegraph.settings import S3Settings, Settings
from lineagegraph.values.globs import Glob, exclusion_globs
from lineagegraph.values.pricing import Tally

from .s3 import (
    STANDARD,
    SYSTEM,
    FileWriter,
    Page,
    S3Object,
    S3Report,
    ScanProgress,
    ScanStats,
    Scope,
    Task,
    describe_error,
    endpoint_of,
    finished,
    live_objects,
    make_client,
    scan_and_settle,
    write_rollups,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FORMATS = ("CSV", "Parquet")
INTELLIGENT_TIERING = "INTELLIGENT_TIERING"  # the class whose objects have an access tier
_TIER_NAMES = {  # the API's longer names (PutBucketIntelligentTieringConfiguration's) too
    "FREQUENT_ACCESS": "FREQUENT", "INFREQUENT_ACCESS": "INFREQUENT",
    "ARCHIVE_ACCESS": "ARCHIVE", "DEEP_ARCHIVE_ACCESS": "DEEP_ARCHIVE",
}  # fmt: skip
REQUIRED_FIELDS = ("bucket", "key", "size")
REPORTED_ROWS = 5  # bad rows named in a data file's error; all are counted
_CHUNK = 1 << 20
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class DataFile:
    key: str
    size: int
    md5: str


@dataclass(frozen=True, slots=True)
class Manifest:
    """A verified inventory manifest. `columns` (CSV only) are snake_case, in file order."""

    url: str
    source_bucket: str
    destination_bucket: str
    created: int
    file_format: str
    columns: tuple[str, ...]
    files: tuple[DataFile, ...]

    def file_url(self, data_file: DataFile) -> str:
        return f"s3://{self.destination_bucket}/{data_file.key}"


def split_s3_url(url: str) -> tuple[str, str]:
    """(bucket, key) of an ``s3://bucket/key`` URL."""
    if not url.startswith("s3://"):
        raise HarvestError(f"--manifest must be an s3:// URL of a manifest.json (got {url!r})")
    bucket, _, key = url[len("s3://") :].partition("/")
    if not bucket or not key:
        raise HarvestError(f"--manifest needs a bucket and a key: {url!r}")
    return bucket, key


def snake_case(field_name: str) -> str:
    """CSV fileSchema names as Parquet spells them: LastModifiedDate -> last_modified_date."""
    return _CAMEL.sub("_", field_name.strip()).lower()


# --- the manifest --------------------------------------------------------------------------


def read_manifest(client: BaseClient, url: str) -> Manifest:
    """Fetch, verify against manifest.checksum, and validate an inventory manifest."""
    bucket, key = split_s3_url(url)
    if not key.endswith(".json"):
        raise HarvestError(f"--manifest must name the report's manifest.json (got {url!r})")
    endpoint = endpoint_of(client)
    body = _get(client, bucket, key, endpoint)
    checksum_key = key.removesuffix(".json") + ".checksum"
    expected = _get(client, bucket, checksum_key, endpoint).decode("ascii", "replace").strip()
    actual = hashlib.md5(body, usedforsecurity=False).hexdigest()
    if actual.lower() != expected.lower():
        raise HarvestError(
            f"manifest {url} does not match s3://{bucket}/{checksum_key} (MD5 {actual}, expected "
            f"{expected[:64]}): the report is corrupt or still being written; nothing was read"
        )
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise HarvestError(f"manifest {url} is not valid JSON: {exc}") from None
    return _validate(url, data)


def _get(client: BaseClient, bucket: str, key: str, endpoint: str) -> bytes:
    try:
        return client.get_object(Bucket=bucket, Key=key)["Body"].read()  # type: ignore[no-any-return]
    except (ClientError, BotoCoreError) as exc:
        raise HarvestError(
            describe_error(exc, f"reading s3://{bucket}/{key}", bucket, key, endpoint)
        ) from None


def _validate(url: str, data: Any) -> Manifest:
    if not isinstance(data, dict):
        raise HarvestError(f"manifest {url} is not a JSON object")
    missing = [k for k in ("sourceBucket", "destinationBucket", "fileFormat", "files",
                           "creationTimestamp") if k not in data]  # fmt: skip
    if missing:
        raise HarvestError(
            f"manifest {url} lacks {', '.join(missing)}: not an S3 Inventory manifest"
        )
    file_format = next((f for f in FORMATS if f.lower() == str(data["fileFormat"]).lower()), None)
    if file_format is None:
        raise HarvestError(
            f"manifest {url} has fileFormat {data['fileFormat']!r}; lineagegraph reads CSV and "
            "Parquet inventories: configure the report in one of those"
        )
    columns: tuple[str, ...] = ()
    if file_format == "CSV":
        columns = tuple(snake_case(c) for c in str(data.get("fileSchema", "")).split(","))
        lacking = [c for c in REQUIRED_FIELDS if c not in columns]
        if lacking:
            raise HarvestError(
                f"manifest {url} fileSchema lacks {', '.join(lacking)}: Bucket, Key and Size "
                "are needed (Size is an optional field of the inventory configuration)"
            )
    try:
        created = int(data["creationTimestamp"])
        files = tuple(
            DataFile(str(f["key"]), int(f["size"]), str(f["MD5checksum"])) for f in data["files"]
        )
    except (TypeError, ValueError, KeyError) as exc:
        raise HarvestError(
            f"manifest {url} has a malformed creationTimestamp or files entry ({exc!r}); each "
            "file needs key, size and MD5checksum"
        ) from None
    destination = str(data["destinationBucket"]).removeprefix("arn:aws:s3:::")
    return Manifest(url, str(data["sourceBucket"]), destination, created, file_format, columns,
                    files)  # fmt: skip


def check_data_files(client: BaseClient, manifest: Manifest, parallelism: int) -> None:
    """Every data file exists with the size the manifest states, before anything is written."""
    endpoint = endpoint_of(client)

    def head(data_file: DataFile) -> str | None:
        where = manifest.file_url(data_file)
        try:
            size = client.head_object(Bucket=manifest.destination_bucket, Key=data_file.key)[
                "ContentLength"
            ]
        except (ClientError, BotoCoreError) as exc:
            return describe_error(
                exc, f"checking {where}", manifest.destination_bucket, data_file.key, endpoint
            )
        if size != data_file.size:
            return (
                f"inventory data file {where} is {size:,} bytes, manifest {manifest.url} says "
                f"{data_file.size:,}: the report is incomplete or was overwritten"
            )
        return None

    with ThreadPoolExecutor(max_workers=parallelism) as pool:
        problems = [p for p in pool.map(head, manifest.files) if p]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise HarvestError(problems[0] + more + "; nothing was written")


# --- data files ----------------------------------------------------------------------------


def data_file_pages(
    client: BaseClient, manifest: Manifest, data_file: DataFile, prefix: str, page_size: int
) -> Generator[Page, None, None]:
    """The objects of one verified data file in pages, seen at the report's creation time.

    Old versions, delete markers and keys outside `prefix` are skipped and counted. Bad rows
    are skipped and counted too, and once the file is read a HarvestError names them, so the
    scope counts as incomplete; a file that cannot be read at all is counted as failed.
    """
    bad: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="lineagegraph-inventory-") as tmp:
            path = Path(tmp) / "data"
            download_verified(client, manifest, data_file, path)
            objects: list[S3Object] = []
            skipped: Counter[str] = Counter()
            for item in _objects(path, manifest, data_file, prefix, page_size):
                if isinstance(item, BadRow):
                    skipped["skipped_bad_rows"] += 1
                    bad.append(str(item))
                    continue
                if isinstance(item, str):
                    skipped[item] += 1
                    continue
                objects.append(item)
                if len(objects) >= page_size:
                    yield Page(objects, manifest.created, dict(skipped))
                    objects, skipped = [], Counter()
            if objects or skipped:
                yield Page(objects, manifest.created, dict(skipped))
    except Exception:
        yield Page([], manifest.created, {"inventory_files_failed": 1})
        raise
    if bad:
        more = f"; and {len(bad) - REPORTED_ROWS:,} more" if len(bad) > REPORTED_ROWS else ""
        raise HarvestError(
            f"inventory data file {manifest.file_url(data_file)}: {len(bad):,} rows skipped: "
            f"{'; '.join(bad[:REPORTED_ROWS])}{more}"
        )


def download_verified(
    client: BaseClient, manifest: Manifest, data_file: DataFile, path: Path
) -> None:
    """Stream a data file to `path`, checking its size and MD5 against the manifest."""
    digest = hashlib.md5(usedforsecurity=False)
    size = 0
    where = manifest.file_url(data_file)
    try:
        body = client.get_object(Bucket=manifest.destination_bucket, Key=data_file.key)["Body"]
        with path.open("wb") as out:
            for chunk in body.iter_chunks(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
    except (ClientError, BotoCoreError) as exc:
        bucket, endpoint = manifest.destination_bucket, endpoint_of(client)
        reason = describe_error(exc, f"reading {where}", bucket, data_file.key, endpoint)
        raise HarvestError(reason) from None
    if digest.hexdigest().lower() != data_file.md5.lower() or size != data_file.size:
        raise HarvestError(
            f"inventory data file {where} ({size:,} bytes, MD5 {digest.hexdigest()}) does not "
            f"match manifest {manifest.url} ({data_file.size:,} bytes, MD5 {data_file.md5}): "
            "corrupt or from another report; nothing from it was written"
        )


class BadRow(ValueError):
    """A data file row that cannot be read: skipped, counted, and named in the file's error."""


def _objects(
    path: Path, manifest: Manifest, data_file: DataFile, prefix: str, page_size: int
) -> Iterator[S3Object | str | BadRow]:
    """Each current object; for a row skipped on purpose the counter naming why; for a row
    that cannot be read, a BadRow saying which and why."""
    where = manifest.file_url(data_file)
    rows = (
        _csv_rows(path, manifest.columns, where)
        if manifest.file_format == "CSV"
        else _parquet_rows(path, where, page_size)
    )
    for number, row in rows:
        try:
            if isinstance(row, BadRow):
                raise row
            yield _object(row, manifest, prefix)
        except BadRow as exc:
            yield BadRow(f"row {number}: {exc}")


def _object(row: dict[str, Any], manifest: Manifest, prefix: str) -> S3Object | str:
    if row.get("is_latest") is False:
        return "skipped_old_versions"
    if row.get("is_delete_marker") is True:
        return "skipped_delete_markers"
    if row["bucket"] != manifest.source_bucket:
        raise BadRow(
            f"lists bucket {row['bucket']!r}, but manifest {manifest.url} is for "
            f"{manifest.source_bucket!r}"
        )
    key = row["key"]
    if not isinstance(key, str) or not key:
        raise BadRow(f"Key {key!r} is not an object key")
    if not key.startswith(prefix):
        return "skipped_outside_prefix"
    size = row["size"]
    if type(size) is not int or size < 0:
        raise BadRow(f"Size {size!r} is not a number of bytes")
    storage_class = row.get("storage_class") or STANDARD
    return S3Object(
        key=key,
        size=size,
        last_modified=row.get("last_modified_date"),
        storage_class=storage_class,
        access_tier=_access_tier(row) if storage_class == INTELLIGENT_TIERING else None,
    )


def _access_tier(row: dict[str, Any]) -> str | None:
    """The Intelligent-Tiering access tier as the price table names it (FREQUENT, ...)."""
    tier = str(row.get("intelligent_tiering_access_tier") or "").strip().upper()
    return _TIER_NAMES.get(tier, tier) or None


def _csv_rows(
    path: Path, columns: tuple[str, ...], where: str
) -> Iterator[tuple[int, dict[str, Any] | BadRow]]:
    """Each row by number; bytes that are not UTF-8 cost their row only (surrogateescape)."""
    number = 0
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape", newline="") as text:
            reader = csv.reader(text)
            while True:
                number += 1
                try:
                    fields = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:  # the reader starts afresh at the next row
                    yield number, BadRow(f"not CSV: {exc}")
                    continue
                try:
                    yield number, _csv_row(fields, columns)
                except BadRow as exc:
                    yield number, exc
    except (OSError, EOFError, zlib.error) as exc:
        raise HarvestError(
            f"inventory data file {where} is not a gzip CSV (after row {number - 1}): {exc}"
        ) from None


def _csv_row(fields: list[str], columns: tuple[str, ...]) -> dict[str, Any]:
    if len(fields) != len(columns):
        raise BadRow(f"{len(fields)} fields, the manifest's fileSchema has {len(columns)}")
    raw = dict(zip(columns, fields, strict=True))
    if not all(field.isascii() or _is_utf8(field) for field in fields):
        raise BadRow("not UTF-8")
    try:
        key = decode_inventory_key(raw["key"])
    except IdentityError as exc:
        raise BadRow(str(exc)) from None
    size = raw["size"]
    if not size.isdigit():  # isdigit: no sign, no spaces, no underscores
        raise BadRow(f"Size {size!r} is not a number of bytes")
    return {
        "bucket": raw["bucket"],
        "key": key,
        "size": int(size),
        "last_modified_date": _iso_ms(raw.get("last_modified_date")),
        "storage_class": raw.get("storage_class") or None,
        "intelligent_tiering_access_tier": raw.get("intelligent_tiering_access_tier") or None,
        "is_latest": _flag(raw.get("is_latest")),
        "is_delete_marker": _flag(raw.get("is_delete_marker")),
    }


def _is_utf8(text: str) -> bool:
    """False when surrogateescape let an undecodable byte through."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _flag(value: str | None) -> bool | None:
    return None if not value else value.strip().lower() == "true"


def _iso_ms(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        raise BadRow(f"LastModifiedDate {value!r} is not an ISO 8601 time") from None


def _parquet_rows(path: Path, where: str, batch_size: int) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow ships with the dev and spark extras
        raise HarvestError(
            f"reading the Parquet inventory {where} needs pyarrow: pip install pyarrow"
        ) from None
    wanted = ("bucket", "key", "size", "last_modified_date", "storage_class",
              "intelligent_tiering_access_tier", "is_latest", "is_delete_marker")  # fmt: skip
    number = 0
    try:
        parquet = pq.ParquetFile(path)
        names = set(parquet.schema_arrow.names)
        lacking = [c for c in REQUIRED_FIELDS if c not in names]
        if lacking:
            raise HarvestError(f"inventory data file {where} has no {', '.join(lacking)} column")
        for batch in parquet.iter_batches(
            batch_size=batch_size, columns=[c for c in wanted if c in names]
        ):
            columns = {}
            for name in batch.schema.names:
                column = batch.column(name)
                if pa.types.is_timestamp(column.type):
                    column = column.cast(pa.timestamp("ms", tz=column.type.tz)).cast(pa.int64())
                columns[name] = column.to_pylist()
            for values in zip(*columns.values(), strict=True):
                number += 1
                yield number, dict(zip(columns, values, strict=True))
    except (OSError, pa.ArrowException) as exc:
        raise HarvestError(
            f"inventory data file {where} is not readable Parquet (after row {number}): {exc}"
        ) from None


# --- harvests ------------------------------------------------------------------------------


def harvest_s3_inventory(
    store: GraphStore,
    settings: Settings,
    manifest_url: str,
    prefix: str = "",
    *,
    allow_mass_delete: bool = False,
    progress: ScanProgress | None = None,
) -> S3Report:
    """Harvest one S3 Inventory report into :File and :Dataset nodes, as one :HarvestRun.

    `prefix` is the inventory configuration's filter (the manifest does not say it): the scope
    a complete report vouches for, and so the scope of its soft deletes.
    """
    client = make_client(settings.s3)
    manifest = read_manifest(client, manifest_url)
    scope = Scope(manifest.source_bucket, prefix)
    tasks = [
        Task(
            scope,
            f"reading {manifest.file_url(f)}",
            f.key,
            partial(data_file_pages, client, manifest, f, prefix, settings.s3.page_size),
        )
        for f in manifest.files
    ]
    with harvest_run(store, SYSTEM, scope.url) as (run, _):
        run.counts["inventory_files"] = len(manifest.files)
        report = scan_and_settle(
            store, run, settings, tasks, [scope], manifest.created, endpoint_of(client),
            allow_mass_delete=allow_mass_delete, progress=progress,
        )  # fmt: skip
    return finished(report, run)


# --- Spark ---------------------------------------------------------------------------------

RollupKey = tuple[str, str, str | None, bool]
"""A roll-up's dataset urn, storage class, access tier (or None) and whether it is excluded."""
Rollups = dict[str, dict[str, tuple[int, int]]]
"""Objects and bytes per dataset and storage class (the :Dataset counters)."""


@dataclass
class InventoryTallies:
    """What Spark makes of an inventory: tallies per roll-up key, the objects kept one by one,
    and the run's counters (objects, bytes, folder markers, skipped rows)."""

    rollups: dict[RollupKey, Tally] = field(default_factory=dict)
    objects: list[tuple[str, S3Object]] = field(default_factory=list)  # (dataset, object)
    counters: Counter[str] = field(default_factory=Counter)

    def by_class(self) -> Rollups:
        """Objects and bytes per dataset and storage class, roll-ups and objects kept one by
        one together: the :Dataset counters."""
        per: Rollups = {}
        counted = [(dataset, storage_class, t.objects, t.bytes)
                   for (dataset, storage_class, _, _), t in self.rollups.items()]  # fmt: skip
        counted += [(dataset, obj.storage_class, 1, obj.size) for dataset, obj in self.objects]
        for dataset, storage_class, objects, size in counted:
            o, b = per.setdefault(dataset, {}).get(storage_class, (0, 0))
            per[dataset][storage_class] = (o + objects, b + size)
        return per


def inventory_rollups_with_spark(
    spark: SparkSession,
    settings: S3Settings,
    manifest: Manifest,
    prefix: str,
    rules: FoldRules,
    excludes: Sequence[Glob] = (),
    singles: frozenset[str] = frozenset(),
) -> InventoryTallies:
    """Tally a verified manifest in Spark tasks: one task per data file downloads, verifies and
    tallies it (`Tally.add`, the arithmetic the graph's tallies feed too); Spark merges the
    tallies across files. Objects whose urn is in `singles` come back one by one instead.
    """
    found = InventoryTallies()
    if not manifest.files:
        return found
    job = partial(_tally_data_file, settings, manifest, prefix, rules, tuple(excludes), singles)
    rdd = spark.sparkContext.parallelize(list(manifest.files), len(manifest.files))
    try:
        pairs = rdd.flatMap(job).reduceByKey(_combine).collect()
    except Exception as exc:  # Py4J/PythonException: the task's own message is in the text
        raise HarvestError(
            f"Spark could not aggregate {manifest.url}: {_task_error(exc)}"
        ) from None
    for (kind, *key), value in pairs:
        if kind == "rollup":
            found.rollups[tuple(key)] = value  # type: ignore[index]
            found.counters["objects"] += value.objects
            found.counters["bytes"] += value.bytes
        elif kind == "object":
            found.objects.append(value)
            found.counters["objects"] += 1
            found.counters["bytes"] += value[1].size
        else:
            found.counters[key[0]] += value
    return found


def _tally_data_file(
    settings: S3Settings,
    manifest: Manifest,
    prefix: str,
    rules: FoldRules,
    excludes: tuple[Glob, ...],
    singles: frozenset[str],
    data_file: DataFile,
) -> list[tuple[tuple[Any, ...], Any]]:
    """Runs in a Spark task: one data file as (("rollup", *RollupKey), Tally),
    (("object", urn), S3Object) and (("count", counter), n) pairs."""
    client = make_client(settings)
    counts: Counter[str] = Counter()
    tallies: dict[tuple[Any, ...], Tally] = {}
    objects: list[tuple[tuple[Any, ...], Any]] = []
    for page in data_file_pages(client, manifest, data_file, prefix, settings.page_size):
        counts.update(page.skipped)
        for obj in page.objects:
            if is_folder_marker(obj.key, obj.size):
                counts["folder_markers"] += 1
                continue
            urn = s3_file_urn(manifest.source_bucket, obj.key)
            dataset = s3_dataset_urn_for_key(manifest.source_bucket, obj.key, rules)
            if urn in singles:
                objects.append((("object", urn), (dataset, obj)))
                continue
            excluded = any(glob.matches(obj.key) for glob in excludes)
            key = ("rollup", dataset, obj.storage_class, obj.access_tier, excluded)
            tallies.setdefault(key, Tally()).add(obj.size, obj.last_modified)
    return [*tallies.items(), *objects, *((("count", c), n) for c, n in counts.items())]


def _combine(a: Any, b: Any) -> Any:
    """Merge two values of one key: tallies and counts add up; an object is kept once."""
    if isinstance(a, Tally):
        return a.merge(b)
    if isinstance(a, int):
        return a + b
    return a


def _task_error(exc: Exception) -> str:
    """Our own message out of a Spark task failure's long Java/Python text."""
    text = str(exc)
    found = re.findall(r"(?:HarvestError|IdentityError): ([^\n]+)", text)
    if found:
        return found[-1]
    return text.strip().splitlines()[0][:500] if text.strip() else type(exc).__name__


def harvest_s3_inventory_spark(
    store: GraphStore,
    settings: Settings,
    manifest_url: str,
    spark: SparkSession,
    prefix: str = "",
) -> S3Report:
    """Harvest an inventory tallied by Spark: each dataset with its counters, and :Rollup nodes
    that the orphan and cost reports price as exactly as objects. Objects that lineage reads
    one by one stay :File nodes, so their consumption stays per object. Nothing is written
    unless the whole aggregation succeeded; nothing is soft-deleted (there are no :File nodes
    to delete: a later harvest of the scope replaces the roll-ups)."""
    client = make_client(settings.s3)
    manifest = read_manifest(client, manifest_url)
    scope = Scope(manifest.source_bucket, prefix)
    excludes = exclusion_globs(settings.reports.exclude)
    with harvest_run(store, SYSTEM, scope.url) as (run, _):
        singles = _objects_read_one_by_one(store, scope, manifest.created)
        check_data_files(client, manifest, settings.s3.parallelism)
        found = inventory_rollups_with_spark(
            spark, settings.s3, manifest, prefix, settings.identity.rules(), excludes, singles
        )
        per_dataset = found.by_class()
        rows = [
            {"urn": urn, "system": SYSTEM, "name": name_of(urn), "seen": manifest.created,
             "props": {"bucket": manifest.source_bucket}}
            for urn in per_dataset
        ]  # fmt: skip
        datasets = store.write_batches("merge_datasets", rows, ("urn",))
        if found.objects:  # after its datasets: a file's PART_OF matches its dataset
            kept = [obj for _, obj in found.objects]
            urns = [s3_file_urn(scope.bucket, obj.key) for obj in kept]
            store.run("s3_datasets_to_objects", {"urns": urns})
            writer = FileWriter(store, settings.identity.rules(), run, ScanStats())
            writer.add(scope.bucket, Page(kept, manifest.created))
            writer.flush()
        write_rollups(store, per_dataset)
        write_inventory_rollups(store, scope, manifest.created, excludes, found.rollups)
        for name, n in found.counters.items():  # the whole inventory's, not the writer's
            run.counts[name] = n
        run.counts["inventory_files"] = len(manifest.files)
        run.counts["datasets"] += datasets
        run.watermark = manifest.created
    stats = ScanStats(found.counters["objects"], found.counters["bytes"],
                      found.counters["folder_markers"])  # fmt: skip
    return S3Report(run.id, run.scope, run.status, stats, datasets=run.counts["datasets"])


def _objects_read_one_by_one(store: GraphStore, scope: Scope, created: int) -> frozenset[str]:
    """The urns under the scope that lineage reads on their own. Refuses a report older than
    the scope's roll-ups, and a scope already harvested object by object (its roll-ups would
    count those objects a second time)."""
    [row] = store.read("s3_scope_rollups_newest", {"bucket": scope.bucket, "prefix": scope.prefix})
    if row["newest"] is not None and int(row["newest"]) > created:
        raise HarvestError(
            f"{scope.url} already has roll-ups of a newer inventory (created "
            f"{_iso(int(row['newest']))}) than this one ({_iso(created)}): harvest the newest "
            "report"
        )
    root = s3_file_urn(scope.bucket, scope.prefix) if scope.prefix else f"s3://{scope.bucket}/"
    found = store.read("s3_scope_read_objects", {"root": root})
    present = live_objects(store, scope)
    if present > sum(1 for row in found if row["object"]):
        raise HarvestError(
            f"{scope.url} holds {present:,} objects harvested one by one (harvest s3, or "
            "s3-inventory without --spark); roll-ups of it would count them twice. Keep "
            "harvesting this scope without --spark, or harvest it with --spark into another "
            "graph (--graph)"
        )
    return frozenset(row["urn"] for row in found)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_inventory_rollups(
    store: GraphStore,
    scope: Scope,
    seen: int,
    excludes: Sequence[Glob],
    rollups: dict[RollupKey, Tally],
) -> None:
    """Replace the scope's roll-ups with these (reports --as-of an earlier time still read the
    ones they replace)."""
    params = {"bucket": scope.bucket, "prefix": scope.prefix, "seen": seen}
    store.run("s3_supersede_rollups", params)
    rows = [
        {"dataset": dataset, "storage_class": storage_class, "access_tier": tier,
         "excluded": excluded, "objects": t.objects, "bytes": t.bytes,
         "small_objects": t.small_objects, "small_bytes": t.small_bytes,
         "oldest_modified": t.oldest, "newest_modified": t.newest}
        for (dataset, storage_class, tier, excluded), t in rollups.items()
    ]  # fmt: skip
    texts = "\n".join(glob.text for glob in excludes)
    for chunk in chunks(rows, store.batch_size):
        store.run("s3_write_rollups", {**params, "rows": chunk, "excludes": texts})


def spark_session(master: str) -> SparkSession:
    """A Spark session for `--spark MASTER`. Local masters run their Python tasks with this
    interpreter (PySpark reads only PYSPARK_PYTHON for that, else `python3`, which may lack
    lineagegraph)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise HarvestError("--spark needs pyspark: pip install 'lineagegraph[spark]'") from None
    builder = SparkSession.builder.master(master).appName("lineagegraph-s3-inventory")
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.ui.enabled", "false")
    return builder.getOrCreate()
