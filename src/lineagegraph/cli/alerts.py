"""alerts: evaluate the alert rules over the graph, notify, print."""

from __future__ import annotations

from pathlib import Path

import click

from lineagegraph.alerts_settings import SEVERITIES
from lineagegraph.cli.app import App, cli
from lineagegraph.cli.common import emit, format_option, output_option, pass_app, read_store
from lineagegraph.errors import AlertsFiring
from lineagegraph.notify import Evaluation, notify
from lineagegraph.output import FORMATS, format_rows, time_text
from lineagegraph.pipeline import now_ms
from lineagegraph.questions.alerts import at_least, evaluate
from lineagegraph.render.as_json import to_json
from lineagegraph.settings import with_overrides

COLUMNS = [
    "state", "severity", "rule", "subject", "since", "cause", "downstream assets",
    "downstream columns", "explains", "owners", "key",
]  # fmt: skip


@cli.command("alerts")
@format_option(FORMATS, "table for people, json for programs, csv or markdown.")
@output_option("Write to this file instead of the terminal.")
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    help="Exit 8 when an alert of this severity or worse is firing (for cron and CI).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Only evaluate and print: remember nothing and notify no one.",
)
@pass_app
def alerts_command(
    app: App, fmt: str, output: Path | None, fail_on: str | None, dry_run: bool
) -> None:
    """Evaluate the alert rules of [alerts] over the graph, notify, and print the alerts.

    The rules: freshness (an asset not written within its window, set per asset glob or
    learned from its writes), harvest failing (a source's harvests failed since its last
    success), coverage (a system's share of tables and datasets with lineage under its
    minimum), quality (a failing data-quality check), schema change (an asset something
    reads changed its columns within [alerts] schema_change_hours; critical when a dropped or
    retyped column is read downstream, which it names) and upstream drift (the assets flowing
    into an asset changed within [alerts] upstream_drift_hours; it names what started and
    stopped). A freshness or quality alert below another firing alert of the same rule is
    folded into it, which names it. Each alert tells what it reaches
    downstream (its blast radius).

    An alert notifies the receivers of [alerts] (Alertmanager, a webhook, Slack, PagerDuty)
    once when it starts firing and once when it resolves; the states and what a receiver has
    not yet taken are kept in [alerts] state_file, and resent on the next run. Printed: the
    firing alerts and those this run resolved. `serve` evaluates the same way every
    [alerts] interval_seconds.

    \b
    Example (cron, every 5 minutes):
      lineagegraph alerts --fail-on critical
      lineagegraph alerts --dry-run --format json
    """
    settings = with_overrides(app.settings, "alerts")
    now = now_ms()
    with read_store(app) as store:
        firing = evaluate(store, settings.alerts, now)
    evaluation = Evaluation(firing, []) if dry_run else notify(settings, firing, now)
    emit(render(evaluation, fmt), output)
    for delivery in evaluation.deliveries:
        if delivery.error:
            click.echo(
                f"alerts: {delivery.receiver}: {delivery.waiting} notification(s) kept for the "
                f"next run: {delivery.error}",
                err=True,
            )
    if fail_on:
        failing = at_least(evaluation.alerts, fail_on)
        if failing:
            raise AlertsFiring(
                f"{len(failing)} alert(s) of severity {fail_on} or worse firing: "
                + ", ".join(a.key for a in failing[:5])
                + (" ..." if len(failing) > 5 else "")
            )


def render(evaluation: Evaluation, fmt: str) -> str:
    """json: every field of every alert; the other formats a row per alert."""
    shown = evaluation.shown
    if fmt == "json":
        return to_json({
            "alerts": [a.as_dict() for a in shown],
            "deliveries": evaluation.deliveries,
        })  # fmt: skip
    rows = [
        [
            a.state, a.severity, a.rule, a.subject, time_text(a.since), a.cause,
            a.blast.assets, a.blast.columns, len(a.explains), ", ".join(a.blast.owners), a.key,
        ]
        for a in shown
    ]  # fmt: skip
    if fmt == "table" and not rows:
        return "no alerts firing"
    return format_rows(COLUMNS, rows, fmt)
