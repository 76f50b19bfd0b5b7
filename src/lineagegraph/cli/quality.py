"""check: the quality gate a scheduler runs before a downstream job."""

from __future__ import annotations

import click

from lineagegraph.cli.app import App, cli
from lineagegraph.cli.common import NAME_HELP, format_option, pass_app, read_store
from lineagegraph.errors import ChecksFailed, PolicyViolated, UsageError
from lineagegraph.questions import lineage
from lineagegraph.questions.gate import failure_summary, quality_gate
from lineagegraph.questions.policy import check_policies, summary


@cli.command()
@click.argument("name", required=False)
@click.option(
    "--depth",
    type=click.IntRange(1, lineage.MAX_DEPTH),
    default=lineage.MAX_DEPTH,
    show_default=True,
    help="How many hops upstream to look.",
)
@click.option(
    "--policy",
    is_flag=True,
    help="Check the [[tags.policies]] of the settings instead: on NAME and its columns, or on "
    "the whole graph without NAME; exit 8 on a violation.",
)
@format_option(["table", "json"], "table for people, json for programs.")
@pass_app
def check(app: App, name: str | None, depth: int, fmt: str, policy: bool) -> None:
    """Exit 6 when NAME, or anything upstream of it, has a failing data-quality check.

    The gate to put before a job that reads NAME. Looks at the latest result of every check
    (dbt tests, OpenLineage dataQualityAssertions) on NAME, on its columns, and on every asset
    upstream of it and their columns. A `fail` or `error` result blocks: the checks are listed
    and named on stderr, and the exit code is 6. `warn` results are listed but pass. With no
    failing check the exit code is 0 and the output says so.

    With --policy, the classification policies instead: exit 8 when a tag (own, or derived
    along lineage) sits where a [[tags.policies]] entry forbids, each violation listed with
    the path that carried the tag there (docs/classifications.md).

    NAME is {name_help}.

    \b
    Example (in a scheduler, before the job that reads the mart):
      lineagegraph check ANALYTICS.MARTS.DAILY_ACTIVE && run-the-report
      lineagegraph check s3://acme-raw/events --format json
      lineagegraph check --policy
    """
    if policy:
        with read_store(app) as store:
            urn = lineage.resolve(store, app.settings, name) if name is not None else None
            verdict = check_policies(store, app.settings.tags, urn)
        click.echo(verdict.render(fmt))
        if not verdict.passed:
            raise PolicyViolated(summary(verdict))
        return
    if name is None:
        raise UsageError("check needs NAME (or --policy, which checks the whole graph without it)")
    with read_store(app) as store:
        urn = lineage.resolve(store, app.settings, name)
        answer = quality_gate(store, urn, depth=depth)
    click.echo(answer.render(fmt))
    if not answer.passed:
        raise ChecksFailed(failure_summary(answer))


check.help = (check.help or "").replace("{name_help}", NAME_HELP)
