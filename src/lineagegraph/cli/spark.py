"""`harvest spark --spool DIR` and `harvest openlineage PATH`: Spark and OpenLineage lineage."""

from __future__ import annotations

from pathlib import Path

import click

from lineagegraph.cli.app import App
from lineagegraph.cli.common import pass_app
from lineagegraph.cli.harvesting import harvest, harvest_with
from lineagegraph.errors import HarvestError
from lineagegraph.harvest.openlineage import OpenLineageHarvester
from lineagegraph.harvest.spark import SparkHarvester


@harvest.command("spark")
@click.option(
    "--spool",
    "spool",
    type=click.Path(path_type=Path, file_okay=False),
    help="Spool directory to replay (default: [spark] spool_dir).",
)
@pass_app
def spark_command(app: App, spool: Path | None) -> None:
    """Replay Spark lineage that the listener spooled while the graph was unreachable.

    Each spool file is deleted once its records are in the graph; writes are idempotent, so
    an interrupted replay can simply run again. The listener itself is installed in the job:
    `lineagegraph.spark.install(spark)` (see docs/spark.md).

    \b
    Example:
      lineagegraph harvest spark --spool /var/spool/lineagegraph
    """
    harvest_with(app, SparkHarvester(spool))


@harvest.command("openlineage")
@click.argument("path", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--full",
    is_flag=True,
    help="Read every file, not only those changed since the last harvest of PATH.",
)
@click.option("--strict", is_flag=True, help="Exit 5 when any event or facet was skipped.")
@pass_app
def openlineage_command(app: App, path: Path, full: bool, strict: bool) -> None:
    """Ingest OpenLineage RunEvents from a file or a directory of files.

    Reads JSON lines (openlineage-python's file transport with append, the Spark listener's
    output with emit=openlineage, and the events it kept when [spark] openlineage_url did
    not take them, see docs/spark.md) and one-event-per-file JSON (the file transport's
    default).
    COMPLETE events become lineage, with the columnLineage and symlinks facets, and their
    dataQualityAssertions become check results (see lineagegraph check --help); malformed
    events are skipped and reported by file and line.

    \b
    Examples:
      lineagegraph harvest openlineage events.jsonl
      lineagegraph harvest openlineage /var/log/openlineage/ --full
    """
    reports = harvest_with(app, OpenLineageHarvester((path,), full))
    problems = sum(len(report.warnings) for report in reports)
    if strict and problems:
        raise HarvestError(f"{problems} events or facets were skipped (--strict)")
