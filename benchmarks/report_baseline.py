"""The orphan and cost reports' graph reads as they were before consumption was settled in
Python: the objects consumed on their own (baseline_orphans_consumed_objects.cypher), then one
statement that looked every dataset's ancestors up in the graph by urn and walked the objects
(baseline_orphans_usage.cypher). The report benchmarks time it against the shipped reports in the
same run and check that both give the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.reports import orphans
from lineagegraph.reports.options import ReportOptions
from lineagegraph.reports.presentation import Report
from lineagegraph.values.pricing import SMALL_OBJECT_BYTES

HERE = Path(__file__).resolve().parent
CONSUMED = (HERE / "baseline_orphans_consumed_objects.cypher").read_text()
USAGE = (HERE / "baseline_orphans_usage.cypher").read_text()


def ancestor_lookups(store: GraphStore, options: ReportOptions) -> list[dict[str, Any]]:
    """reports.tally.usage_records as it was: two statements, the second one over every dataset."""
    window = {"as_of": options.as_of, "since": options.since}
    touched = store.execute(CONSUMED, window, write=False).records()
    params = {
        **window,
        "touched": touched,
        "buckets": list(options.buckets),
        "include_deleted": options.include_deleted,
        "with_consumed": options.kind == "cost",
        "by_object": options.by == "object",
        "exclude": [glob.program for glob in options.excludes],
        "small": SMALL_OBJECT_BYTES,
    }
    records = store.execute(USAGE, params, write=False).records()
    for record in records:  # the shipped statements name the shape rather than flag it
        record["harvested_as"] = "rollup" if record.pop("rolled_up") else "object"
        record["readers"] = None  # the readers column came later: see without_readers
    return records


@contextmanager
def baseline() -> Iterator[None]:
    """Within it, run_report fetches its rows the old way."""
    shipped = orphans.usage_records
    orphans.usage_records = ancestor_lookups  # type: ignore[assignment]
    try:
        yield
    finally:
        orphans.usage_records = shipped


def without_readers(report: Report) -> list[list[Any]]:
    """A report's rows without the readers column, which the graph reads as they were did not
    fill: the rows the baseline and the shipped report must agree on."""
    if "readers" not in report.columns:
        return report.rows
    at = report.columns.index("readers")
    return [row[:at] + row[at + 1 :] for row in report.rows]
