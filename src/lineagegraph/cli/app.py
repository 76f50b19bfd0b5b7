"""The root command group, its global options, and the mapping of errors to exit codes."""

from __future__ import annotations

import errno
import os
import signal
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click

from lineagegraph import __version__, logs
from lineagegraph.errors import Interrupted, LineageGraphError, StoreError
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.settings import Settings, load_settings, redact, secret_values

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class App:
    """What every command needs: settings (loaded on first use) and a store to open."""

    def __init__(self, config: Path | None, overrides: dict[str, Any], debug: bool) -> None:
        self.config = config
        self.overrides = overrides
        self.debug = debug
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config, **self.overrides)
        return self._settings

    def secrets(self) -> list[str]:
        """The secret values of the settings (none if they could not be loaded)."""
        return secret_values(self._settings) if self._settings is not None else []

    @contextmanager
    def store(self) -> Iterator[GraphStore]:
        with open_store(self.settings.graph) as store:
            yield store


class LineageGroup(click.Group):
    """Turns known errors into one clear line and an exit code; --debug adds the traceback.

    Secrets never reach those lines: URI passwords and SecretStr values are masked.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LineageGraphError as exc:
            _fail(ctx, f"error: {exc}", exc.exit_code)
        except Interrupted as exc:
            _fail(
                ctx,
                f"{exc}; what was written so far is kept, the next run resumes",
                128 + exc.signum,
            )
        except KeyboardInterrupt:
            _fail(ctx, "interrupted; what was written so far is kept, the next run resumes", 130)
        except BrokenPipeError:
            # The reader of stdout went away (`... | head -1`): stop quietly, as a process
            # killed by SIGPIPE would, and keep Python from failing to flush at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(128 + signal.SIGPIPE)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
            raise
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                _unexpected(ctx, exc)
            what = f"cannot write {exc.filename}" if exc.filename else "a write failed"
            _fail(
                ctx,
                f"error: disk full: {what} ({exc.strerror}); free space and run the command again",
                StoreError.exit_code,
            )
        except Exception as exc:
            _unexpected(ctx, exc)


def _unexpected(ctx: click.Context, exc: Exception) -> NoReturn:
    """A bug, not the user's world: its type, and the traceback with --debug."""
    hint = "" if _debug(ctx) else " (rerun with --debug for details)"
    _fail(ctx, f"error: unexpected {type(exc).__name__}: {exc}{hint}", 1)


def _fail(ctx: click.Context, line: str, code: int) -> NoReturn:
    """Print one line on stderr (after the traceback with --debug), secrets masked, and exit."""
    secrets = ctx.obj.secrets() if isinstance(ctx.obj, App) else []
    if _debug(ctx):
        click.echo(redact(traceback.format_exc().rstrip(), secrets), err=True)
    click.echo(redact(line, secrets), err=True)
    sys.exit(code)


def _debug(ctx: click.Context) -> bool:
    return isinstance(ctx.obj, App) and ctx.obj.debug


@click.group(cls=LineageGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="lineagegraph")
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="TOML settings file (default: $LINEAGEGRAPH_CONFIG, else config/lineagegraph.toml).",
)
@click.option(
    "--graph",
    "graph_uri",
    metavar="URI",
    help="Neo4j bolt:// or neo4j:// URI. Default: the embedded store (no server to set up).",
)
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Directory of the embedded store (default ./.lineagegraph).",
)
@click.option(
    "--debug", is_flag=True, help="Show tracebacks and debug logs (exit codes stay the same)."
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Log lines on stderr as text, or as one JSON object per line (for schedulers).",
)
@click.pass_context
def cli(
    ctx: click.Context,
    config: Path | None,
    graph_uri: str | None,
    data_dir: Path | None,
    debug: bool,
    log_format: str,
) -> None:
    """Harvest lineage from S3, Spark, Snowflake, dbt and OpenLineage into one graph, and ask
    it questions.

    \b
    Start here:
      lineagegraph demo                 the whole tool on a small local platform
      lineagegraph harvest list         the sources, and what to set to harvest them
      lineagegraph harvest all          every configured source (for cron and Airflow)
      lineagegraph status               what the graph holds, recent harvests
      lineagegraph upstream NAME        where NAME's data comes from (also: impact, path)

    Settings come from LINEAGEGRAPH_* environment variables and a TOML file
    (see config/lineagegraph.example.toml). Without --graph or LINEAGEGRAPH_GRAPH__URI the
    embedded store under ./.lineagegraph is used.
    """
    logs.configure(debug, log_format)
    graph: dict[str, Any] = {}
    if graph_uri:
        graph["uri"] = graph_uri
    if data_dir:
        graph["data_dir"] = data_dir
    ctx.obj = App(config, {"graph": graph} if graph else {}, debug)
