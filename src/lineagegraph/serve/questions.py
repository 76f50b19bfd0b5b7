"""lineagegraph's own questions over HTTP: upstream, downstream, impact and paths, answered by the
same library functions as the CLI commands and in the JSON those commands print with
`--format json`, so a program can move between the two."""

from __future__ import annotations

from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.questions import lineage
from lineagegraph.questions.lineage import Direction
from lineagegraph.settings import Settings


def traversal(
    store: GraphStore, settings: Settings, name: str, direction: Direction, depth: int,
    include_deleted: bool,
) -> dict[str, Any]:  # fmt: skip
    """`lineagegraph upstream|downstream NAME --depth N --format json`."""
    urn = lineage.resolve(store, settings, name)
    start = lineage.start_asset(store, urn, include_deleted=include_deleted)
    reached = lineage.traverse(store, urn, direction, depth=depth, include_deleted=include_deleted)
    return {"start": start, "direction": direction, "depth": depth, "assets": reached}


def impact(store: GraphStore, settings: Settings, name: str, include_deleted: bool) -> Any:
    """`lineagegraph impact NAME --format json`."""
    urn = lineage.resolve(store, settings, name)
    return lineage.impact(store, urn, include_deleted=include_deleted)


def path(
    store: GraphStore, settings: Settings, source: str, target: str, depth: int,
    include_deleted: bool,
) -> dict[str, Any]:  # fmt: skip
    """`lineagegraph path FROM TO --depth N --format json`."""
    src = lineage.resolve(store, settings, source)
    dst = lineage.resolve(store, settings, target)
    answer = lineage.paths_between(store, src, dst, depth, include_deleted=include_deleted)
    start, end = (
        lineage.start_asset(store, urn, include_deleted=include_deleted)
        for urn in (answer.src, answer.dst)
    )
    return {"from": start, "to": end, "depth": depth, "paths": answer.paths,
            "notes": answer.notes}  # fmt: skip
