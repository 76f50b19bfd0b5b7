"""What every `harvest` command shares: run a source, print its reports; `harvest list`,
`harvest all`, and a plain `harvest NAME` for a source that brings no command of its own."""

from __future__ import annotations

import click

from lineagegraph.cli.app import App, LineageGroup, cli
from lineagegraph.cli.common import pass_app
from lineagegraph.cli.progress import tick_line
from lineagegraph.errors import HarvestError
from lineagegraph.harvest.all import SourceResult, harvest_all, run_harvester
from lineagegraph.harvest.base import Harvester, HarvestReport
from lineagegraph.harvest.registry import harvesters
from lineagegraph.output import format_rows
from lineagegraph.settings import Settings


class HarvestGroup(LineageGroup):
    """`harvest`: the commands written for a source, plus `harvest NAME` for every other source
    in the registry (plug-ins: lineagegraph.harvest.registry), looked up only when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *harvesters()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        found = harvesters().get(cmd_name)
        return source_command(found) if found is not None else None


@cli.group(cls=HarvestGroup)
def harvest() -> None:
    """Harvest one source into the graph (for cron and Airflow: exits non-zero on failure).

    `harvest list` shows every source (plug-in packages' too) and whether settings ask for
    it; `harvest all` runs those that are configured.

    One harvest at a time per store: a second one exits 5 at once, naming the holder, and
    changes nothing. SIGTERM, SIGINT and SIGHUP stop a harvest cleanly: the run is recorded as
    interrupted, what was written stays, and the exit code is 128 + the signal number.

    \b
    Examples:
      lineagegraph harvest list                          what is configured, what to set
      lineagegraph harvest s3 --bucket acme-raw --endpoint-url http://127.0.0.1:9000
      lineagegraph harvest openlineage events.jsonl      a file of OpenLineage events
      lineagegraph --config /etc/lineagegraph.toml harvest all    every configured source
    """


WARNINGS_SHOWN = 20


def show(reports: list[HarvestReport]) -> None:
    """Each run's warnings (on stderr, the first WARNINGS_SHOWN) and its summary line."""
    for report in reports:
        for warning in report.warnings[:WARNINGS_SHOWN]:
            click.echo(f"warning: {warning}", err=True)
        if len(report.warnings) > WARNINGS_SHOWN:
            click.echo(f"warning: ... and {len(report.warnings) - WARNINGS_SHOWN} more", err=True)
        click.echo(report.summary)


def harvest_with(
    app: App, harvester: Harvester, settings: Settings | None = None
) -> list[HarvestReport]:
    """Run one source on the store (with `settings`, a command's overrides, if given), print
    what it did; HarvestError (exit 5) if a run failed."""
    with app.store() as store, tick_line() as progress:
        reports = run_harvester(harvester, store, settings or app.settings, progress)
    show(reports)
    errors = [error for report in reports for error in report.errors]
    if errors:
        raise HarvestError("; ".join(errors))
    return reports


def source_command(harvester: Harvester) -> click.Command:
    """`harvest NAME` for a source with no command of its own (a plug-in): settings only."""

    @pass_app
    def command(app: App) -> None:
        harvest_with(app, harvester)

    doc = (type(harvester).__doc__ or f"Harvest {harvester.name}.").strip()
    return click.Command(
        harvester.name, callback=command, help=doc + f"\n\nNeeds {harvester.needs}."
    )


@harvest.command("list")
@pass_app
def list_sources(app: App) -> None:
    """List every source (built in or from a plug-in package) and whether settings ask for it.

    `harvest all` runs the configured ones.

    \b
    Example:
      lineagegraph --config /etc/lineagegraph.toml harvest list
    """
    rows = []
    for name, harvester in harvesters().items():
        reason = harvester.not_configured(app.settings)
        rows.append([name, "yes" if reason is None else f"no ({reason})", harvester.needs])
    click.echo(format_rows(["source", "configured", "settings"], rows, "table"))


@harvest.command("all")
@click.option(
    "--only",
    multiple=True,
    metavar="SOURCE",
    help="Run just these sources (repeatable; see `harvest list`); default: every configured one.",
)
@pass_app
def harvest_all_command(app: App, only: tuple[str, ...]) -> None:
    """Harvest every source configured in settings, one after another.

    A failing source does not stop the others; the command exits non-zero if any failed.
    One summary line per source (status, nodes and edges written, time, watermark); with
    --log-format json each is also a structured log record. Sources not configured are
    reported as skipped; if none is, the command fails (exit 2) and says what to configure.
    The store's harvest lock (held by every harvest) keeps two runs from overlapping.

    \b
    Examples:
      lineagegraph --config /etc/lineagegraph.toml harvest all          # cron
      lineagegraph --log-format json harvest all --only snowflake       # Airflow task
    """

    def print_result(result: SourceResult) -> None:
        progress.done()
        show(result.reports)
        click.echo(result.line())

    with tick_line() as progress:
        results = harvest_all(app.settings, only=only, progress=progress, on_result=print_result)
    failed = [result.name for result in results if not result.ok]
    if failed:
        raise HarvestError(f"{len(failed)} source(s) failed: {', '.join(failed)}")
