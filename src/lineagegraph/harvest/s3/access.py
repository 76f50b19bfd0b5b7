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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph import identity
from lineagegraph.errors import ConfigError, HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.base import HarvestReport, Progress, Tick
from lineagegraph.harvest.s3.access_logs import ReadProblems
from lineagegraph.harvest.s3.access_spark import batches_with_spark
from lineagegraph.harvest.s3.access_tally import Batch, LogFile, Readers, tally_batches
from lineagegraph.harvest.s3.access_workers import batches_in_workers
from lineagegraph.harvest.s3.client import describe_error, endpoint_of, make_client
from lineagegraph.harvest.s3.inventory_spark import spark_session
from lineagegraph.model import Asset, Transformation
from lineagegraph.pipeline import HarvestRun, harvest_run, last_watermark
from lineagegraph.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SYSTEM = identity.S3_ACCESS_SYSTEM
LOOKUP_KEYS = 5_000  # log files asked about at once
HOUR_MS = 3_600_000


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
    return LogFile(str(path), int(os.stat(path).st_mtime * 1000))


def _s3_files(client: BaseClient, bucket: str, prefix: str) -> Iterator[LogFile]:
    paginator = client.get_paginator("list_objects_v2")
    try:
        for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
            for entry in page.get("Contents", ()):
                key = entry["Key"]
                if not key.endswith("/"):
                    delivered = int(entry["LastModified"].timestamp() * 1000)
                    yield LogFile(f"s3://{bucket}/{key}", delivered)
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
    spark: SparkSession | None = None,
    workers: int = 1,
) -> tuple[HarvestRun, AccessReport]:
    """Count the reads in the log files at `location` that no run has counted yet, as one
    :HarvestRun; `full` reads every file there (those already counted are still skipped).
    With `spark`, Spark tasks read and tally the files (access_spark.py); with `workers` over
    one, that many processes of this machine (access_workers.py): the same tallies."""
    scope = location if location.startswith("s3://") else str(Path(location).resolve())
    overlap = int(settings.s3.access_overlap_hours * HOUR_MS)
    report = AccessReport()
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
        if spark is not None:
            batches = iter(batches_with_spark(spark, settings, pending, scope, report))
        elif workers > 1 and len(pending) > 1:
            batches = batches_in_workers(pending, settings, scope, report, workers)
        else:
            readers = Readers.of(settings.s3, settings.identity.rules())
            batches = tally_batches(pending, readers, scope, report.problems, report.failed_files)
        for batch in batches:
            _write(store, writer, run, batch)
            report.read_files += len(batch.marks)
            report.reads += batch.tallies.reads
            if progress:
                detail = f"{report.reads:,} reads"
                progress(Tick(location, report.read_files, "log files", detail=detail))
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


def _write(store: GraphStore, writer: GraphWriter, run: HarvestRun, batch: Batch) -> None:
    """The readers and datasets of a batch (idempotent MERGEs), then its counts and marks in
    one statement."""
    if not batch.marks:
        return
    newest: dict[tuple[str, str], int] = {}
    for (bucket, principal, dataset), (_, _, last) in batch.tallies.pairs.items():
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
        for (bucket, principal, dataset), (count, first, last) in batch.tallies.pairs.items()
    ]  # fmt: skip
    records = store.run("s3_access_count_reads", {"rows": rows, "logs": batch.marks}).records()
    written = int(records[0]["written"]) if records else 0
    run.counts["merge_reads_from"] += written
    run.counts["reads_counted"] += batch.tallies.reads
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
    spark_master: str | None = None
    workers: int = 1
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
        spark = spark_session(self.spark_master, SYSTEM) if self.spark_master else None
        reports = []
        try:
            for location in locations:
                run, report = harvest_s3_access(
                    store, settings, location, full=self.full, progress=progress, spark=spark,
                    workers=self.workers,
                )  # fmt: skip
                line = summary(location, run, report)
                problems = report.problems.named
                reports.append(HarvestReport.of_run(run, problems, report.failed_files, line))
        finally:
            if spark is not None:
                spark.stop()
        return reports
