"""Bringing a Neo4j store written by an older version up to date, in the graph itself.

The embedded store records its schema steps in a key beside the graph (lineagegraph.graph.
falkordb); Neo4j has no such place, so a single `:LineagegraphSchema` node holds them (see
cypher/store_schema_marker.cypher). Every statement here is plain Cypher that runs on both
backends, which is how the tests run this module for real without a Neo4j server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lineagegraph.graph.base import GraphStore

log = logging.getLogger(__name__)

# Bump when a step is added. 1: `changed_at` on nodes and lineage edges (docs/history.md).
SCHEMA_STEPS = 1
CHANGED_AT_SINCE = 1
CHANGED_AT_PARTS = ("assets", "columns", "transformations")
"""The labels whose nodes carry `changed_at`, each paged by its own statement
(cypher/store_changed_at_page_*.cypher) in this order."""
PAGE = 10_000
"""Nodes (with the lineage edges leaving them) one transaction of the backfill takes."""


@dataclass(frozen=True)
class Marker:
    """What the store's marker says: the steps done, and how far the step under way got."""

    step: int = 0
    part: str | None = None
    after: str | None = None


def read_marker(store: GraphStore) -> Marker:
    """The store's marker; a store written before it has done no step."""
    rows = store.read("store_schema_marker")
    if not rows:
        return Marker()
    row = max(rows, key=lambda r: r["step"] or 0)  # one node: its key is unique on Neo4j
    return Marker(int(row["step"] or 0), row["part"], row["after"])


def upgrade(store: GraphStore, page: int = PAGE) -> None:
    """Run the steps the store has not done yet, then mark it current: a store marked
    current costs one read. A step killed part way resumes where its marker says."""
    marker = read_marker(store)
    if marker.step >= SCHEMA_STEPS:
        return
    if marker.step < CHANGED_AT_SINCE:
        set_changed_at(store, marker, page)
    store.run("store_schema_mark", {"step": SCHEMA_STEPS, "part": None, "after": None})


def set_changed_at(store: GraphStore, marker: Marker, page: int = PAGE) -> None:
    """Set `changed_at` on the assets, columns and transformations of a store written before
    it, and on the lineage edges leaving them (`diff` finds changes through the nodes' index,
    so one without it would never be listed), `page` nodes a transaction in urn order.

    The marker records the last urn done after each page, so a run killed at any moment goes
    on from there; a page done again changes nothing (the statements never lower a value).
    Each page starts after the last urn of the one before, so the loop ends whatever the
    nodes hold (one with no history time is passed over)."""
    parts = CHANGED_AT_PARTS
    start = parts.index(marker.part) if marker.part in parts else 0
    for part in parts[start:]:
        after = (marker.after if part == marker.part else None) or ""
        while True:
            [row] = store.run(f"store_changed_at_page_{part}", {"after": after, "page": page}).rows
            last, done = row
            if last is None:
                break
            after = last
            store.run("store_schema_mark", {"step": marker.step, "part": part, "after": after})
            log.info("set changed_at on %s up to %s (%d in this page)", part, after, done)
