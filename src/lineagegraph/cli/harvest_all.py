"""`harvest all`: every configured source, one after another, for cron and Airflow."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from lineagegraph.cli.app import App, harvest
from lineagegraph.errors import ConfigError, HarvestError, LineageGraphError
from lineagegraph.pipeline import HOST, PID, harvest_lock, lock_file, now_ms
from lineagegraph.settings import Settings

log = logging.getLogger("lineagegraph.harvest.all")
pass_app = click.make_pass_decorator(App)

NODE_COUNTS = ("files", "datasets", "merge_tables", "merge_datasets", "merge_files",
               "merge_transformations", "merge_columns")  # fmt: skip
EDGE_COUNTS = ("merge_flows", "merge_reads_from", "merge_writes_to", "merge_column_feeds",
               "merge_part_of")  # fmt: skip


@dataclass(frozen=True)
class Source:
    """A source `harvest all` runs: its `harvest` subcommand, and whether settings ask for it."""

    name: str
    system: str  # the :HarvestRun system its runs are recorded under
    configured: Callable[[Settings], bool]
    why_not: str
    setting: str  # what to configure to make it run


SOURCES = (
    Source("s3", "s3", lambda s: bool(s.s3.buckets), "no [s3] buckets", "[s3] buckets"),
    Source(
        "snowflake",
        "snowflake",
        lambda s: bool(s.snowflake.account),
        "no [snowflake] account",
        "[snowflake] account",
    ),
    Source(
        "spark",
        "spark",
        lambda s: _has_files(s.spark.spool_dir),
        "spark spool is empty",
        "[spark] spool_dir (a directory of spooled Spark events)",
    ),
    Source(
        "dbt",
        "dbt",
        lambda s: s.dbt.target_path is not None,
        "no [dbt] target_path",
        "[dbt] target_path (a dbt project's target directory)",
    ),
)


def _has_files(directory: Path) -> bool:
    return directory.is_dir() and any(p.is_file() for p in directory.iterdir())


@harvest.command("all")
@click.option(
    "--only", multiple=True, type=click.Choice([s.name for s in SOURCES]),
    help="Run just these sources (repeatable); default: every configured one.",
)  # fmt: skip
@click.pass_context
@pass_app
def harvest_all(app: App, ctx: click.Context, only: tuple[str, ...]) -> None:
    """Harvest every source configured in settings, one after another.

    A failing source does not stop the others; the command exits non-zero if any failed.
    One summary line per source (status, nodes and edges written, time, watermark); with
    --log-format json each is also a structured log record. Sources not configured are
    reported as skipped; if none is, the command fails (exit 2) and says what to configure.
    The store's harvest lock (held by every harvest) keeps two runs from overlapping.

    \b
    Examples:
      lineagegraph --config /etc/lineagegraph.toml harvest all          # cron
      lineagegraph --log-format json harvest all --only snowflake       # Airflow task
    """
    settings = app.settings
    chosen = [source for source in SOURCES if not only or source.name in only]
    if not any(source.configured(settings) for source in chosen):
        raise ConfigError(
            "nothing to harvest: "
            + "; ".join(f"{source.name}: {source.why_not}" for source in chosen)
            + ". Configure at least one of "
            + ", ".join(source.setting for source in chosen)
            + " (in the config file or as LINEAGEGRAPH_* variables)"
        )
    failed: list[str] = []
    with harvest_lock(lock_file(settings.graph.uri or str(settings.graph.data_dir))):
        for source in chosen:
            if not source.configured(settings):
                click.echo(f"{source.name}: skipped ({source.why_not})")
                continue
            ok, line = _run(ctx, app, source)
            click.echo(line)
            if not ok:
                failed.append(source.name)
    if failed:
        raise HarvestError(f"{len(failed)} source(s) failed: {', '.join(failed)}")


def _run(ctx: click.Context, app: App, source: Source) -> tuple[bool, str]:
    since, started = now_ms(), time.monotonic()
    error: str | None = None
    try:
        ctx.invoke(harvest.commands[source.name])
    except LineageGraphError as exc:
        error = str(exc)
    except SystemExit as exc:
        error = None if exc.code in (0, None) else f"exit code {exc.code}"
    except Exception as exc:  # one source's bug must not stop the others
        error = f"unexpected {type(exc).__name__}: {exc}"
    seconds = time.monotonic() - started
    with app.store() as store:
        found = store.read(
            "harvest_runs_since",
            {"system": source.system, "since": since, "host": HOST, "pid": PID},
        )
    runs = [r["run"] for r in found]
    return _summary(source.name, runs, seconds, error)


def _summary(
    name: str, runs: list[dict[str, Any]], seconds: float, error: str | None
) -> tuple[bool, str]:
    statuses = sorted({r.get("status", "?") for r in runs}) or ["no run recorded"]
    ok = error is None and statuses == ["success"]
    nodes = sum(int(r.get(f"count_{k}", 0) or 0) for r in runs for k in NODE_COUNTS)
    edges = sum(int(r.get(f"count_{k}", 0) or 0) for r in runs for k in EDGE_COUNTS)
    marks = [r["watermark"] for r in runs if r.get("watermark") is not None]
    watermark = (
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(max(marks) / 1000)) if marks else "-"
    )
    status = "ok" if ok else "FAILED" if error or "failed" in statuses else "/".join(statuses)
    line = (f"{name}: {status} in {seconds:.1f} s, {len(runs)} run(s), {nodes:,} nodes and "
            f"{edges:,} edges written, watermark {watermark}")  # fmt: skip
    if error:
        line += f": {error}"
    log.info(line, extra={"source": name, "status": status, "seconds": round(seconds, 3),
                          "runs": len(runs), "nodes": nodes, "edges": edges,
                          "watermark": watermark, "error": error})  # fmt: skip
    return ok, line
