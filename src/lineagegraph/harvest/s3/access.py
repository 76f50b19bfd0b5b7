"""`harvest s3-access`: direct S3 reads, from server access logs or CloudTrail data events, as
consumption by principals.

Each principal reading a bucket is a :Transformation (system `s3-access`, urn
`s3-access://{bucket}/{principal}`) that READS_FROM the datasets the keys it read fold into,
the edge carrying its read count and its first and last read. Reads are tallied per (bucket,
principal, dataset) while the files stream by, so memory grows with those, never with lines.

Counts stay exact however runs overlap or stop: a file's reads are added, and the file marked
counted, in one statement per batch of files (s3_access_count_reads.cypher); a file already
marked is never read again, and a file that cannot be read whole counts nothing (the run is
partial and the next one reads it). Incremental: a run reads the files delivered since the last
successful run's newest one, less `[s3] access_overlap_hours` (listings and deliveries lag); a
log delivered late is a new file, so the reads in it are counted whenever it arrives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph import identity
from lineagegraph.errors import ConfigError, HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.base import HarvestReport, Progress, Tick
from lineagegraph.harvest.s3.access_logs import AccessLogParser, Read, ReadProblems, file_reads
from lineagegraph.harvest.s3.client import describe_error, endpoint_of, make_client
from lineagegraph.identity import FoldRules
from lineagegraph.model import Asset, Transformation
from lineagegraph.pipeline import HarvestRun, harvest_run, last_watermark
from lineagegraph.settings import Settings

SYSTEM = "s3-access"
BATCH_PAIRS = 20_000  # (reader, dataset) pairs written in one statement at most
BATCH_FILES = 5_000  # log files marked in one statement at most
LOOKUP_KEYS = 5_000  # log files asked about at once
HOUR_MS = 3_600_000
DIRECTORIES_KEPT = 100_000  # (bucket, directory) -> dataset urns remembered


class LogFile(NamedTuple):
    """A log file to read: where (for marks and messages), when it was delivered, how to open."""

    location: str
    delivered: int  # epoch ms: LastModified, or a local file's mtime
    open: Callable[[], BinaryIO]


class DatasetFolder:
    """Keys to the datasets they fold into, as an S3 listing folds them
    (identity.s3_dataset_urn_for_key), each directory worked out once."""

    def __init__(self, rules: FoldRules) -> None:
        self.rules = rules
        self.known: dict[tuple[str, str], str] = {}  # (bucket, directory) -> dataset urn

    def dataset_of(self, bucket: str, key: str) -> str:
        directory = key[: key.rfind("/") + 1]
        urn = self.known.get((bucket, directory))
        if urn is None:
            urn = identity.s3_dataset_urn_for_key(bucket, key, self.rules)
            if len(self.known) >= DIRECTORIES_KEPT:
                self.known.clear()
            self.known[bucket, directory] = urn
        return urn


class ReadTallies:
    """Reads summed per (bucket, principal, dataset urn): [count, first, last] (a list: one is
    updated per line)."""

    def __init__(self, folder: DatasetFolder) -> None:
        self.folder = folder
        self.pairs: dict[tuple[str, str, str], list[int]] = {}
        self.reads = 0

    def add(self, read: Read) -> None:
        bucket, key, principal, at = read
        dataset = self.folder.known.get((bucket, key[: key.rfind("/") + 1]))
        if dataset is None:
            dataset = self.folder.dataset_of(bucket, key)
        pair = (bucket, principal, dataset)
        tally = self.pairs.get(pair)
        if tally is None:
            self.pairs[pair] = [1, at, at]
        else:
            tally[0] += 1
            if at < tally[1]:
                tally[1] = at
            elif at > tally[2]:
                tally[2] = at
        self.reads += 1

    def merge(self, other: ReadTallies) -> None:
        for pair, (count, first, last) in other.pairs.items():
            tally = self.pairs.get(pair)
            if tally is None:
                self.pairs[pair] = [count, first, last]
            else:
                tally[0] += count
                tally[1] = min(tally[1], first)
                tally[2] = max(tally[2], last)
        self.reads += other.reads


@dataclass
class AccessReport:
    """What one harvest of a log location did."""

    files: int = 0  # log files in the window
    counted_before: int = 0  # of those, already counted by an earlier run
    read_files: int = 0
    failed_files: list[str] = field(default_factory=list)
    reads: int = 0
    problems: ReadProblems = field(default_factory=ReadProblems)


# --- where the logs are -----------------------------------------------------------------------


def log_files(location: str, settings: Settings) -> Iterator[LogFile]:
    """The files under an `s3://bucket/prefix` or a local directory (or one file)."""
    if location.startswith("s3://"):
        bucket, _, prefix = location[len("s3://") :].partition("/")
        if not bucket:
            raise ConfigError(f"no bucket in the access-log location {location!r}")
        yield from _s3_files(make_client(settings.s3), bucket, prefix)
        return
    path = Path(location)
    if path.is_file():
        yield _local_file(path)
        return
    if not path.is_dir():
        raise HarvestError(f"no access-log directory or file at {location!r}")
    for file in sorted(path.rglob("*")):
        if file.is_file() and not file.name.startswith("."):
            yield _local_file(file)


def _local_file(path: Path) -> LogFile:
    return LogFile(str(path), int(os.stat(path).st_mtime * 1000), lambda: path.open("rb"))


def _s3_files(client: BaseClient, bucket: str, prefix: str) -> Iterator[LogFile]:
    paginator = client.get_paginator("list_objects_v2")
    try:
        for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
            for entry in page.get("Contents", ()):
                key = entry["Key"]
                if key.endswith("/"):
                    continue

                def opened(key: str = key) -> BinaryIO:
                    body = client.get_object(Bucket=bucket, Key=key)["Body"]
                    return body  # type: ignore[no-any-return]

                delivered = int(entry["LastModified"].timestamp() * 1000)
                yield LogFile(f"s3://{bucket}/{key}", delivered, opened)
    except (ClientError, BotoCoreError) as exc:
        raise HarvestError(
            describe_error(
                exc, f"listing s3://{bucket}/{prefix}", bucket, prefix, endpoint_of(client)
            )
        ) from exc


# --- the harvest -------------------------------------------------------------------------------


def harvest_s3_access(
    store: GraphStore,
    settings: Settings,
    location: str,
    *,
    full: bool = False,
    progress: Progress | None = None,
) -> tuple[HarvestRun, AccessReport]:
    """Count the reads in the log files at `location` that no run has counted yet, as one
    :HarvestRun; `full` reads every file there (those already counted are still skipped)."""
    scope = location if location.startswith("s3://") else str(Path(location).resolve())
    overlap = int(settings.s3.access_overlap_hours * HOUR_MS)
    report = AccessReport()
    folder = DatasetFolder(settings.identity.rules())
    with harvest_run(store, SYSTEM, scope) as (run, writer):
        since = None if full else last_watermark(store, SYSTEM, scope)
        start = None if since is None else since - overlap
        files = [f for f in log_files(location, settings) if start is None or f.delivered >= start]
        report.files = len(files)
        counted = _counted(store, [f.location for f in files])
        report.counted_before = len(counted)
        pending = sorted(
            (f for f in files if f.location not in counted), key=lambda f: (f.delivered, f.location)
        )
        parser = AccessLogParser()
        batch, marks = ReadTallies(folder), []
        for file in pending:
            tallies = ReadTallies(folder)  # a file counts whole or not at all
            try:
                with file.open() as stream:
                    for read in file_reads(stream, file.location, report.problems, parser):
                        tallies.add(read)
            except (OSError, EOFError, ClientError, BotoCoreError) as exc:
                report.failed_files.append(
                    f"{file.location}: unreadable, none of it counted: {exc}"
                )
                continue
            batch.merge(tallies)
            marks.append({"key": file.location, "scope": scope, "delivered": file.delivered,
                          "reads": tallies.reads})  # fmt: skip
            report.read_files += 1
            report.reads += tallies.reads
            if len(batch.pairs) >= BATCH_PAIRS or len(marks) >= BATCH_FILES:
                _write(store, writer, run, batch, marks)
                batch, marks = ReadTallies(folder), []
            if progress:
                progress(
                    Tick(location, report.read_files, "log files", detail=f"{report.reads:,} reads")
                )
        _write(store, writer, run, batch, marks)
        run.counts.update({
            "log_files": report.files, "log_files_counted_before": report.counted_before,
            "log_files_read": report.read_files, "log_files_failed": len(report.failed_files),
            "lines_skipped": report.problems.skipped,
        })  # fmt: skip
        if report.failed_files:
            run.error = (
                f"{len(report.failed_files)} log files unreadable; first: {report.failed_files[0]}"
            )
        else:
            run.watermark = max((f.delivered for f in files), default=since)
            if run.watermark is not None:
                store.run(
                    "s3_access_logs_forget", {"scope": scope, "before": run.watermark - overlap}
                )
    return run, report


def _counted(store: GraphStore, locations: list[str]) -> set[str]:
    """The locations among these that a run has counted (and marked) already."""
    found: set[str] = set()
    for start in range(0, len(locations), LOOKUP_KEYS):
        keys = locations[start : start + LOOKUP_KEYS]
        found.update(r["key"] for r in store.read("s3_access_logs_counted", {"keys": keys}))
    return found


def _write(
    store: GraphStore,
    writer: GraphWriter,
    run: HarvestRun,
    batch: ReadTallies,
    marks: list[dict[str, object]],
) -> None:
    """The readers and datasets of a batch (idempotent MERGEs), then its counts and marks in
    one statement."""
    if not marks:
        return
    newest: dict[tuple[str, str], int] = {}
    for (bucket, principal, dataset), (_, _, last) in batch.pairs.items():
        writer.add(Asset(dataset, "Dataset", "s3", identity.name_of(dataset), last,
                         {"bucket": bucket}))  # fmt: skip
        reader = (bucket, principal)
        newest[reader] = max(newest.get(reader, last), last)
    for (bucket, principal), last in newest.items():
        urn = identity.s3_access_transformation_urn(bucket, principal)
        writer.add(Transformation(urn, SYSTEM, principal, run.id, last, principal))
    writer.flush()
    rows = [
        {"t": identity.s3_access_transformation_urn(bucket, principal), "asset": dataset,
         "count": count, "first": first, "last": last}
        for (bucket, principal, dataset), (count, first, last) in batch.pairs.items()
    ]  # fmt: skip
    records = store.run("s3_access_count_reads", {"rows": rows, "logs": marks}).records()
    written = int(records[0]["written"]) if records else 0
    run.counts["merge_reads_from"] += written
    run.counts["reads_counted"] += batch.reads
    if written < len(rows):
        run.counts["dropped_reads_from"] += len(rows) - written


def summary(location: str, run: HarvestRun, report: AccessReport) -> str:
    """The line a person reads about a harvest of one log location."""
    return (
        f"{location}: {report.read_files:,} log files read ({report.counted_before:,} counted "
        f"before), {report.reads:,} reads by {run.counts['merge_transformations']:,} readers, "
        f"{report.problems.skipped:,} lines skipped, {len(report.failed_files):,} files "
        f"unreadable; run {run.id}: {run.status}"
    )


@dataclass
class S3AccessHarvester:
    """`harvest s3-access`: the S3 server access logs and CloudTrail data-event files at each
    location of [s3] access_logs (or `locations`), only those no run has counted yet."""

    locations: tuple[str, ...] = ()
    full: bool = False
    name = "s3-access"
    section = "s3"
    needs = "[s3] access_logs (s3://bucket/prefix or directories of access logs)"

    def not_configured(self, settings: Settings) -> str | None:
        return None if self.locations or settings.s3.access_logs else "no [s3] access_logs"

    def run(
        self, store: GraphStore, settings: Settings, *, progress: Progress
    ) -> list[HarvestReport]:
        locations = self.locations or tuple(settings.s3.access_logs)
        if not locations:
            raise ConfigError("give a log location, or list them in the s3.access_logs setting")
        reports = []
        for location in locations:
            run, report = harvest_s3_access(
                store, settings, location, full=self.full, progress=progress
            )
            line = summary(location, run, report)
            problems = report.problems.named
            reports.append(HarvestReport.of_run(run, problems, report.failed_files, line))
        return reports
