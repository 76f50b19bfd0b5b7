"""Lineage answers as terminal text: the table of reached assets, the tree, paths and impact."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lineagegraph.output import format_rows, time_text
from lineagegraph.questions.lineage import Direction, Impact, LineagePath, Reached, Reader
from lineagegraph.render.views import Edge, Node, View


def _via_cell(via: Sequence[str]) -> str:
    if not via:
        return ""
    return via[0] + (f" (+{len(via) - 1})" if len(via) > 1 else "")


def reached_table(reached: Sequence[Reached], direction: Direction) -> str:
    """One row per asset: distance, system, kind, urn, and the transformations that link it to
    the asset one hop nearer the start, named for what they did and placed in the order data
    flows: downstream, `written_by` before the asset (the job that wrote it); upstream,
    `read_by` after it (the job that read it to feed the next asset toward the start)."""

    # A quality column once any asset has a known quality: without check results it would
    # say `unknown` on every row (and columns have none). JSON always carries `quality`.
    with_quality = any(r.quality not in (None, "unknown") for r in reached)
    # Likewise a tags column once any asset (or a column of it) carries a classification.
    with_tags = any(r.tags for r in reached)

    def described(r: Reached) -> list[Any]:
        kind = r.kind + (" (deleted)" if r.deleted_at is not None else "")
        return [
            r.distance, r.system, kind,
            *([r.quality] if with_quality else []),
            *([", ".join(r.tag_names)] if with_tags else []),
        ]  # fmt: skip

    head = [
        "distance", "system", "kind",
        *(["quality"] if with_quality else []),
        *(["tags"] if with_tags else []),
    ]  # fmt: skip
    if direction == "downstream":
        rows = [[*described(r), _via_cell(r.via), r.urn] for r in reached]
        return format_rows([*head, "written_by", "urn"], rows, "table")
    rows = [[*described(r), r.urn, _via_cell(r.via)] for r in reached]
    return format_rows([*head, "urn", "read_by"], rows, "table")


def direct_readers_text(readers: Sequence[Reader]) -> str:
    """The principals that read assets of an answer straight from S3 (access logs,
    CloudTrail): who, their last read, and what they read."""
    rows = [[t.user, time_text(t.last_run_at), _via_cell(t.reads), t.urn] for t in readers]
    table = format_rows(["principal", "last_read", "reads", "urn"], rows, "table")
    return f"read directly from S3 by {len(readers)} principal(s)\n{table}"


def tree(view: View) -> str:
    """The view as an indented tree from the start: each node under the node(s) it was first
    reached from; a node reached again is named with `(see above)` rather than repeated."""
    children: dict[str, list[Edge]] = defaultdict(list)
    for edge in view.edges:
        if edge.link:  # the tree shows how each node was reached; links are for pictures
            continue
        level_src = view.by_urn[edge.src].level if edge.src in view.by_urn else 0
        level_dst = view.by_urn[edge.dst].level if edge.dst in view.by_urn else 0
        # Walk away from the start: downstream follows edges, upstream walks them backwards.
        parent, child = (
            (edge.src, edge.dst) if abs(level_dst) >= abs(level_src) else (edge.dst, edge.src)
        )
        children[parent].append(dataclasses.replace(edge, src=parent, dst=child))
    for below in children.values():
        below.sort(key=lambda e: e.dst)
    root = next(n for n in view.nodes if n.start)
    lines = [_tree_label(root)]
    shown = {root.urn}
    stack: list[tuple[Edge, str, bool]] = [
        (e, "", i == len(children[root.urn]) - 1) for i, e in enumerate(children[root.urn])
    ][::-1]
    while stack:
        edge, prefix, last = stack.pop()
        node = view.by_urn[edge.dst]
        branch = "└── " if last else "├── "
        arrow = "◀ " if node.level < 0 else ""
        if node.urn in shown:
            lines.append(f"{prefix}{branch}{arrow}{node.urn} (see above)")
            continue
        shown.add(node.urn)
        lines.append(f"{prefix}{branch}{arrow}{_tree_label(node)}{_via_note(edge, node)}")
        below = children[node.urn]
        inner = prefix + ("    " if last else "│   ")
        stack.extend([(e, inner, i == len(below) - 1) for i, e in enumerate(below)][::-1])
    if view.note:
        lines.append(view.note)
    return "\n".join(lines)


def _tree_label(node: Node) -> str:
    deleted = ", deleted" if node.deleted else ""
    tags = f", tags {', '.join(node.tags)}" if node.tags else ""
    return f"{node.urn}  [{node.system or '?'} {node.kind}{deleted}{_quality_note(node)}{tags}]"


def _quality_note(node: Node) -> str:
    """`, quality fail`; nothing for unknown (or no) quality, the usual case without checks."""
    return f", quality {node.quality}" if node.quality not in (None, "unknown") else ""


def _via_note(edge: Edge, node: Node) -> str:
    """Upstream (left of the start) the edge's job reads the node; downstream it wrote it."""
    if edge.dashed and not edge.via:
        return "  (indirect)"
    verb = "read by" if node.level < 0 else "written by"
    return f"  {verb} {_via_cell(edge.via)}" if edge.via else ""


def paths_text(found: Sequence[LineagePath]) -> str:
    """Each path numbered, one asset per line with the transformations of each hop."""
    if not found:
        return "no path"
    lines = []
    for number, path in enumerate(found, 1):
        lines.append(f"path {number} ({path.hops} hop{'s' if path.hops != 1 else ''})")
        lines.append(f"  {path.assets[0].urn}")
        for item, via in zip(path.assets[1:], path.via, strict=True):
            lines.append(f"  └▶ {item.urn}" + (f"  via {_via_cell(via)}" if via else ""))
    return "\n".join(lines)


def impact_text(result: Impact) -> str:
    """Counts and assets per (system, kind), then the affected transformations."""
    quality = result.start.quality
    known = f" (quality {quality})" if quality not in (None, "unknown") else ""
    if result.start.tag_names:
        known += f" (tags {', '.join(result.start.tag_names)})"
    out = [
        f"impact of {result.start.urn}{known}: {len(result.assets)} downstream asset(s), "
        f"{len(result.transformations)} transformation(s) reading them"
    ]
    for (system, kind), items in result.groups.items():
        out.append(f"\n{system or '?'} {kind} ({len(items)})")
        out.extend(
            f"  {item.urn}  (distance {item.distance}"
            + (f", quality {item.quality}" if item.quality not in (None, "unknown") else "")
            + (f", tags {', '.join(item.tag_names)})" if item.tag_names else ")")
            for item in items
        )
    if result.transformations:
        out.append("\naffected transformations")
        rows = [
            [t.system, t.urn, t.user, t.runs, _via_cell(t.reads), _via_cell(t.writes)]
            for t in result.transformations
        ]
        columns = ["system", "urn", "user", "runs", "reads", "writes"]
        out.append(format_rows(columns, rows, "table"))
    return "\n".join(out)
