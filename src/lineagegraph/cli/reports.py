"""orphans, cost-report and recommend: the S3 storage nobody reads, what S3 storage costs a
month, and the lifecycle rules that would save on it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from lineagegraph.cli.app import App, cli
from lineagegraph.cli.common import (
    TimeParam,
    emit,
    format_option,
    output_option,
    pass_app,
    read_store,
)
from lineagegraph.output import FORMATS, terminal_width
from lineagegraph.reports.options import GROUPINGS, ORDERS, Kind, build_options
from lineagegraph.reports.orphans import run_report


def report_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options both reports share."""
    options = [
        click.option(
            "--as-of",
            type=TimeParam(),
            metavar="TIME",
            help="End of the lookback window: 2024-06-30, 2024-06-30T12:00:00Z or epoch ms "
            "(default: now). The same --as-of gives the same report.",
        ),
        click.option(
            "--lookback-days",
            type=click.IntRange(min=1),
            metavar="DAYS",
            help="Reads and flows this many days before --as-of count as consumption "
            "(default: [reports] lookback_days, 90).",
        ),
        click.option(
            "--exclude",
            multiple=True,
            metavar="GLOB",
            help="Never call keys matching GLOB orphaned ('*' within a segment, '**' across); "
            "adds to **/_SUCCESS, **/_temporary/** and [reports] exclude. Repeatable.",
        ),
        click.option("--bucket", multiple=True, help="Only this bucket. Repeatable."),
        click.option(
            "--include-deleted",
            is_flag=True,
            help="Also count objects soft-deleted by --as-of (objects harvested one by one; "
            "roll-ups only know the newest inventory, and a note says so).",
        ),
        click.option(
            "--by",
            type=click.Choice(list(GROUPINGS)),
            default="dataset-class",
            show_default=True,
            help="One row per bucket + dataset + storage class, or coarser; object: one row "
            "per S3 object (a scope harvested as Spark roll-ups has no per-object detail: its "
            "rows stay per class, marked harvested_as rollup, and a note names it).",
        ),
        click.option(
            "--sort",
            type=click.Choice(ORDERS),
            default="cost",
            show_default=True,
            help="Order of the rows: most expensive first, or oldest last-modified first "
            "(with --by object: the oldest objects; a roll-up row's date is its oldest "
            "object's). The top datasets stay ranked by cost.",
        ),
        click.option(
            "--top",
            type=click.IntRange(min=1),
            metavar="N",
            help="How many datasets to rank by cost (default: [reports] top_n, 10).",
        ),
        format_option(
            FORMATS,
            "csv holds the rows only; table, markdown and json the whole report. json "
            "and csv carry exact amounts as decimal strings (USD to 1e-9, adding up to the "
            "total); table and markdown show $ amounts and sizes for people.",
        ),
        output_option("Write the report to this file (whole or not at all)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _report(app: App, kind: Kind, fmt: str, output: Path | None, **flags: Any) -> None:
    options = build_options(
        app.settings.reports,
        kind,
        as_of=flags["as_of"],
        lookback_days=flags["lookback_days"],
        exclude=flags["exclude"],
        buckets=flags["bucket"],
        include_deleted=flags["include_deleted"],
        by=flags["by"],
        top=flags["top"],
        sort=flags["sort"],
    )
    with read_store(app) as store:
        report = run_report(store, options)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    emit(report.render(fmt, None if output else terminal_width()), output)


@cli.command()
@report_options
@pass_app
def orphans(app: App, fmt: str, output: Path | None, **flags: Any) -> None:
    """S3 objects nothing consumed within the lookback window, and their monthly cost.

    An object is consumed when, within --lookback-days before --as-of, a FLOWS_TO left it or a
    dataset containing it, or a transformation READ it or such a dataset. Rows are per bucket,
    dataset and storage class, most expensive first, followed by the top datasets by cost.

    \b
    Examples:
      lineagegraph orphans
      lineagegraph orphans --lookback-days 180 --exclude 'backups/**'
      lineagegraph orphans --by bucket --format markdown -o orphans.md
    """
    _report(app, "orphans", fmt, output, **flags)


@cli.command("cost-report")
@report_options
@pass_app
def cost_report(app: App, fmt: str, output: Path | None, **flags: Any) -> None:
    """Monthly storage cost of the S3 objects in the graph, and the orphaned share of it.

    Prices come from config/prices.toml (us-east-1 list prices) or [reports] price_table;
    minimum billable sizes, Glacier's per-object overhead, Intelligent-Tiering's monitoring
    fee and Standard's volume tiers are applied.

    \b
    Examples:
      lineagegraph cost-report --by class
      lineagegraph cost-report --bucket acme-raw --format csv -o s3-cost.csv
    """
    _report(app, "cost", fmt, output, **flags)


@cli.command("recommend")
@click.option(
    "--as-of",
    type=TimeParam(),
    metavar="TIME",
    help="End of the lookback window: 2024-06-30, 2024-06-30T12:00:00Z or epoch ms (default: now).",
)
@click.option(
    "--lookback-days",
    type=click.IntRange(min=1),
    metavar="DAYS",
    help="A prefix read or flowed from in this many days before --as-of gets no rule "
    "(default: [reports] lookback_days, 90).",
)
@click.option("--bucket", multiple=True, help="Only this bucket. Repeatable.")
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="As the orphan report's: adds to the default and [reports] exclude. Repeatable.",
)
@click.option(
    "--to",
    "classes",
    multiple=True,
    metavar="CLASS",
    help="Only consider transitions to this storage class (e.g. GLACIER_IR). Repeatable; "
    "default: every class the price table gives a transition fee.",
)
@click.option(
    "--expire",
    "allow_expire",
    is_flag=True,
    help="Also consider expiring (deleting) the current objects of unread prefixes.",
)
@click.option(
    "--transition-days",
    type=click.IntRange(min=0),
    default=30,
    show_default=True,
    help="Days after creation a rule transitions objects (at least 30 into the IA classes, "
    "which S3 requires).",
)
@click.option(
    "--expire-days", type=click.IntRange(min=1), default=30, show_default=True,
    help="Days after creation an --expire rule deletes objects.",
)  # fmt: skip
@click.option(
    "--noncurrent-days", type=click.IntRange(min=1), default=30, show_default=True,
    help="Days after a version stops being current that it expires.",
)  # fmt: skip
@click.option(
    "--upload-days", type=click.IntRange(min=1), default=7, show_default=True,
    help="Days after an incomplete multipart upload began that it is aborted.",
)  # fmt: skip
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="table: for people, then per bucket the lifecycle JSON; json: everything, with exact "
    "amounts as decimal strings (USD to 1e-9).",
)
@click.option(
    "--apply",
    "do_apply",
    is_flag=True,
    help="After printing them, put the merged lifecycle configurations on the buckets.",
)
@pass_app
def recommend_command(app: App, fmt: str, do_apply: bool, **flags: Any) -> None:
    """Lifecycle rules for S3 prefixes nothing consumed in the lookback window.

    Per prefix (an S3 dataset with the datasets under it) that nobody read and nothing flowed
    from: the transition to a colder class that saves the most (or, with --expire, expiry),
    expiry of noncurrent versions and the abort of incomplete multipart uploads. Each with its
    monthly saving from the price table, less transition request fees and minimum storage
    duration charges, and the days it takes to pay back; one that costs more than it saves is
    not recommended and the table says why. Per bucket, the exact lifecycle configuration JSON
    that `aws s3api put-bucket-lifecycle-configuration` takes: the bucket's existing rules (read
    with GetBucketLifecycleConfiguration) and the new ones. Nothing changes unless --apply is
    given.

    \b
    Examples:
      lineagegraph recommend --bucket acme-raw
      lineagegraph recommend --to GLACIER_IR --to DEEP_ARCHIVE --format json
      lineagegraph recommend --bucket acme-raw --apply
    """
    from lineagegraph.harvest.s3.client import make_client  # boto3: only when run
    from lineagegraph.reports.recommend import (
        Policy,
        apply,
        configurations,
        document,
        recommend,
        table,
    )

    options = build_options(
        app.settings.reports,
        "recommend",
        as_of=flags["as_of"],
        lookback_days=flags["lookback_days"],
        exclude=flags["exclude"],
        buckets=flags["bucket"],
    )
    policy = Policy(
        classes=tuple(flags["classes"]),
        allow_expire=flags["allow_expire"],
        transition_days=flags["transition_days"],
        expire_days=flags["expire_days"],
        noncurrent_days=flags["noncurrent_days"],
        upload_days=flags["upload_days"],
    )
    with read_store(app) as store:
        found = recommend(store, options, policy)
    client = make_client(app.settings.s3)
    lifecycle = configurations(client, found)
    if fmt == "json":
        click.echo(document(found, lifecycle))
    else:
        click.echo(table(found, terminal_width()))
        for bucket, configuration in lifecycle.items():
            click.echo(
                f"\naws s3api put-bucket-lifecycle-configuration --bucket {bucket} "
                "--lifecycle-configuration file://lifecycle.json  # lifecycle.json:"
            )
            click.echo(json.dumps(configuration, indent=2, ensure_ascii=False))
    if do_apply:
        for bucket, configuration in lifecycle.items():
            apply(client, bucket, configuration)
            click.echo(
                f"applied {len(configuration['Rules'])} lifecycle rules to {bucket}", err=True
            )
