"""`harvest dbt`: write a dbt target directory's lineage into the graph, one :HarvestRun.

The parsing (lineagegraph.harvest.dbt.project) is pure; this module only records the run and
writes the values. Test results are returned as CheckResult values for the quality writer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.dbt.artifacts import load
from lineagegraph.harvest.dbt.naming import Naming
from lineagegraph.harvest.dbt.project import SYSTEM, Project
from lineagegraph.model import CheckResult, Item
from lineagegraph.pipeline import HarvestRun, harvest_run

CHUNK = 2000  # values handed from the parsing thread to the writer at a time
AHEAD = 8  # chunks parsed ahead of the writer at most: bounds memory


@dataclass
class DbtReport:
    """What a dbt harvest read: counts by kind, problems, and the test results."""

    adapter: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)


def read_project(
    target: Path,
    *,
    snowflake_account: str | None = None,
    namespace: str | None = None,
    column_lineage: bool = True,
) -> Project:
    """Load and check the artifacts under `target` and name their relations (no store)."""
    artifacts = load(target)
    naming = Naming.of(artifacts.adapter, snowflake_account, namespace)
    return Project(artifacts, naming, column_lineage=column_lineage)


def harvest_dbt(
    store: GraphStore,
    target: Path,
    *,
    snowflake_account: str | None = None,
    namespace: str | None = None,
    column_lineage: bool = True,
) -> tuple[HarvestRun, DbtReport]:
    """Write the relations, transformations, flows and columns of a dbt target directory.

    Every harvest reads the whole manifest (writes are idempotent); the run's watermark is the
    manifest's generation time. Bad artifacts fail before anything is written.
    """
    project = read_project(
        target, snowflake_account=snowflake_account, namespace=namespace,
        column_lineage=column_lineage,
    )  # fmt: skip
    report = DbtReport(project.naming.adapter)
    with harvest_run(store, SYSTEM, str(project.artifacts.target.resolve())) as (run, writer):
        writer.add_all(parsed_ahead(project.items()))
        report.checks = project.checks()
        report.counts = dict(project.report.counts)
        report.problems = project.report.problems
        run.counts.update({f"dbt_{k}": v for k, v in report.counts.items()})
        run.watermark = project.at
        if report.problems:
            run.error = f"{len(report.problems)} problems; first: {report.problems[0]}"
    return run, report


def parsed_ahead(items: Iterable[Item]) -> Iterator[Item]:
    """`items`, produced on a thread of their own: parsing SQL (Python) and writing (the store
    server, while this thread waits on its socket) then use both cores. Order is kept, so
    nodes still come before the edges that need them; an error in parsing is raised here."""
    chunks: queue.Queue[list[Item] | BaseException | None] = queue.Queue(AHEAD)
    stop = threading.Event()

    def produce() -> None:
        try:
            chunk: list[Item] = []
            for item in items:
                chunk.append(item)
                if len(chunk) >= CHUNK:
                    chunks.put(chunk)
                    chunk = []
                    if stop.is_set():
                        return
            chunks.put(chunk)
            chunks.put(None)
        except BaseException as exc:  # handed to the consumer, which raises it
            chunks.put(exc)

    thread = threading.Thread(target=produce, name="dbt-parse", daemon=True)
    thread.start()
    try:
        while (chunk := chunks.get()) is not None:
            if isinstance(chunk, BaseException):
                raise chunk
            yield from chunk
    finally:
        stop.set()
        while thread.is_alive():  # let a producer blocked on a full queue see `stop`
            with suppress(queue.Empty):
                chunks.get(timeout=0.1)
