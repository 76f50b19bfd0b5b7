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
    # system, assets, with_lineage, share: tables and datasets only (S3 objects would swamp
    # their system's share; they are covered through their dataset, in `coverage`)
    coverage_by_system: list[dict[str, Any]]
    freshness: list[dict[str, Any]]  # system, scope, last_success, age_hours, stale
    failures: list[dict[str, Any]]  # system, scope, last_failure (a failed or partial harvest)
    runs: list[dict[str, Any]]  # the most recent harvest runs, dead `running` ones `abandoned`
    # assets with check results, by quality (lineagegraph.questions.quality), and those failing
    quality: dict[str, int] = field(default_factory=dict)
    failing_assets: int = 0


def graph_status(store: GraphStore, now_ms: int, max_age_hours: float, runs: int) -> Status:
    """Counts, lineage coverage, and per-source freshness flagged past `max_age_hours`."""
    assets = store.read("status_coverage")
    files = [row for row in store.read("status_file_coverage") if row["assets"]]
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
        coverage=coverage_shares(assets + files, "kind"),
        coverage_by_system=coverage_shares(assets, "system"),
        freshness=freshness,
        failures=store.read("status_failures"),
        runs=recent,
        quality=quality,
        failing_assets=sum(quality[q] for q in BLOCKING),
    )


def coverage_shares(rows: list[dict[str, Any]], by: str) -> list[dict[str, Any]]:
    """Rows of (kind, system, assets, with_lineage) summed by `by`, with the share covered."""
    sums: dict[str, list[int]] = {}
    for row in rows:
        total = sums.setdefault(row[by] or "", [0, 0])
        total[0] += row["assets"]
        total[1] += row["with_lineage"]
    return [
        {
            by: key,
            "assets": n,
            "with_lineage": covered,
            "share": round(covered / n, 4) if n else 0.0,
        }
        for key, (n, covered) in sums.items()
    ]
