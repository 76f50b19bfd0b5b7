"""Data-quality results on the graph: the order of check statuses and an asset's quality.

A `:Check` holds the latest result of one check (a dbt test, an OpenLineage assertion) and
`[:CHECKS]` the asset or column it tests (cypher/merge_checks.cypher). An asset's quality is the
worst latest status of its own checks and of its columns' checks; `skipped`, or no check at all,
is `unknown`: a check that did not run says nothing about the data.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.model import RANK

UNKNOWN = "unknown"
QUALITIES = (UNKNOWN, "pass", "warn", "error", "fail")
"""An asset's quality, by rank: the worst of its checks' statuses, skipped ones as unknown."""
BLOCKING = frozenset({"fail", "error"})

_CHUNK = 5000


@dataclass(frozen=True, slots=True)
class CheckState:
    """A check's latest result as stored, and the asset it counts for (its own, or the asset
    of the column it tests)."""

    asset: str
    target: str
    urn: str
    system: str | None
    name: str | None
    status: str
    failures: int | None
    at: int | None
    run_id: str | None


def worst(statuses: Iterable[str]) -> str:
    """The quality that statuses give an asset: the worst of them, `unknown` when none ran.

    >>> worst(["pass", "warn", "skipped"]), worst(["skipped"]), worst([])
    ('warn', 'unknown', 'unknown')
    """
    rank = max((RANK.get(status, 0) for status in statuses), default=0)
    return QUALITIES[rank]


def checks_of(store: GraphStore, assets: Collection[str]) -> list[CheckState]:
    """The checks of these assets and of their columns, in bounded chunks of urns."""
    found: list[CheckState] = []
    for chunk in chunks(assets, _CHUNK):
        found.extend(CheckState(**row) for row in store.read("quality_checks", {"urns": chunk}))
    return found


def asset_quality(store: GraphStore, assets: Collection[str]) -> dict[str, str]:
    """Each asset's quality (every urn given gets one; `unknown` when it has no check)."""
    statuses: dict[str, list[str]] = {urn: [] for urn in assets}
    if not assets or not store.read("quality_any_check"):
        return dict.fromkeys(statuses, UNKNOWN)
    for check in checks_of(store, assets):
        statuses[check.asset].append(check.status)
    return {urn: worst(found) for urn, found in statuses.items()}


def quality_counts(store: GraphStore) -> dict[str, int]:
    """How many present assets have each quality, among those with at least one check."""
    counts = dict.fromkeys(QUALITIES, 0)
    for row in store.read("status_quality"):
        counts[QUALITIES[max(int(row["worst"]), 0)]] += int(row["assets"])
    return counts
