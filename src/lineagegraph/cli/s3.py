"""`harvest s3`, `harvest s3-inventory` and `harvest s3-access`: S3 listings, S3 Inventory
reports and the reads of S3 server access logs or CloudTrail into the graph."""

from __future__ import annotations

import click

from lineagegraph.cli.app import App
from lineagegraph.cli.common import pass_app
from lineagegraph.cli.harvesting import harvest, harvest_with
from lineagegraph.settings import with_overrides

_ENDPOINT = click.option(
    "--endpoint-url",
    metavar="URL",
    help="S3-compatible endpoint, e.g. http://127.0.0.1:7480 (default: s3.endpoint_url, else AWS).",
)
_MASS_DELETE = click.option(
    "--allow-mass-delete",
    is_flag=True,
    help="Soft-delete even when a complete scan looks like a loss: whole datasets vanished, or "
    "fewer live objects, beyond s3.max_delete_share (10 %) of its scope (rewrites never count).",
)


@harvest.command("s3")
@click.option(
    "-b", "--bucket", help="Bucket to list (default: every bucket in the s3.buckets setting)."
)
@click.option(
    "-p",
    "--prefix",
    "prefixes",
    multiple=True,
    metavar="PREFIX",
    help="Key prefix to list; repeat for several, listed in parallel "
    "(default: s3.prefixes, else the whole bucket).",
)
@_MASS_DELETE
@_ENDPOINT
@click.option("--page-size", type=click.IntRange(1, 1000), help="Keys per ListObjectsV2 page.")
@click.option("--parallelism", type=click.IntRange(1, 64), help="Prefixes listed at the same time.")
@pass_app
def s3(
    app: App,
    bucket: str | None,
    prefixes: tuple[str, ...],
    allow_mass_delete: bool,
    endpoint_url: str | None,
    page_size: int | None,
    parallelism: int | None,
) -> None:
    """List S3 objects into the graph: a :File per object, PART_OF its folded :Dataset.

    A complete scan of a bucket or prefix soft-deletes the objects it no longer sees; a failed
    or interrupted one deletes nothing and exits non-zero with the reason.

    \b
    Examples:
      lineagegraph harvest s3 --bucket lake --prefix raw/ --prefix curated/
      lineagegraph harvest s3 -b lake --endpoint-url http://127.0.0.1:7480
      lineagegraph harvest s3      # every bucket and prefix of [s3] in the settings (cron)
    """
    settings = with_overrides(
        app.settings, "s3", endpoint_url=endpoint_url, page_size=page_size, parallelism=parallelism
    )
    if not bucket and not settings.s3.buckets:
        raise click.UsageError("give --bucket, or list buckets in the s3.buckets setting")
    from lineagegraph.harvest.s3.harvester import S3Harvester  # boto3: only when harvesting

    harvest_with(app, S3Harvester(bucket, prefixes, allow_mass_delete), settings)


