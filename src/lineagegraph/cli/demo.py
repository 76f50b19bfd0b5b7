"""`lineagegraph demo`: the whole tool on a fresh machine, in one command."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lineagegraph.cli.app import cli
from lineagegraph.output import terminal_width
from lineagegraph.render.text import impact_text, paths_text

if TYPE_CHECKING:  # the demo brings the Snowflake connector and boto3: imported when run
    from lineagegraph.demo.run import DemoResult


@cli.command()
@click.option(
    "--workdir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("lineagegraph-demo"),
    show_default=True,
    help="Where the demo keeps its graph, Spark output and local bucket mirror.",
)
def demo(workdir: Path) -> None:
    """Build a small S3 + Spark + Snowflake platform here, harvest it, and ask the graph.

    Starts a local S3 server (moto) with raw event files, runs a local Spark job that turns
    them into curated Parquet (with the lineage listener), fills a local Snowflake stand-in
    (fakesnow) with ACCESS_HISTORY for COPY INTO a staging table, a mart and a dashboard view
    (run after Spark wrote the data) and with COLUMNS (the mart's SESSIONS column dropped a day
    ago), harvests all three into the graph under WORKDIR/graph and prints the path from a raw
    object to the dashboard, the impact of the staging table, and the orphaned-S3 cost report.
    Every step must succeed: one that does not stops the demo with the step named and exit code
    5. Run it again into the same WORKDIR and it gives the same answers. Needs the demo extra:
    pip install 'lineagegraph[demo]' (and Java 17).

    \b
    Afterwards, point the shell at the graph it built and ask it:
      export LINEAGEGRAPH_GRAPH__DATA_DIR=$PWD/lineagegraph-demo/graph
      lineagegraph status
      lineagegraph downstream s3://acme-raw/events
      lineagegraph schema-history ANALYTICS.MARTS.DAILY_ACTIVE
    """
    from lineagegraph.demo.run import run_demo

    result = run_demo(workdir, echo=lambda line: click.echo(line, err=True))
    click.echo(summary(result, workdir))


def summary(result: DemoResult, workdir: Path) -> str:
    graph = result.settings.graph.data_dir
    lines = [
        f"\nEnd to end: {result.raw_object}",
        f"  is part of {result.raw_dataset}, which flows to the dashboard view:",
        paths_text([result.path]) if result.path else "  (no path found: see the logs above)",
        "",
        impact_text(result.impact),
        "",
        result.orphans.render("table", terminal_width()),
        f"\nDone in {result.seconds:.0f} s. The graph stays in {graph}.",
        "Point this shell at it (or give each command --data-dir "
        f"{shlex.quote(str(graph))}), then ask it:",
        f"  export LINEAGEGRAPH_GRAPH__DATA_DIR={shlex.quote(str(graph))}",
    ]
    command = invoked_as()
    hints = [
        "status",
        f"upstream {shlex.quote(result.dashboard)}",
        f"columns {shlex.quote(result.mart_revenue)}",
        f"schema-history {shlex.quote(result.mart)}",
        "orphans --format markdown",
    ]
    return "\n".join(lines + [f"  {command} {hint}" for hint in hints])


def invoked_as(argv0: str | None = None) -> str:
    """How to run lineagegraph again from the same shell, for hints that work as printed.

    A bare `lineagegraph` only when PATH finds this very program (an activated virtualenv);
    else the path it was started by (`.venv/bin/lineagegraph`), or `python -m` for a module run.
    """
    argv0 = sys.argv[0] if argv0 is None else argv0
    if Path(argv0).name != "lineagegraph":
        return f"{shlex.quote(sys.executable)} -m lineagegraph.cli"
    on_path = shutil.which("lineagegraph")
    if on_path and os.path.exists(argv0) and os.path.samefile(on_path, argv0):
        return "lineagegraph"
    return shlex.quote(argv0)
