"""tag, untag and tags: classifications stated by hand, and the tags a column or an asset
carries along lineage with their why (docs/classifications.md)."""

from __future__ import annotations

from pathlib import Path

import click

from lineagegraph.cli.app import App, cli
from lineagegraph.cli.common import emit, format_option, output_option, pass_app, read_store
from lineagegraph.cli.lineage import refuse_page_on_terminal
from lineagegraph.questions.tag_answers import TAG_FORMATS, resolve_target, state, tags_of

TARGET_HELP = (
    "ASSET#COLUMN or ASSET: the asset a urn, an S3 path (s3a://bucket/prefix/) or a "
    "Snowflake name (db.schema.table), the column matched as typed, then upper- and lower-cased"
)


def _by_option(func):  # type: ignore[no-untyped-def]
    return click.option("--by", help="Who states it (default: the user running the command).")(func)


@cli.command()
@click.argument("target")
@click.argument("tag")
@click.option("--reason", help="Why: shown with the tag and every copy derived from it.")
@click.option(
    "--block",
    is_flag=True,
    help="Instead of tagging, stop the key TAG from travelling into TARGET along lineage "
    "(from every source, or only from --from).",
)
@click.option(
    "--from",
    "block_from",
    metavar="SOURCE",
    help="With --block: only the edge from this column or asset is blocked.",
)
@_by_option
@pass_app
def tag(
    app: App,
    target: str,
    tag: str,
    reason: str | None,
    block: bool,
    block_from: str | None,
    by: str | None,
) -> None:
    """State the classification TAG (KEY or KEY=VALUE) on TARGET, by hand.

    TARGET is {target_help}. The tag is stored as a fact with source `manual`, who (--by or
    the user) and when; stating it again replaces its value and reason. Tags derived from it
    along lineage are computed when asked for (`lineagegraph tags`), never stored, so `untag`
    takes them all away. A target not in the graph fails with exit 7.

    \b
    Examples (names from `lineagegraph demo`):
      lineagegraph tag 'RAW.PUBLIC.USERS#EMAIL' pii=email --reason "customer e-mail"
      lineagegraph tag 'ANALYTICS.MARTS.DAILY_ACTIVE#USERS' pii --block --reason "counts only"
    """
    if block_from is not None and not block:
        raise click.UsageError("--from goes with --block")
    with read_store(app) as store:
        found = resolve_target(store, app.settings, target)
        source = resolve_target(store, app.settings, block_from) if block_from else None
        fact = state(store, found, tag, reason=reason, by=by, block=block, block_from=source)
    what = f"blocked {fact.key} into" if block else f"tagged {tag} on"
    click.echo(f"{what} {found.urn}" + (f" from {source.urn}" if source else ""))


@cli.command()
@click.argument("target")
@click.argument("key")
@click.option("--reason", help="Why it is withdrawn (kept with the fact).")
@click.option("--block", is_flag=True, help="Lift a block of KEY on TARGET instead.")
@_by_option
@pass_app
def untag(app: App, target: str, key: str, reason: str | None, block: bool, by: str | None) -> None:
    """Withdraw the classification KEY stated by hand on TARGET (or, with --block, a block).

    TARGET is {target_help}. The fact stays in the graph with the time it was withdrawn, and
    every tag derived from it is gone from the next answer. Tags stated by a harvested source
    are withdrawn at that source. A tag never stated by hand on TARGET fails with exit 7.

    \b
    Example:
      lineagegraph untag 'RAW.PUBLIC.USERS#EMAIL' pii --reason "hashed at the source now"
    """
    with read_store(app) as store:
        found = resolve_target(store, app.settings, target)
        state(store, found, key, reason=reason, by=by, removed=True, block=block)
    click.echo(f"{'unblocked' if block else 'untagged'} {key} on {found.urn}")


@cli.command()
@click.argument("target")
@format_option(
    TAG_FORMATS, "table/csv/markdown for people, json for programs, mermaid/dot/html for the paths."
)
@output_option("Write to this file instead of the terminal.")
@pass_app
def tags(app: App, target: str, fmt: str, output: Path | None) -> None:
    """The tags TARGET carries: its own, and those lineage brings from upstream, each with
    its origin, the path of urns and the hops; then where a tag was stopped on the way and
    why (a masking function, an aggregate, a block). For an asset, its columns' tags too.

    TARGET is {target_help}.

    \b
    Examples (names from `lineagegraph demo`):
      lineagegraph tags 'ANALYTICS.MARTS.DAILY_ACTIVE#USERS'
      lineagegraph tags s3://acme-curated/events_daily --format json
    """
    refuse_page_on_terminal(fmt, output)
    with read_store(app) as store:
        answer = tags_of(store, app.settings, target)
    emit(answer.render(fmt), output)


for _command in (tag, untag, tags):
    _command.help = (_command.help or "").replace("{target_help}", TARGET_HELP)
