"""`harvest s3` and `harvest s3-inventory`: one :HarvestRun per bucket or inventory report.

A run scans (scan.py: pages from listing.py or inventory.py through one writer), then settles
(settle.py: soft deletes of complete scopes, the mass-delete guard, roll-ups). After Ctrl-C it
records a partial run that deleted nothing and re-raises KeyboardInterrupt. An inventory
tallied by Spark (inventory_spark.py) writes roll-ups instead of one node per object.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from lineagegraph.errors import ConfigError, LineageGraphError
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.base import HarvestReport, Progress, Tick
from lineagegraph.harvest.s3.client import bucket_region, endpoint_of, make_client
from lineagegraph.harvest.s3.inventory import check_data_files, data_file_pages, read_manifest
from lineagegraph.harvest.s3.inventory_spark import (
    inventory_rollups_with_spark,
    objects_read_one_by_one,
    spark_session,
    write_inventory_rollups,
)
from lineagegraph.harvest.s3.listing import distinct_scopes, scope_pages, versioning
from lineagegraph.harvest.s3.scan import (
    FileWriter,
    Page,
    ScanProgress,
    ScanStats,
    Scope,
    Task,
    scan,
)
from lineagegraph.harvest.s3.settle import live_objects, settle, write_hidden, write_rollups
from lineagegraph.identity import name_of, s3_file_urn
from lineagegraph.pipeline import HarvestRun, harvest_run, now_ms
from lineagegraph.settings import Settings
from lineagegraph.values.globs import exclusion_globs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SYSTEM = "s3"


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
    hidden_known: bool = True,
    region: tuple[str | None, str | None] = (None, None),
) -> S3Report:
    """The body of a harvest run, shared by listing and S3 Inventory: scan, then soft-delete
    and roll up, and store the hidden cost (unless `hidden_known` is false: versions could not
    be listed). After Ctrl-C it returns at once with `interrupted` set and nothing deleted, so
    the run closes as 'partial' and the caller re-raises KeyboardInterrupt."""
    stats = ScanStats()
    writer = FileWriter(store, settings.identity.rules(), run, stats, region[0])
    previous = {scope: live_objects(store, scope) for scope in scopes}
    report = S3Report(run.id, run.scope, "running", stats)
    if region[1]:
        report.warnings.append(region[1])
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
    if hidden_known and not failures:  # else the last complete scan's figures stand
        write_hidden(store, scopes, writer.hidden, started)
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
    """List `bucket` (under each prefix, in parallel) into the graph as one :HarvestRun, with
    its hidden cost: noncurrent versions and delete markers when the bucket keeps versions
    (then listed with ListObjectVersions, else ListObjectsV2 as before), and incomplete
    multipart uploads.

    The run is 'partial' with reasons in `errors` when a prefix failed or a mass delete was
    refused; Ctrl-C records a partial run and re-raises KeyboardInterrupt.
    """
    if not bucket or "/" in bucket:
        raise ConfigError(f"not a bucket name: {bucket!r} (give the name only, no s3:// or '/')")
    client = make_client(settings.s3)
    endpoint = endpoint_of(client)
    scopes = distinct_scopes(bucket, prefixes)
    versioned, unknown = versioning(client, bucket)
    tasks = [
        Task(
            scope,
            f"listing {scope.url}",
            scope.prefix,
            partial(scope_pages, client, scope, settings.s3.page_size, bool(versioned)),
        )
        for scope in scopes
    ]
    with harvest_run(store, SYSTEM, run_scope_label(scopes)) as (run, _):
        report = scan_and_settle(
            store,
            run,
            settings,
            tasks,
            scopes,
            now_ms(),
            endpoint,
            allow_mass_delete=allow_mass_delete,
            progress=progress,
            hidden_known=unknown is None,
            region=bucket_region(client, bucket),
        )
        if unknown and not report.errors:  # else the errors say what went wrong
            report.warnings.append(unknown)
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
    files, datasets = (report.counts.get(f"{k}_deleted", 0) for k in ("files", "datasets"))
    stopped = (
        f" (lineage stopped: {files:,} of them, {datasets:,} datasets)" if files or datasets else ""
    )
    return (
        f"{report.scope}: {stats.objects:,} objects ({human_bytes(stats.bytes)}), "
        f"{stats.folder_markers:,} folder {marker}, {report.datasets:,} datasets, "
        f"{report.soft_deleted:,} soft-deleted{stopped}, in {stats.elapsed:,.1f} s "
        f"({stats.rate:,.0f} objects/s); run {report.run_id}: {report.status}"
    )


def harvest_report(report: S3Report) -> HarvestReport:
    """The S3 report as every source reports."""
    return HarvestReport(
        report.run_id,
        SYSTEM,
        report.scope,
        report.status,
        report.counts,
        report.watermark,
        report.warnings,
        report.errors,
        summary(report),
    )


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
                store,
                settings,
                bucket,
                prefixes,
                allow_mass_delete=self.allow_mass_delete,
                progress=ticks(f"s3://{bucket}", progress),
            )
            reports.append(harvest_report(report))
        return reports


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
            store,
            run,
            settings,
            tasks,
            [scope],
            manifest.created,
            endpoint_of(client),
            allow_mass_delete=allow_mass_delete,
            progress=progress,
        )
    return finished(report, run)


def harvest_s3_inventory_spark(
    store: GraphStore,
    settings: Settings,
    manifest_url: str,
    spark: SparkSession,
    prefix: str = "",
) -> S3Report:
    """Harvest an inventory tallied by Spark: each dataset with its counters, and :Rollup nodes
    that the orphan and cost reports price as exactly as objects. Objects that lineage reads
    one by one stay :File nodes, so their consumption stays per object. The hidden cost
    (noncurrent versions, delete markers) is stored on the datasets as a listing or the
    inventory without Spark stores it. Nothing is written
    unless the whole aggregation succeeded; nothing is soft-deleted (there are no :File nodes
    to delete: a later harvest of the scope replaces the roll-ups)."""
    client = make_client(settings.s3)
    manifest = read_manifest(client, manifest_url)
    scope = Scope(manifest.source_bucket, prefix)
    excludes = exclusion_globs(settings.reports.exclude)
    with harvest_run(store, SYSTEM, scope.url) as (run, _):
        singles = objects_read_one_by_one(store, scope, manifest.created)
        check_data_files(client, manifest, settings.s3.parallelism)
        found = inventory_rollups_with_spark(
            spark, settings.s3, manifest, prefix, settings.identity.rules(), excludes, singles
        )
        per_dataset = found.by_class()
        touched = sorted(set(per_dataset) | found.hidden.touched)
        rows = [
            {
                "urn": urn,
                "system": SYSTEM,
                "name": name_of(urn),
                "seen": manifest.created,
                "props": {"bucket": manifest.source_bucket},
            }
            for urn in touched
        ]
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
        write_hidden(store, [scope], found.hidden, manifest.created)
        for name, n in found.counters.items():  # the whole inventory's, not the writer's
            run.counts[name] = n
        run.counts["inventory_files"] = len(manifest.files)
        run.counts["datasets"] += datasets
        run.watermark = manifest.created
    stats = ScanStats(
        found.counters["objects"], found.counters["bytes"], found.counters["folder_markers"]
    )
    return S3Report(run.id, run.scope, run.status, stats, datasets=run.counts["datasets"])


@dataclass
class S3InventoryHarvester:
    """`harvest s3-inventory`: one S3 Inventory report, object by object or, given a Spark
    master, tallied by Spark into roll-ups. Not in `harvest all`: a report is named per run."""

    manifest: str | None = None
    prefix: str = ""
    allow_mass_delete: bool = False
    spark_master: str | None = None
    name = "s3-inventory"
    section = "s3"
    needs = "--manifest"

    def not_configured(self, settings: Settings) -> str | None:
        return None if self.manifest else "no inventory manifest"

    def run(
        self, store: GraphStore, settings: Settings, *, progress: Progress
    ) -> list[HarvestReport]:
        if not self.manifest:
            raise ConfigError("give the inventory report's manifest.json (--manifest)")
        if self.spark_master:
            if self.allow_mass_delete:
                raise ConfigError(
                    "--allow-mass-delete has no effect with --spark: it deletes nothing"
                )
            spark = spark_session(self.spark_master)
            try:
                report = harvest_s3_inventory_spark(
                    store, settings, self.manifest, spark, self.prefix
                )
            finally:
                spark.stop()
        else:
            report = harvest_s3_inventory(
                store,
                settings,
                self.manifest,
                self.prefix,
                allow_mass_delete=self.allow_mass_delete,
                progress=ticks(self.manifest, progress),
            )
        return [harvest_report(report)]
