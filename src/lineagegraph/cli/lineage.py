"""path, upstream, downstream, impact, columns and schema-history: the lineage questions (issue 6).

Each command resolves what the user typed to a urn, asks lineagegraph.questions.lineage, and prints
the answer with lineagegraph.render as a table, a tree, JSON, Mermaid, DOT or an HTML page.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from lineagegraph.cli.app import App, cli
from lineagegraph.cli.common import (
    NAME_HELP,
    TimeParam,
    emit,
    format_option,
    output_option,
    pass_app,
    read_store,
)
from lineagegraph.errors import UsageError
from lineagegraph.output import FORMATS as ROW_FORMATS
from lineagegraph.questions import answers, lineage
from lineagegraph.questions.lineage import Direction
from lineagegraph.render.formats import FORMATS


def output_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--format, --output, --include-deleted and --as-of, shared by every lineage command."""
    func = click.option(
        "--as-of",
        type=TimeParam(),
        metavar="TIME",
        help="The lineage as it was then: 2024-06-30, 2024-06-30T12:00:00Z or epoch ms "
        "(default: now). See docs/history.md.",
    )(func)
    func = click.option(
        "--include-deleted",
        is_flag=True,
        help="Also follow and show soft-deleted assets and lineage that stopped holding.",
    )(func)
    func = output_option("Write to this file instead of the terminal (e.g. lineage.html).")(func)
    return format_option(
        FORMATS, "table/tree for the terminal, json for programs, mermaid/dot/html for a picture."
    )(func)


def refuse_page_on_terminal(fmt: str, output: Path | None) -> None:
    """An HTML page poured onto a terminal is a screenful of markup nobody asked for: without
    -o, `--format html` must go to a file or a pipe (`> lineage.html`)."""
    if fmt == "html" and output is None and sys.stdout.isatty():
        raise UsageError(
            "--format html makes a web page: write it to a file with -o lineage.html "
            "(or redirect stdout), then open it in a browser"
        )


def _traversal_command(direction: Direction) -> Callable[..., None]:
    direct = (
        "\n    Then the principals that read NAME or one of those assets straight from S3 (seen\n"
        "    by `harvest s3-access` in access logs or CloudTrail): no lineage edge shows them.\n"
        if direction == "upstream"
        else ""
    )
    summary, example = {
        "upstream": (
            "Every asset that feeds NAME",
            "lineagegraph upstream ANALYTICS.DASH.DAU_DASHBOARD --depth 3",
        ),
        "downstream": (
            "Every asset NAME flows into",
            "lineagegraph downstream s3://acme-raw/events --label Table",
        ),
    }[direction]

    @click.argument("name")
    @click.option(
        "--depth",
        type=click.IntRange(1, lineage.MAX_DEPTH),
        default=lineage.DEFAULT_DEPTH,
        show_default=True,
        help="How many hops to follow.",
    )
    @click.option(
        "--system",
        "systems",
        multiple=True,
        metavar="SYSTEM",
        help="Only show assets of this system (s3, snowflake, spark, file); repeatable.",
    )
    @click.option(
        "--label",
        "kinds",
        multiple=True,
        type=click.Choice(lineage.KINDS, case_sensitive=False),
        help="Only show assets of this kind; repeatable. Filters what is shown, not followed.",
    )
    @output_options
    @pass_app
    def command(
        app: App,
        name: str,
        depth: int,
        systems: tuple[str, ...],
        kinds: tuple[str, ...],
        fmt: str,
        output: Path | None,
        include_deleted: bool,
        as_of: int | None,
    ) -> None:
        refuse_page_on_terminal(fmt, output)
        with read_store(app) as store:
            answer = answers.traversal(
                store,
                app.settings,
                name,
                direction,
                depth=depth,
                systems=systems,
                kinds=kinds,
                include_deleted=include_deleted,
                as_of=as_of,
            )
        emit(answer.render(fmt), output)

    command.__doc__ = f"""{summary}, each once with its distance in hops.

    NAME is {NAME_HELP}.
    --system and --label choose what is shown; the search still runs through every asset.
    Each asset is listed with its classifications, on it or its columns, own and derived
    (JSON says why; `lineagegraph tags NAME` too).
    {direct}
    \b
    Examples (names from `lineagegraph demo`):
      {example}
      {example.split(" --")[0]} --format html -o lineage.html
    """
    return cli.command(direction)(command)


upstream = _traversal_command("upstream")
downstream = _traversal_command("downstream")


