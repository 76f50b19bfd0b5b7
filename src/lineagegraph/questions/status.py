"""What the graph holds and how fresh it is: the facts behind `lineagegraph status`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.processes import is_abandoned
from lineagegraph.questions.quality import BLOCKING, quality_counts

HOUR_MS = 3_600_000


@dataclass
class Status:
    assets: list[dict[str, Any]]  # kind, system, assets, deleted
    coverage: list[dict[str, Any]]  # kind, assets, with_lineage, share
    freshness: list[dict[str, Any]]  # system, scope, last_success, age_hours, stale
    runs: list[dict[str, Any]]  # the most recent harvest runs, dead `running` ones `abandoned`
    # assets with check results, by quality (lineagegraph.questions.quality), and those failing
    quality: dict[str, int] = field(default_factory=dict)
    failing_assets: int = 0


def graph_status(store: GraphStore, now_ms: int, max_age_hours: float, runs: int) -> Status:
    """Counts, lineage coverage, and per-source freshness flagged past `max_age_hours`."""
    coverage = store.read("status_coverage") + [
        row for row in store.read("status_file_coverage") if row["assets"]
    ]
    for row in coverage:
        row["share"] = round(row["with_lineage"] / row["assets"], 4) if row["assets"] else 0.0
    freshness = store.read("status_freshness")
    for row in freshness:
        row["age_hours"] = round((now_ms - row["last_success"]) / HOUR_MS, 1)
        row["stale"] = row["age_hours"] > max_age_hours
    recent = store.read("status_runs", {"limit": runs})
    for row in recent:
        if is_abandoned(row):
            row["status"] = "abandoned"
    quality = quality_counts(store)
    return Status(
        assets=store.read("status_assets"),
        coverage=coverage,
        freshness=freshness,
        runs=recent,
        quality=quality,
        failing_assets=sum(quality[q] for q in BLOCKING),
    )