@harvest.command("s3-inventory")
@click.option(
    "-m",
    "--manifest",
    required=True,
    metavar="S3_URL",
    help="The report's manifest.json, e.g. s3://inventories/lake/daily/2024-06-01T01-00Z/"
    "manifest.json.",
)
@click.option(
    "-p",
    "--prefix",
    default="",
    metavar="PREFIX",
    help="The inventory configuration's prefix filter: the scope the report covers "
    "(default: the whole bucket).",
)
@_MASS_DELETE
@_ENDPOINT
@click.option(
    "--spark",
    "spark_master",
    metavar="MASTER",
    help="Tally with Spark (e.g. local[4], yarn): writes per-dataset roll-ups, which the "
    "orphan and cost reports price exactly, and :File nodes only for objects lineage reads on "
    "their own. For inventories too big for one node per object.",
)
@pass_app
def s3_inventory(
    app: App,
    manifest: str,
    prefix: str,
    allow_mass_delete: bool,
    endpoint_url: str | None,
    spark_master: str | None,
) -> None:
    """Read an S3 Inventory report (CSV or Parquet) into the graph, for buckets too big to list.

    The manifest is checked against manifest.checksum and each data file against its MD5
    before anything from it is written. A complete report soft-deletes, as of its creation
    time, the objects it no longer holds.

    \b
    Examples:
      lineagegraph harvest s3-inventory \\
          --manifest s3://inventories/lake/daily/2024-06-01T01-00Z/manifest.json
      lineagegraph harvest s3-inventory -m s3://inv/lake/d/2024-06-01T01-00Z/manifest.json \\
          --spark 'local[4]'
    """
    if spark_master and allow_mass_delete:
        raise click.UsageError("--allow-mass-delete has no effect with --spark: it deletes nothing")
    settings = with_overrides(app.settings, "s3", endpoint_url=endpoint_url)
    # Brings boto3 (and pyspark with --spark): imported only when harvesting.
    from lineagegraph.harvest.s3.harvester import S3InventoryHarvester

    harvester = S3InventoryHarvester(manifest, prefix, allow_mass_delete, spark_master)
    harvest_with(app, harvester, settings)


@harvest.command("s3-access")
@click.argument("locations", nargs=-1, metavar="[LOCATION]...")
@click.option(
    "--full",
    is_flag=True,
    help="Read every log file at the location, not only those delivered since the last run "
    "(files already counted are still skipped: no read counts twice).",
)
@click.option(
    "--overlap-hours",
    type=click.FloatRange(0, 24 * 366),
    help="Read again the files delivered this long before the last run's newest one "
    "(default: s3.access_overlap_hours, 24).",
)
@_ENDPOINT
@click.option(
    "--spark",
    "spark_master",
    metavar="MASTER",
    help="Read and tally the log files in Spark tasks (e.g. local[4], yarn; the executors "
    "reach S3 or the local paths themselves): for logs too big for one machine. The same "
    "counts as without it.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    help="Worker processes that read and tally the log files at once, each a core's worth "
    "of parsing, for idle cores (default 1: in this process; a worker costs CPU one process "
    "does not, docs/s3.md). The same counts whatever the number.",
)
@pass_app
def s3_access(
    app: App,
    locations: tuple[str, ...],
    full: bool,
    overlap_hours: float | None,
    endpoint_url: str | None,
    spark_master: str | None,
    workers: int | None,
) -> None:
    """Count direct S3 reads from server access logs or CloudTrail data-event files.

    LOCATION is s3://bucket/prefix or a local directory or file (default: every location of
    the s3.access_logs setting). Each principal (an IAM ARN, or the remote IP of an anonymous
    request) reading a bucket becomes a transformation that reads from the datasets its keys
    fold into, with a read count and its last read: the orphan report then counts those
    datasets as consumed. GET, HEAD, the source of a copy and S3 Select are reads; bad lines
    are skipped and named by file and line.

    \b
    Examples:
      lineagegraph harvest s3-access s3://acme-logs/s3/lake/
      lineagegraph harvest s3-access /var/log/cloudtrail/ --full
      lineagegraph harvest s3-access s3://acme-logs/s3/lake/ --workers 4
      lineagegraph harvest s3-access s3://acme-logs/s3/lake/ --spark 'local[4]'
    """
    if spark_master and workers is not None:
        raise click.UsageError("--workers is for a run without --spark (Spark has its executors)")
    settings = with_overrides(
        app.settings, "s3", endpoint_url=endpoint_url, access_overlap_hours=overlap_hours
    )
    if not locations and not settings.s3.access_logs:
        raise click.UsageError("give a LOCATION, or list them in the s3.access_logs setting")
    from lineagegraph.harvest.s3.access import S3AccessHarvester  # boto3: only when harvesting

    harvest_with(app, S3AccessHarvester(locations, full, spark_master, workers or 1), settings)