@cli.command("path")
@click.argument("source", metavar="FROM")
@click.argument("target", metavar="TO")
@click.option(
    "--depth",
    type=click.IntRange(1, lineage.MAX_PATH_DEPTH),
    default=10,
    show_default=True,
    help=f"Longest path to look for, in hops (at most {lineage.MAX_PATH_DEPTH}).",
)
@click.option(
    "--limit",
    type=click.IntRange(1, 10_000),
    default=lineage.DEFAULT_PATH_LIMIT,
    show_default=True,
    help="How many paths to list, shortest first.",
)
@output_options
@pass_app
def path_command(
    app: App,
    source: str,
    target: str,
    depth: int,
    limit: int,
    fmt: str,
    output: Path | None,
    include_deleted: bool,
    as_of: int | None,
) -> None:
    """The lineage paths from FROM to TO, shortest first.

    FROM and TO are each a urn, an S3 path (s3a://bucket/prefix/) or a Snowflake name
    (db.schema.table). An S3 object with no path of its own is looked up through the dataset
    it is part of (a note says so).

    \b
    Examples (names from `lineagegraph demo`):
      lineagegraph path s3://acme-raw/events ANALYTICS.DASH.DAU_DASHBOARD
      lineagegraph path s3a://acme-curated/events_daily/ raw.public.events_daily --format mermaid
    """
    refuse_page_on_terminal(fmt, output)
    with read_store(app) as store:
        answer = answers.path(
            store,
            app.settings,
            source,
            target,
            depth=depth,
            limit=limit,
            include_deleted=include_deleted,
            as_of=as_of,
        )
    for note in answer.answer.notes:
        click.echo(f"note: {note}", err=True)
    emit(answer.render(fmt, notes_shown=False), output)


@cli.command()
@click.argument("name")
@output_options
@pass_app
def impact(
    app: App,
    name: str,
    fmt: str,
    output: Path | None,
    include_deleted: bool,
    as_of: int | None,
) -> None:
    """What a change to NAME would affect: every asset downstream, grouped by system and kind,
    and the transformations that read NAME or any of them. Each asset is listed with its
    classifications, on it or its columns, own and derived (JSON says why).

    NAME is a urn, an S3 path (s3a://bucket/prefix/) or a Snowflake name (db.schema.table).

    \b
    Examples (names from `lineagegraph demo`):
      lineagegraph impact RAW.PUBLIC.EVENTS_DAILY
      lineagegraph impact s3://acme-raw/events --format html -o impact.html
    """
    refuse_page_on_terminal(fmt, output)
    with read_store(app) as store:
        answer = answers.impact(
            store, app.settings, name, include_deleted=include_deleted, as_of=as_of
        )
    emit(answer.render(fmt), output)


@cli.command()
@click.argument("column")
@click.option(
    "--direction",
    type=click.Choice(["both", *lineage.DIRECTIONS]),
    default="both",
    show_default=True,
    help="Which way to follow FEEDS from the column.",
)
@click.option(
    "--depth",
    type=click.IntRange(1, lineage.MAX_DEPTH),
    default=lineage.DEFAULT_DEPTH,
    show_default=True,
    help="How many hops to follow.",
)
@output_options
@pass_app
def columns(
    app: App,
    column: str,
    direction: str,
    depth: int,
    fmt: str,
    output: Path | None,
    include_deleted: bool,
    as_of: int | None,
) -> None:
    """Column lineage of ASSET#COLUMN: the columns it is derived from and those derived from it.

    The asset part is a urn, an S3 path (s3a://bucket/prefix/) or a Snowflake name
    (db.schema.table); the column is matched as typed, then upper- and lower-cased.

    \b
    Examples (names from `lineagegraph demo`):
      lineagegraph columns 'ANALYTICS.MARTS.DAILY_ACTIVE#REVENUE'
      lineagegraph columns 's3://acme-raw/events#amount' --direction downstream
    """
    refuse_page_on_terminal(fmt, output)
    with read_store(app) as store:
        answer = answers.columns(
            store,
            app.settings,
            column,
            depth=depth,
            include_deleted=include_deleted,
            direction=None if direction == "both" else direction,  # type: ignore[arg-type]
            as_of=as_of,
        )
    emit(answer.render(fmt), output)


@cli.command("schema-history")
@click.argument("name")
@format_option(ROW_FORMATS, "table for people, json for programs, csv or markdown.")
@output_option("Write to this file instead of the terminal.")
@pass_app
def schema_history_command(app: App, name: str, fmt: str, output: Path | None) -> None:
    """NAME's schema over time: a version per change of its columns and their types, as each
    source reports them (OpenLineage schema facets, dbt's catalog.json, Spark's output
    columns, Snowflake's ACCOUNT_USAGE.COLUMNS), dated by the source's event time. Each
    version after a source's first says what it changed: columns added, dropped and retyped
    (`breaking` when one was dropped or retyped).

    NAME is a urn, an S3 path (s3a://bucket/prefix/) or a Snowflake name (db.schema.table).

    \b
    Examples:
      lineagegraph schema-history ANALYTICS.MARTS.DAILY_ACTIVE
      lineagegraph schema-history snowflake://acme-demo/ANALYTICS.MARTS.DAILY_ACTIVE --format json
    """
    with read_store(app) as store:
        answer = answers.schema_history(store, app.settings, name)
    emit(answer.render(fmt), output)
