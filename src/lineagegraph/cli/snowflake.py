"""`harvest snowflake`: Snowflake's ACCESS_HISTORY (and its neighbours) into the graph."""

from __future__ import annotations

import click

from lineagegraph.cli.app import App
from lineagegraph.cli.common import pass_app
from lineagegraph.cli.harvesting import harvest, harvest_with
from lineagegraph.settings import with_overrides


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
    # Brings the Snowflake connector: imported only when harvesting.
    from lineagegraph.harvest.snowflake.harvester import SnowflakeHarvester, urn_account

    urn_account(settings)  # a missing account is a settings error before the store is opened
    harvest_with(app, SnowflakeHarvester(), settings)
