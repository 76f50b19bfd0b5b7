"""What the command modules share: the App they are passed, the --format and -o options, the
store a read command opens, and how an answer is printed or written."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from lineagegraph.cli.app import App
from lineagegraph.graph.store import GraphStore
from lineagegraph.output import write_file
from lineagegraph.reports.options import parse_time
from lineagegraph.store_check import require_existing_store

F = TypeVar("F", bound=Callable[..., Any])

pass_app = click.make_pass_decorator(App)

NAME_HELP = "a urn, an S3 path (s3a://bucket/prefix/) or a Snowflake name (db.schema.table)"


def format_option(choices: Sequence[str], help: str) -> Callable[[F], F]:
    """`--format` (the `fmt` parameter), table unless asked otherwise."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default="table",
        show_default=True,
        help=help,
    )


def output_option(help: str) -> Callable[[F], F]:
    """`-o/--output FILE`, written whole or not at all (output.write_file)."""
    return click.option(
        "-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help=help
    )


@contextmanager
def read_store(app: App) -> Iterator[GraphStore]:
    """The store of a read command: one that must already exist (store_check)."""
    require_existing_store(app.settings)
    with app.store() as store:
        yield store


def emit(text: str, output: Path | None) -> None:
    """Print, or write the whole file (or nothing: output.write_file)."""
    if output is None:
        click.echo(text)
        return
    write_file(output, text + "\n")
    click.echo(f"wrote {output}", err=True)


class TimeParam(click.ParamType):
    """A time as a user types it (2024-06-30, 2024-06-30T12:00:00Z, epoch ms): epoch ms."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_time(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
