"""`harvest dbt`: write a dbt target directory's lineage into the graph, one :HarvestRun.

The parsing (lineagegraph.harvest.dbt.project) is pure; this module only records the run and
writes the values: relations, transformations, flows, columns, then the test results (:Check).
"""

from __future__ import annotations

import queue
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from lineagegraph.errors import ConfigError
from lineagegraph.graph.base import GraphStore
from lineagegraph.graph.history import History
from lineagegraph.harvest.base import HarvestReport, Progress, Tick
from lineagegraph.harvest.dbt.artifacts import load
from lineagegraph.harvest.dbt.classify import SOURCE, classifications
from lineagegraph.harvest.dbt.naming import Naming
from lineagegraph.harvest.dbt.project import SYSTEM, Project
from lineagegraph.harvest.dbt.settings import DEFAULT_META_KEYS
from lineagegraph.harvest.tag_changes import tag_changes
from lineagegraph.masking import DEFAULT_NAMES
from lineagegraph.model import CheckResult, Item
from lineagegraph.pipeline import HarvestRun, harvest_run

if TYPE_CHECKING:
    from lineagegraph.settings import Settings

CHUNK = 2000  # values handed from the parsing thread to the writer at a time
AHEAD = 8  # chunks parsed ahead of the writer at most: bounds memory
T = TypeVar("T")


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
    masking: frozenset[str] = DEFAULT_NAMES,
) -> Project:
    """Load and check the artifacts under `target` and name their relations (no store)."""
    artifacts = load(target)
    naming = Naming.of(artifacts.adapter, snowflake_account, namespace)
    return Project(artifacts, naming, column_lineage=column_lineage, masking=masking)


def harvest_dbt(
    store: GraphStore,
    target: Path,
    *,
    snowflake_account: str | None = None,
    namespace: str | None = None,
    column_lineage: bool = True,
    masking: frozenset[str] = DEFAULT_NAMES,
    tag_keys: Sequence[str] = ("*",),
    meta_keys: Sequence[str] = DEFAULT_META_KEYS,
) -> tuple[HarvestRun, DbtReport]:
    """Write the relations, transformations, flows and columns of a dbt target directory, and
    the classifications its tags and meta state (harvest/dbt/classify.py).

    Every harvest reads the whole manifest (writes are idempotent); the run's watermark is the
    manifest's generation time. Bad artifacts fail before anything is written. Classifications
    are written as changes (harvest/tag_changes.py): one the project no longer states on its
    relations is withdrawn at the manifest's time.
    """
    project = read_project(
        target,
        snowflake_account=snowflake_account,
        namespace=namespace,
        column_lineage=column_lineage,
        masking=masking,
    )
    report = DbtReport(project.naming.adapter)
    history = History()  # each model's run: what its earlier runs read and it no longer does
    # stops, and the columns a run that worked out column lineage no longer derives
    with harvest_run(store, SYSTEM, str(project.artifacts.target.resolve())) as (run, writer):
        writer.add_all(parsed_ahead(_runs_told(project.items(), history)))
        writer.flush()
        for job, at in project.column_runs.items():  # filled as the items were made
            history.run(job, at, columns=True)
        history.write(store)
        report.checks = project.checks()
        writer.add_all(report.checks)  # the writer stores them after their assets and columns
        columns, stated = classifications(project, tag_keys, meta_keys)
        relations = set(project.urns.values())
        changed, removed = tag_changes(
            store,
            SOURCE,
            stated,
            in_scope=lambda t: t in relations or t.rpartition("#")[0] in relations,
            at=project.at,
            by=str(project.artifacts.manifest["metadata"].get("invocation_id") or ""),
            gone="no longer in the dbt project",
        )
        writer.add_all([*columns, *changed, *removed])
        project.report.add("tags", len(stated))
        project.report.add("tags_stated", len(changed))
        project.report.add("tags_removed", len(removed))
        report.counts = dict(project.report.counts)
        report.problems = project.report.problems
        run.counts.update({f"dbt_{k}": v for k, v in report.counts.items()})
        run.watermark = project.at
        if report.problems:
            run.error = f"{len(report.problems)} problems; first: {report.problems[0]}"
    return run, report


@dataclass
class DbtHarvester:
    """`harvest dbt`: a dbt project's target directory ([dbt] target_path, or `target`)."""

    target: Path | None = None
    name = "dbt"
    section = "dbt"
    needs = "[dbt] target_path (a dbt project's target directory)"

    def not_configured(self, settings: Settings) -> str | None:
        return None if self.target or settings.dbt.target_path else "no [dbt] target_path"

    def run(
        self, store: GraphStore, settings: Settings, *, progress: Progress
    ) -> list[HarvestReport]:
        target = self.target or settings.dbt.target_path
        if target is None:
            raise ConfigError(
                "no dbt target directory: give --target-path or set [dbt] target_path "
                "(LINEAGEGRAPH_DBT__TARGET_PATH)"
            )
        progress(Tick(str(target), 0, "models"))
        run, report = harvest_dbt(
            store,
            target,
            snowflake_account=settings.identity.snowflake_account,
            namespace=settings.dbt.namespace,
            column_lineage=settings.dbt.column_lineage,
            masking=settings.masking.names,
            tag_keys=settings.dbt.tag_keys,
            meta_keys=settings.dbt.meta_keys,
        )
        progress(Tick(str(target), report.counts.get("models", 0), "models"))
        return [HarvestReport.of_run(run, report.problems, [], summary(target, run, report))]


def summary(target: Path, run: HarvestRun, report: DbtReport) -> str:
    """The line a person reads about a harvest of `target`."""
    c = report.counts
    tests = Counter(check.status for check in report.checks)
    malformed = c.get("skipped_bad_nodes", 0)
    return (
        f"{target}: {report.adapter} project, {c.get('models', 0)} models, "
        f"{c.get('seeds', 0)} seeds, {c.get('snapshots', 0)} snapshots, "
        f"{c.get('sources', 0)} sources ({c.get('ephemeral', 0)} ephemeral, "
        f"{c.get('disabled', 0)} disabled{f', {malformed} malformed' if malformed else ''} "
        f"skipped), {c.get('columns', 0)} columns, "
        f"{c.get('column_feeds', 0)} column feeds ({c.get('column_feeds_masked', 0)} masked), "
        f"{c.get('tags', 0)} tags ({c.get('tags_stated', 0)} new or changed, "
        f"{c.get('tags_removed', 0)} withdrawn); tests: "
        + (", ".join(f"{n} {s}" for s, n in sorted(tests.items())) or "none")
        + f"; run {run.id}: {run.status}"
    )


def _runs_told(items: Iterable[Item], history: History) -> Iterator[Item]:
    """`items`, each model's run and what it produced told to `history` on the way (drift,
    docs/history.md)."""
    for item in items:
        history.take((item,))
        yield item


def parsed_ahead(items: Iterable[T]) -> Iterator[T]:
    """`items`, produced on a thread of their own: parsing SQL (Python) and writing (the store
    server, while this thread waits on its socket) then use both cores. Order is kept, so
    nodes still come before the edges that need them; an error in parsing is raised here."""
    chunks: queue.Queue[list[T] | BaseException | None] = queue.Queue(AHEAD)
    stop = threading.Event()

    def produce() -> None:
        try:
            chunk: list[T] = []
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
