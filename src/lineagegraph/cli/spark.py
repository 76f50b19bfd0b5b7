"""`harvest spark --spool DIR` and `harvest openlineage PATH`: Spark and OpenLineage lineage."""

from __future__ import annotations

from pathlib import Path

import click

from lineagegraph.cli.app import App, harvest
from lineagegraph.cli.progress import StatusLine
from lineagegraph.errors import HarvestError
from lineagegraph.harvest.openlineage import OpenLineageReport, harvest_openlineage
from lineagegraph.spark.spool import replay

pass_app = click.make_pass_decorator(App)


def _warn(problems: list[str], limit: int = 20) -> None:
    for problem in problems[:limit]:
        click.echo(f"warning: {problem}", err=True)
    if len(problems) > limit:
        click.echo(f"warning: ... and {len(problems) - limit} more", err=True)


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
    directory = spool or app.settings.spark.spool_dir
    with app.store() as store:
        run, report = replay(store, directory)
    _warn(report.problems)
    click.echo(
        f"{directory}: {report.files} files, {report.actions} actions, "
        f"{report.failures} failed actions; run {run.id}: {run.status}"
    )


@harvest.command("openlineage")
@click.argument("path", type=click.Path(path_type=Path, exists=True))
@click.option("--full", is_flag=True, help="Read every file, not only those changed since the "
              "last harvest of PATH.")  # fmt: skip
@click.option("--strict", is_flag=True, help="Exit 5 when any event or facet was skipped.")
@pass_app
def openlineage_command(app: App, path: Path, full: bool, strict: bool) -> None:
    """Ingest OpenLineage RunEvents from a file or a directory of files.

    Reads JSON lines (openlineage-python's file transport with append, the Spark listener's
    output with emit=openlineage, see docs/spark.md) and one-event-per-file JSON (the file
    transport's default).
    COMPLETE events become lineage, with the columnLineage and symlinks facets, and their
    dataQualityAssertions become check results (see lineagegraph check --help); malformed
    events are skipped and reported by file and line.

    \b
    Examples:
      lineagegraph harvest openlineage events.jsonl
      lineagegraph harvest openlineage /var/log/openlineage/ --full
    """
    rules = app.settings.identity.rules()
    progress = _Progress()
    with app.store() as store:
        run, report = harvest_openlineage(store, path, rules, full=full, on_file=progress)
    progress.done()
    _warn(report.problems)
    click.echo(
        f"{path}: {report.files} files, {report.events} events ({report.complete} complete, "
        f"{report.failed_runs} failed runs, {report.skipped_not_complete} other), "
        f"{len(report.problems)} problems; run {run.id}: {run.status}"
    )
    if strict and report.problems:
        raise HarvestError(f"{len(report.problems)} events or facets were skipped (--strict)")


class _Progress(StatusLine):
    """Files and events so far on a terminal; silent in logs (the summary line says it all)."""

    def __init__(self) -> None:
        super().__init__(log_every=None)

    def __call__(self, report: OpenLineageReport) -> None:
        self.update(lambda: f"{report.files:,} files, {report.events:,} events")
