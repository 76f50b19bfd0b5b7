"""`harvest dbt`: a dbt project's models, sources, columns and test results."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from lineagegraph.cli.app import App, harvest
from lineagegraph.errors import ConfigError, HarvestError
from lineagegraph.harvest.dbt import harvest_dbt
from lineagegraph.settings import with_overrides

pass_app = click.make_pass_decorator(App)


@harvest.command("dbt")
@click.option(
    "--target-path", type=click.Path(path_type=Path, exists=True),
    help="The dbt project's target directory (default: [dbt] target_path).",
)  # fmt: skip
@click.option(
    "--namespace",
    help="OpenLineage namespace of a non-Snowflake warehouse (default: [dbt] namespace).",
)
@click.option("--no-column-lineage", is_flag=True, help="Skip column lineage from compiled SQL.")
@click.option("--strict", is_flag=True, help="Exit 5 when any model's SQL could not be read.")
@pass_app
def dbt_command(
    app: App, target_path: Path | None, namespace: str | None, no_column_lineage: bool,
    strict: bool,
) -> None:  # fmt: skip
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
        app.settings, "dbt", target_path=target_path, namespace=namespace,
        column_lineage=False if no_column_lineage else None,
    )  # fmt: skip
    section = settings.dbt
    if section.target_path is None:
        raise ConfigError(
            "no dbt target directory: give --target-path or set [dbt] target_path "
            "(LINEAGEGRAPH_DBT__TARGET_PATH)"
        )
    with app.store() as store:
        run, report = harvest_dbt(
            store, section.target_path,
            snowflake_account=settings.identity.snowflake_account,
            namespace=section.namespace, column_lineage=section.column_lineage,
        )  # fmt: skip
    for problem in report.problems[:20]:
        click.echo(f"warning: {problem}", err=True)
    c = report.counts
    tests = Counter(check.status for check in report.checks)
    click.echo(
        f"{section.target_path}: {report.adapter} project, {c.get('models', 0)} models, "
        f"{c.get('seeds', 0)} seeds, {c.get('snapshots', 0)} snapshots, "
        f"{c.get('sources', 0)} sources ({c.get('ephemeral', 0)} ephemeral, "
        f"{c.get('disabled', 0)} disabled skipped), {c.get('columns', 0)} columns, "
        f"{c.get('column_feeds', 0)} column feeds; tests: "
        + (", ".join(f"{n} {s}" for s, n in sorted(tests.items())) or "none")
        + f"; run {run.id}: {run.status}"
    )
    if strict and report.problems:
        raise HarvestError(f"{len(report.problems)} models had no column lineage (--strict)")
