"""`harvest dbt`: write a dbt target directory's lineage into the graph, one :HarvestRun.

The parsing (lineagegraph.harvest.dbt.project) is pure; this module only records the run and
writes the values. Test results are returned as CheckResult values for the quality writer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.dbt.artifacts import load
from lineagegraph.harvest.dbt.naming import Naming
from lineagegraph.harvest.dbt.project import SYSTEM, Project
from lineagegraph.model import CheckResult
from lineagegraph.pipeline import HarvestRun, harvest_run


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
        writer.add_all(project.items())
        report.checks = project.checks()
        report.counts = dict(project.report.counts)
        report.problems = project.report.problems
        run.counts.update({f"dbt_{k}": v for k, v in report.counts.items()})
        run.watermark = project.at
        if report.problems:
            run.error = f"{len(report.problems)} problems; first: {report.problems[0]}"
    return run, report
