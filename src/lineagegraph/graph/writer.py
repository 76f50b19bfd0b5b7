"""Buffers model values and writes them in batches, nodes before the edges that need them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.model import (
    Asset,
    CheckResult,
    Column,
    ColumnFeed,
    Flow,
    Item,
    PartOf,
    Transformation,
)
from lineagegraph.quality import RANK

# Each statement and the row fields it MERGEs on, in flush order: every statement's endpoints
# are written by an earlier one.
STATEMENTS: dict[str, tuple[str, ...]] = {
    "merge_tables": ("urn",),
    "merge_datasets": ("urn",),
    "merge_files": ("urn",),
    "merge_transformations": ("urn",),
    "merge_columns": ("urn",),
    "merge_reads_from": ("t", "asset"),
    "merge_writes_to": ("t", "asset"),
    "merge_flows": ("src", "dst"),
    "merge_column_feeds": ("src", "dst"),
    "merge_part_of": ("file", "dataset"),
    "merge_checks": ("urn",),  # after the assets and columns they test
}
ASSET_STATEMENT = {"Table": "merge_tables", "Dataset": "merge_datasets", "File": "merge_files"}


class GraphWriter:
    """Collects rows per statement; when any buffer is full, flushes all of them in order.

    Add each item after those it needs (an edge's endpoints, a column's asset): the order of
    STATEMENTS holds within one flush only, and a row flushed before what it needs is dropped
    by its MATCH (what is already in the graph counts too).
    `counts` tallies rows written per statement (self edges are dropped and counted).
    """

    def __init__(self, store: GraphStore, counts: Counter[str] | None = None) -> None:
        self.store = store
        self.counts: Counter[str] = counts if counts is not None else Counter()
        self._buffers: dict[str, list[dict[str, Any]]] = {name: [] for name in STATEMENTS}
        self._pending = 0

    def add(self, item: Item) -> None:
        for name, row in _rows(item):
            if name == "self_edge":
                self.counts["self_edges_skipped"] += 1
                continue
            self._buffers[name].append(row)
            self._pending += 1
        if self._pending >= self.store.batch_size:
            self.flush()

    def add_all(self, items: Iterable[Item]) -> None:
        for item in items:
            self.add(item)

    def flush(self) -> None:
        for name, key in STATEMENTS.items():
            rows = self._buffers[name]
            if rows:
                self.counts[name] += self.store.write_batches(name, rows, key)
                rows.clear()
        self._pending = 0


def _rows(item: Item) -> Iterable[tuple[str, dict[str, Any]]]:
    match item:
        case Asset():
            row = {"urn": item.urn, "system": item.system, "name": item.name, "seen": item.seen}
            yield ASSET_STATEMENT[item.kind], {**row, "props": item.props}
        case Flow():
            if item.src == item.dst:
                yield "self_edge", {}
                return
            via = [item.via] if item.via else []
            yield "merge_flows", {"src": item.src, "dst": item.dst, "at": item.at, "via": via}
        case Transformation():
            yield (
                "merge_transformations",
                {
                    "urn": item.urn,
                    "system": item.system,
                    "name": item.name,
                    "run_id": item.run_id,
                    "run_at": item.run_at,
                    "user": item.user,
                },
            )
            for asset in item.reads:
                yield "merge_reads_from", {"t": item.urn, "asset": asset, "at": item.run_at}
            for asset in item.writes:
                yield "merge_writes_to", {"t": item.urn, "asset": asset, "at": item.run_at}
        case Column():
            yield (
                "merge_columns",
                {
                    "urn": item.urn,
                    "asset": item.asset,
                    "name": item.name,
                    "seen": item.seen,
                },
            )
        case ColumnFeed():
            if item.src == item.dst:
                yield "self_edge", {}
                return
            via = [item.via] if item.via else []
            yield (
                "merge_column_feeds",
                {"src": item.src, "dst": item.dst, "at": item.at, "via": via},
            )
        case PartOf():
            yield "merge_part_of", {"file": item.file, "dataset": item.dataset}
        case CheckResult():
            yield (
                "merge_checks",
                {
                    "urn": item.urn,
                    "system": item.system,
                    "name": item.name,
                    "target": item.target,
                    "status": item.status,
                    "rank": RANK[item.status],
                    "failures": item.failures,
                    "at": item.at,
                    "run_id": item.run_id,
                },
            )
