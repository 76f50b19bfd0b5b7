"""`harvest dbt`: a dbt project's models, sources, columns and test results."""

from __future__ import annotations

from pathlib import Path

import click

from lineagegraph.cli.app import App
from lineagegraph.cli.common import pass_app
from lineagegraph.cli.harvesting import harvest, harvest_with
from lineagegraph.errors import ConfigError, HarvestError
from lineagegraph.settings import with_overrides


@harvest.command("dbt")
@click.option(
    "--target-path",
    type=click.Path(path_type=Path, exists=True),
    help="The dbt project's target directory (default: [dbt] target_path).",
)
@click.option(
    "--namespace",
    help="OpenLineage namespace of a non-Snowflake warehouse (default: [dbt] namespace).",
)
@click.option("--no-column-lineage", is_flag=True, help="Skip column lineage from compiled SQL.")
@click.option("--strict", is_flag=True, help="Exit 5 when any model's SQL could not be read.")
@pass_app
def dbt_command(
    app: App,
    target_path: Path | None,
    namespace: str | None,
    no_column_lineage: bool,
    strict: bool,
) -> None:
    """Harvest a dbt project from its artifacts (run any dbt command first).

    Reads TARGET/manifest.json (dbt 1.6 and later), catalog.json for columns when there
    (`dbt docs generate`) and run_results.json for test results (`dbt build` or `dbt test`).
    Models, seeds, snapshots and sources become tables named as the warehouse names them
    (on Snowflake, the urns ACCESS_HISTORY gives, so both meet); each model is a
    transformation from its upstreams; column lineage comes from the compiled SQL.
    Ephemeral models are looked through and disabled ones skipped, as dbt does.

    \b
    Examples:
      lineagegraph harvest dbt --target-path ~/analytics/target
      lineagegraph harvest dbt --namespace postgres://db.example.com:5432
    """
    settings = with_overrides(
        app.settings,
        "dbt",
        target_path=target_path,
        namespace=namespace,
        column_lineage=False if no_column_lineage else None,
    )
    if settings.dbt.target_path is None:  # before the store is opened (and created)
        raise ConfigError(
            "no dbt target directory: give --target-path or set [dbt] target_path "
            "(LINEAGEGRAPH_DBT__TARGET_PATH)"
        )
    from lineagegraph.harvest.dbt import DbtHarvester  # brings sqlglot: only when harvesting

    reports = harvest_with(app, DbtHarvester(), settings)
    unread = sum(": no column lineage: " in w for report in reports for w in report.warnings)
    if strict and unread:
        raise HarvestError(f"{unread} models had no column lineage (--strict)")
