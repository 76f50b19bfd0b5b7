"""S3 Inventory reports, for buckets too big to list: a report's manifest and data files as pages.

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
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import re
import tempfile
import zlib
from collections import Counter
from collections.abc import Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph.errors import HarvestError
from lineagegraph.harvest.s3.client import describe_error, endpoint_of
from lineagegraph.harvest.s3.scan import (
    DELETE_MARKER,
    NONCURRENT,
    STANDARD,
    Hidden,
    Page,
    S3Object,
)
from lineagegraph.identity import IdentityError, decode_inventory_key

FORMATS = ("CSV", "Parquet")
INTELLIGENT_TIERING = "INTELLIGENT_TIERING"  # the class whose objects have an access tier
_TIER_NAMES = {  # the API's longer names (PutBucketIntelligentTieringConfiguration's) too
    "FREQUENT_ACCESS": "FREQUENT", "INFREQUENT_ACCESS": "INFREQUENT",
    "ARCHIVE_ACCESS": "ARCHIVE", "DEEP_ARCHIVE_ACCESS": "DEEP_ARCHIVE",
}  # fmt: skip
REQUIRED_FIELDS = ("bucket", "key", "size")
REPORTED_ROWS = 5  # bad rows named in a data file's error; all are counted
_CHUNK = 1 << 20
_SKIPPED_AS = {NONCURRENT: "skipped_old_versions", DELETE_MARKER: "skipped_delete_markers"}
"""Versions that are not current objects: skipped as objects (and counted so), kept as hidden
cost."""
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
    missing = [
        k
        for k in ("sourceBucket", "destinationBucket", "fileFormat", "files", "creationTimestamp")
        if k not in data
    ]
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
    return Manifest(
        url, str(data["sourceBucket"]), destination, created, file_format, columns, files
    )


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

    Keys outside `prefix` are skipped and counted; old versions and delete markers are counted
    as skipped objects and carried as the page's hidden cost. Bad rows
    are skipped and counted too, and once the file is read a HarvestError names them, so the
    scope counts as incomplete; a file that cannot be read at all is counted as failed.
    """
    bad: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="lineagegraph-inventory-") as tmp:
            path = Path(tmp) / "data"
            download_verified(client, manifest, data_file, path)
            objects: list[S3Object] = []
            hidden: list[Hidden] = []
            skipped: Counter[str] = Counter()
            for item in _objects(path, manifest, data_file, prefix, page_size):
                if isinstance(item, BadRow):
                    skipped["skipped_bad_rows"] += 1
                    bad.append(str(item))
                    continue
                if isinstance(item, str):
                    skipped[item] += 1
                    continue
                if isinstance(item, Hidden):
                    skipped[_SKIPPED_AS[item.kind]] += 1
                    hidden.append(item)
                else:
                    objects.append(item)
                if len(objects) + len(hidden) >= page_size:
                    yield Page(objects, manifest.created, dict(skipped), hidden)
                    objects, hidden, skipped = [], [], Counter()
            if objects or hidden or skipped:
                yield Page(objects, manifest.created, dict(skipped), hidden)
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
) -> Iterator[S3Object | Hidden | str | BadRow]:
    """Each current object, old version or delete marker; for a row skipped on purpose the
    counter naming why; for a row that cannot be read, a BadRow saying which and why."""
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


def _object(row: dict[str, Any], manifest: Manifest, prefix: str) -> S3Object | Hidden | str:
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
    if row.get("is_delete_marker") is True:  # current or not: it has no size, only its key
        return Hidden(DELETE_MARKER, key)
    size = row["size"]
    if type(size) is not int or size < 0:
        raise BadRow(f"Size {size!r} is not a number of bytes")
    storage_class = row.get("storage_class") or STANDARD
    if row.get("is_latest") is False:
        return Hidden(NONCURRENT, key, size, storage_class)
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
    delete_marker = _flag(raw.get("is_delete_marker"))
    if not size.isdigit() and not (delete_marker and not size):  # a delete marker has none
        raise BadRow(f"Size {size!r} is not a number of bytes")  # isdigit: no sign, no spaces
    return {
        "bucket": raw["bucket"],
        "key": key,
        "size": int(size or 0),
        "last_modified_date": _iso_ms(raw.get("last_modified_date")),
        "storage_class": raw.get("storage_class") or None,
        "intelligent_tiering_access_tier": raw.get("intelligent_tiering_access_tier") or None,
        "is_latest": _flag(raw.get("is_latest")),
        "is_delete_marker": delete_marker,
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
    wanted = (
        "bucket",
        "key",
        "size",
        "last_modified_date",
        "storage_class",
        "intelligent_tiering_access_tier",
        "is_latest",
        "is_delete_marker",
    )
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
