"""`harvest snowflake`: Snowflake's ACCESS_HISTORY (and its neighbours) into the graph."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TextIO

import click

from lineagegraph.cli.app import App, harvest
from lineagegraph.cli.progress import StatusLine
from lineagegraph.harvest.snowflake.harvester import SnowflakeReport, connect, urn_account
from lineagegraph.harvest.snowflake.harvester import harvest as harvest_snowflake
from lineagegraph.settings import with_overrides

pass_app = click.make_pass_decorator(App)


class RowProgress(StatusLine):
    """ACCESS_HISTORY rows read so far and the rate, on the status line."""

    def __init__(self, stream: TextIO | None = None, log_every: float = 10.0) -> None:
        super().__init__(stream, log_every)
        self.started = time.monotonic()

    def __call__(self, rows: int) -> None:
        rate = rows / max(time.monotonic() - self.started, 1e-9)
        self.update(lambda: f"snowflake: {rows:,} ACCESS_HISTORY rows, {rate:,.0f} rows/s")


def when(ms: int | None) -> str:
    if ms is None:
        return "none"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def summary(report: SnowflakeReport) -> str:
    c = report.counts
    return (
        f"{report.scope}: {c['rows']:,} ACCESS_HISTORY rows since {when(report.window_start)}: "
        f"{c['queries_writing']:,} writing and {c['queries_reading']:,} reading queries, "
        f"{c['table_pairs']:,} table and {c['column_pairs']:,} column lineage pairs, "
        f"{c['drops']:,} drops, {c['rows_malformed']:,} malformed rows skipped; "
        f"watermark {when(report.watermark)}; run {report.run_id}: success"
    )


@harvest.command("snowflake")
@click.option(
    "--lookback-days",
    type=click.IntRange(1, 365),
    help="First harvest only: how many days of ACCESS_HISTORY to read (default 7).",
)
@click.option(
    "--overlap-hours",
    type=click.FloatRange(0, 720),
    help="Hours re-read before the last watermark, for the view's latency (default 3).",
)
@click.option(
    "--fetch-size", type=click.IntRange(1, 1_000_000), help="Rows fetched and written per batch."
)
@pass_app
def snowflake(
    app: App, lookback_days: int | None, overlap_hours: float | None, fetch_size: int | None
) -> None:
    """Harvest Snowflake lineage from ACCOUNT_USAGE.ACCESS_HISTORY into the graph.

    Each query that wrote data becomes a :Transformation and FLOWS_TO edges from what it read
    to what it wrote (FEEDS between columns); COPY from and to external stages meets the S3
    datasets. Incremental: resumes from the last watermark minus the overlap; a failed run
    exits non-zero and the next one resumes where the last good one ended.

    Connection settings come from [snowflake] (LINEAGEGRAPH_SNOWFLAKE__*): account, user,
    role, warehouse and a password, a key pair or externalbrowser.

    \b
    Examples:
      lineagegraph harvest snowflake
      lineagegraph harvest snowflake --lookback-days 30
      LINEAGEGRAPH_SNOWFLAKE__ACCOUNT=myorg-prod LINEAGEGRAPH_SNOWFLAKE__USER=LINEAGE \\
        LINEAGEGRAPH_SNOWFLAKE__PASSWORD=... lineagegraph harvest snowflake
    """
    settings = with_overrides(
        app.settings,
        "snowflake",
        lookback_days=lookback_days,
        overlap_hours=overlap_hours,
        fetch_size=fetch_size,
    )
    urn_account(settings)  # a missing account is a settings error before any connection
    progress = RowProgress()
    with app.store() as store:
        connection = connect(settings.snowflake)
        try:
            report = harvest_snowflake(store, settings, connection, progress=progress)
        finally:
            progress.done()
            connection.close()
    for query_id, reason in report.malformed:
        click.echo(f"warning: skipped malformed row of query {query_id}: {reason}", err=True)
    hidden = report.counts["rows_malformed"] - len(report.malformed)
    if hidden > 0:
        click.echo(f"warning: {hidden:,} more malformed rows skipped", err=True)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(summary(report))
