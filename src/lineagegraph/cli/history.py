"""diff and history: what changed in the lineage between two times, and one asset's timeline
(docs/history.md)."""

from __future__ import annotations

from pathlib import Path

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
from lineagegraph.cli.lineage import refuse_page_on_terminal
from lineagegraph.questions import answers, history
from lineagegraph.render.formats import FORMATS


@cli.command()
@click.argument("name", required=False)
@click.option(
    "--since", type=TimeParam(), metavar="TIME", required=True,
    help="The window's start: 2024-06-30, 2024-06-30T12:00:00Z or epoch ms.",
)  # fmt: skip
@click.option("--until", type=TimeParam(), metavar="TIME", help="The window's end (default: now).")
@click.option(
    "--depth",
    type=click.IntRange(1, 1000),
    default=history.DEFAULT_DEPTH,
    show_default=True,
    help="With NAME: how many hops around it, upstream and downstream.",
)
@output_option("Write to this file instead of the terminal (e.g. diff.html).")
@format_option(FORMATS, "table/tree for the terminal, json for programs, mermaid/dot/html.")
@pass_app
def diff(
    app: App,
    name: str | None,
    since: int,
    until: int | None,
    depth: int,
    output: Path | None,
    fmt: str,
) -> None:
    """What changed in the lineage between --since and --until: the assets, columns and lineage
    edges (FLOWS_TO, FEEDS, READS_FROM, WRITES_TO) added and removed, and the schema changes
    (columns added, dropped, retyped), in the whole graph or within --depth hops of NAME.

    NAME is a urn, an S3 path (s3a://bucket/prefix/) or a Snowflake name (db.schema.table).
    The graph at --since is compared with the graph at --until: what came
    and went in between is no change. Pictures draw the asset-level changes, removed ones
    dashed.

    \b
    Examples (names from `lineagegraph demo`):
      lineagegraph diff --since 2024-06-01
      lineagegraph diff --since 2024-06-01 --until 2024-06-30 RAW.PUBLIC.EVENTS_DAILY --depth 2
      lineagegraph diff --since 2024-06-01 --format html -o diff.html
    """
    refuse_page_on_terminal(fmt, output)
    with read_store(app) as store:
        answer = answers.diff(store, app.settings, since, until, name, depth=depth)
    emit(answer.render(fmt), output)


@cli.command("history")
@click.argument("name")
@output_option("Write to this file instead of the terminal.")
@format_option(("table", "json"), "table for the terminal, json for programs.")
@pass_app
def history_command(app: App, name: str, output: Path | None, fmt: str) -> None:
    """The timeline of NAME: when it was first seen, deleted and back, when each of its columns
    was first seen, when each of its lineage edges started, stopped and resumed, and when its
    schema changed.

    NAME is a urn, an S3 path (s3a://bucket/prefix/) or a Snowflake name (db.schema.table).

    \b
    Examples (names from `lineagegraph demo`):
      lineagegraph history RAW.PUBLIC.EVENTS_DAILY
      lineagegraph history s3://acme-raw/events --format json
    """
    with read_store(app) as store:
        answer = answers.timeline(store, app.settings, name)
    emit(answer.render(fmt), output)
