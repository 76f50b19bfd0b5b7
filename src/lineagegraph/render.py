"""Pictures and text of lineage answers: a terminal tree and table, JSON, Mermaid, Graphviz DOT,
and a self-contained HTML page.

Every answer (upstream, downstream, paths, impact, columns) becomes one `View`: nodes placed
in levels (distance from the start, negative upstream) and edges in the direction data flows.
Each format draws a View, so they all show the same graph. The HTML page is an inline SVG laid
out here in Python, so it opens anywhere without a network or a script.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lineagegraph.identity import IdentityError, name_of
from lineagegraph.output import cut_middle
from lineagegraph.output import render as render_rows
from lineagegraph.questions.lineage import Direction, Impact, LineagePath, Reached, Reader

PICTURE_FORMATS = ("mermaid", "dot", "html")
FORMATS = ("table", "tree", "json", *PICTURE_FORMATS)
MAX_PICTURE_NODES = 400
"""Beyond this a picture stops being readable: the nodes nearest the start are kept."""


@dataclass(frozen=True, slots=True)
class Node:
    urn: str
    name: str  # the label drawn: short, but telling apart assets that share a name
    system: str | None
    kind: str
    level: int
    start: bool = False
    deleted: bool = False
    detail: str = ""  # a transformation's second line: what it writes
    quality: str | None = None  # an asset's latest data quality (lineagegraph.questions.quality)


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    via: tuple[str, ...] = ()
    dashed: bool = False  # an indirect hop (filtered-out assets between) or a read
    link: bool = False  # an edge between found nodes that is not how the later one was reached


@dataclass
class View:
    """A lineage answer as a graph to draw; `nodes` keep their order (start first)."""

    title: str
    nodes: list[Node]
    edges: list[Edge]
    note: str = ""
    hidden: int = 0  # nodes left out of a picture by MAX_PICTURE_NODES
    by_urn: dict[str, Node] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_urn = {node.urn: node for node in self.nodes}


# --- Answers to views -----------------------------------------------------------------------


def label(urn: str, kind: str, name: str) -> str:
    """What a picture calls a node: the urn without scheme and Snowflake account
    (`RAW.PUBLIC.ORDERS`, `raw-bucket/orders`), `TABLE.COLUMN` for a column, and a
    transformation's name.

    >>> label("snowflake://acme/DB.S.ORDERS", "Table", "ORDERS")
    'DB.S.ORDERS'
    >>> label("s3://b/raw/orders", "Dataset", "orders"), label("file:///tmp/x", "Dataset", "x")
    ('b/raw/orders', '/tmp/x')
    >>> label("snowflake://acme/DB.S.ORDERS#AMOUNT", "Column", "AMOUNT")
    'ORDERS.AMOUNT'
    """
    if kind == "Transformation":
        return name
    if kind == "Column":
        asset, _, column = urn.rpartition("#")
        try:
            return f"{name_of(asset)}.{column}"
        except IdentityError:
            return urn
    scheme, sep, rest = urn.partition("://")
    if not sep:
        return urn
    if scheme == "snowflake":
        return rest.partition("/")[2] or rest
    return rest


def _node(item: Reached, level: int, start: bool = False) -> Node:
    deleted = item.deleted_at is not None
    name = label(item.urn, item.kind, item.name)
    return Node(item.urn, name, item.system, item.kind, level, start, deleted,
                quality=item.quality)  # fmt: skip


def traversal_view(start: Reached, reached: Sequence[Reached], direction: Direction) -> View:
    """Upstream to the left of the start, downstream to the right; edges point the way data
    flows, from the nodes each asset was reached from."""
    sign = -1 if direction == "upstream" else 1
    nodes = [_node(start, 0, start=True)] + [_node(r, sign * r.distance) for r in reached]
    distance = {start.urn: 0} | {r.urn: r.distance for r in reached}
    edges = []
    for item in reached:
        for near in item.reached_from:
            indirect = distance.get(near, 0) != item.distance - 1
            pair = (near, item.urn) if direction == "downstream" else (item.urn, near)
            edges.append(Edge(*pair, via=item.via, dashed=indirect))
        for near in item.linked_from:
            pair = (near, item.urn) if direction == "downstream" else (item.urn, near)
            edges.append(Edge(*pair, link=True))
    title = f"{direction} of {start.urn}"
    return View(title, nodes, edges)


def impact_view(result: Impact) -> View:
    """The downstream view plus the transformations that read the impacted assets, each drawn
    one level after the furthest asset it reads."""
    view = traversal_view(result.start, result.assets, "downstream")
    nodes, edges = list(view.nodes), list(view.edges)
    for reader in result.transformations:
        level = max(view.by_urn[urn].level for urn in reader.reads) + 1
        nodes.append(Node(reader.urn, reader.name or reader.urn, reader.system, "Transformation",
                          level, detail=_writes(reader, view)))  # fmt: skip
        edges.extend(Edge(urn, reader.urn, dashed=True) for urn in reader.reads)
    return View(f"impact of {result.start.urn}", nodes, edges)


def _writes(reader: Reader, view: View) -> str:
    """What a transformation pill says besides its name: what it writes, by the label its
    node has in the picture (its urn otherwise)."""
    if not reader.writes:
        return "writes nothing (reads only)"
    first = reader.writes[0]
    name = view.by_urn[first].name if first in view.by_urn else first
    more = len(reader.writes) - 1
    return f"writes {short(name, 26)}" + (f" (+{more})" if more else "")


def paths_view(found: Sequence[LineagePath], src: Reached, dst: Reached) -> View:
    """The union of the paths, levelled by longest distance from FROM so every edge points
    right."""
    items: dict[str, Reached] = {src.urn: src, dst.urn: dst}
    via: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in found:
        for item in path.assets:
            items.setdefault(item.urn, item)
        for a, b, hop_via in zip(path.assets, path.assets[1:], path.via, strict=False):
            via[a.urn, b.urn].update(hop_via)
    level = _longest_levels(src.urn, list(via))
    nodes = [_node(item, level.get(urn, 0), start=urn == src.urn) for urn, item in items.items()]
    edges = [Edge(a, b, tuple(sorted(v))) for (a, b), v in via.items()]
    return View(f"paths from {src.urn} to {dst.urn}", nodes, edges)


def columns_view(start: Reached, up: Sequence[Reached], down: Sequence[Reached]) -> View:
    """Column lineage both ways around one column."""
    upstream = traversal_view(start, up, "upstream")
    downstream = traversal_view(start, down, "downstream")
    return View(
        f"column lineage of {start.urn}",
        upstream.nodes + downstream.nodes[1:],
        upstream.edges + downstream.edges,
    )


def _longest_levels(root: str, edges: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering from `root` (Kahn's order); a node on a cycle keeps the level it
    had when the cycle was met."""
    succ: dict[str, list[str]] = defaultdict(list)
    indegree: dict[str, int] = defaultdict(int)
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    level = {root: 0}
    ready = [n for n in {root, *succ} if indegree[n] == 0]
    while ready:
        n = ready.pop()
        for m in succ[n]:
            level[m] = max(level.get(m, 0), level.get(n, 0) + 1)
            indegree[m] -= 1
            if indegree[m] == 0:
                ready.append(m)
    for a, b in edges:  # nodes left on cycles
        level.setdefault(b, level.get(a, 0) + 1)
    return level


def trim(view: View, limit: int = MAX_PICTURE_NODES) -> View:
    """At most `limit` nodes, nearest the start first, and a note saying what was left out."""
    if len(view.nodes) <= limit:
        return view
    kept = sorted(view.nodes, key=lambda n: (not n.start, abs(n.level)))[:limit]
    keep = {n.urn for n in kept}
    nodes = [n for n in view.nodes if n.urn in keep]
    edges = [e for e in view.edges if e.src in keep and e.dst in keep]
    hidden = len(view.nodes) - len(nodes)
    note = (f"showing the {len(nodes)} nodes nearest the start; {hidden} more left out "
            "(narrow with --depth, --system or --label)")  # fmt: skip
    return View(view.title, nodes, edges, note=note, hidden=hidden)


# --- Text -----------------------------------------------------------------------------------


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

    def described(r: Reached) -> list[Any]:
        kind = r.kind + (" (deleted)" if r.deleted_at is not None else "")
        return [r.distance, r.system, kind, *([r.quality] if with_quality else [])]

    head = ["distance", "system", "kind", *(["quality"] if with_quality else [])]
    if direction == "downstream":
        rows = [[*described(r), _via_cell(r.via), r.urn] for r in reached]
        return render_rows([*head, "written_by", "urn"], rows, "table")
    rows = [[*described(r), r.urn, _via_cell(r.via)] for r in reached]
    return render_rows([*head, "urn", "read_by"], rows, "table")


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
        parent, child = (edge.src, edge.dst) if abs(level_dst) >= abs(level_src) else (
            edge.dst, edge.src)  # fmt: skip
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
    return f"{node.urn}  [{node.system or '?'} {node.kind}{deleted}{_quality_note(node)}]"


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
    out = [f"impact of {result.start.urn}{known}: {len(result.assets)} downstream asset(s), "
           f"{len(result.transformations)} transformation(s) reading them"]  # fmt: skip
    for (system, kind), items in result.groups.items():
        out.append(f"\n{system or '?'} {kind} ({len(items)})")
        out.extend(
            f"  {item.urn}  (distance {item.distance}"
            + (f", quality {item.quality})" if item.quality not in (None, "unknown") else ")")
            for item in items
        )
    if result.transformations:
        out.append("\naffected transformations")
        rows = [[t.system, t.urn, t.user, t.runs, _via_cell(t.reads), _via_cell(t.writes)]
                for t in result.transformations]  # fmt: skip
        columns = ["system", "urn", "user", "runs", "reads", "writes"]
        out.append(render_rows(columns, rows, "table"))
    return "\n".join(out)


def to_json(value: Any) -> str:
    """Dataclasses, tuples and tuple-keyed dicts as plain JSON."""
    return json.dumps(_plain(value), indent=2, ensure_ascii=False)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {("/".join(k) if isinstance(k, tuple) else k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# --- Pictures -------------------------------------------------------------------------------

_SYSTEM_COLOURS = {
    "s3": "#f59e0b",
    "file": "#94a3b8",
    "snowflake": "#29b5e8",
    "spark": "#e25a1c",
    "openlineage": "#8b5cf6",
}


QUALITY_COLOURS = {
    "pass": "#4ade80",  # green
    "warn": "#fbbf24",  # amber: passed, with a warning
    "error": "#f87171",  # red: the check could not run
    "fail": "#ef4444",  # red
    "unknown": "#d1d5db",  # grey: no check, or only skipped ones
}


def shows_quality(view: View) -> bool:
    """Pictures colour assets by quality once any asset in them has a known one; with no check
    results at all they keep the colours of their systems."""
    return any(n.quality not in (None, "unknown") for n in view.nodes)


def fill(node: Node, by_quality: bool) -> str:
    """A node's fill: its quality's colour, or (transformations, answers without quality) its
    system's."""
    if by_quality and node.kind != "Transformation":
        return QUALITY_COLOURS[node.quality or "unknown"]
    return colour(node.system)


def colour(system: str | None) -> str:
    """A stable colour per system (known ones fixed, others from a hash of the name)."""
    if system in _SYSTEM_COLOURS:
        return _SYSTEM_COLOURS[system]
    hue = int(hashlib.sha256((system or "").encode()).hexdigest()[:4], 16) % 360
    return f"hsl({hue}, 55%, 55%)"


def short(text: str, width: int) -> str:
    """Cut in the middle (`ANALYTI…DAILY_ACTIVE`): the start says where an asset lives (a
    database, a bucket), the end what it is; a label cut from the front lost the former."""
    return cut_middle(text, width)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _ids(view: View) -> dict[str, str]:
    """Generated identifiers, so no urn character ever reaches Mermaid or DOT syntax."""
    return {node.urn: f"n{i}" for i, node in enumerate(view.nodes)}


def _mermaid_text(text: str) -> str:
    """Escaped for a quoted label. A line break or other control character would end the
    statement: each becomes Mermaid's own entity code (`#13;`), which '#' (as `&num;`) cannot
    be mistaken for."""
    escaped = html.escape(text, quote=True).replace("#", "&num;")
    return _CONTROL.sub(lambda m: f"#{ord(m.group())};", escaped)


def to_mermaid(view: View) -> str:
    """A Mermaid flowchart, left to right in the direction data flows."""
    view = trim(view)
    ids = _ids(view)
    lines = ["flowchart LR"]
    if view.note:
        lines.append(f"%% {view.note}")
    for node in view.nodes:
        label = f"{_mermaid_text(node.name)}<br/><small>{_mermaid_text(_subtitle(node))}</small>"
        shape = ('(["', '"])') if node.kind == "Transformation" else ('["', '"]')
        lines.append(f"  {ids[node.urn]}{shape[0]}{label}{shape[1]}")
    for edge in view.edges:
        arrow = "-.->" if edge.dashed else "-->"
        lines.append(f"  {ids[edge.src]} {arrow} {ids[edge.dst]}")
    by_quality = shows_quality(view)
    classes: dict[str, list[Node]] = defaultdict(list)
    for node in view.nodes:
        quality = by_quality and node.kind != "Transformation"
        key = f"q_{node.quality or 'unknown'}" if quality else f"sys_{node.system or ''}"
        classes["".join(c if c.isalnum() else "_" for c in key)].append(node)
    for name, members in sorted(classes.items()):
        lines.append(f"  classDef {name} fill:{fill(members[0], by_quality)},color:#111,"
                     "stroke:#333")  # fmt: skip
        lines.append(f"  class {','.join(ids[n.urn] for n in members)} {name}")
    starts = ",".join(ids[n.urn] for n in view.nodes if n.start)
    lines.append(f"  style {starts} stroke-width:4px,stroke:#111")
    deleted = [ids[n.urn] for n in view.nodes if n.deleted]
    if deleted:
        lines.append("  classDef deleted stroke-dasharray:5 5,opacity:0.6")
        lines.append(f"  class {','.join(deleted)} deleted")
    return "\n".join(lines)


def _subtitle(node: Node) -> str:
    if node.detail:
        return node.detail
    deleted = " · deleted" if node.deleted else ""
    quality = f" · {node.quality}" if node.quality and node.quality != "unknown" else ""
    return f"{node.system or '?'} · {node.kind}{quality}{deleted}"


def _dot_text(text: str) -> str:
    """A DOT string; NUL, which ends Graphviz's input, is drawn as its symbol ␀."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + text.replace("\x00", "\u2400") + '"'


def to_dot(view: View) -> str:
    """A Graphviz digraph with one rank per level (`dot -Tsvg lineage.dot > lineage.svg`)."""
    view = trim(view)
    ids = _ids(view)
    by_quality = shows_quality(view)
    lines = [
        f"digraph lineage {{  // {_dot_text(view.title)}",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
        '  edge [color="#555555"];',
    ]
    if view.note:
        lines.append(f"  label={_dot_text(view.note)}; labelloc=b;")
    for node in view.nodes:
        attrs = {
            "label": f"{node.name}\n{_subtitle(node)}",
            "tooltip": node.urn,
            "fillcolor": fill(node, by_quality),
        }
        if node.kind == "Transformation":
            attrs["shape"] = "ellipse"
        attrs["style"] = "rounded,filled" + (",dashed" if node.deleted else "")
        extra = ", penwidth=3" if node.start else ""
        body = ", ".join(f"{k}={_dot_text(v)}" for k, v in attrs.items())
        lines.append(f"  {ids[node.urn]} [{body}{extra}];")
    for level, members in sorted(_by_level(view.nodes).items()):
        names = "; ".join(ids[n.urn] for n in members)
        lines.append(f"  {{ rank=same; {names}; }}  // level {level}")
    for edge in view.edges:
        dashed = " [style=dashed]" if edge.dashed else ""
        lines.append(f"  {ids[edge.src]} -> {ids[edge.dst]}{dashed};")
    lines.append("}")
    return "\n".join(lines)


def _by_level(nodes: Iterable[Node]) -> dict[int, list[Node]]:
    levels: dict[int, list[Node]] = defaultdict(list)
    for node in nodes:
        levels[node.level].append(node)
    return levels


# --- HTML: a layered layout drawn as inline SVG ---------------------------------------------

NODE_W, NODE_H, GAP_X, GAP_Y, MARGIN = 230, 46, 70, 16, 24


def layout(view: View) -> dict[str, tuple[float, float]]:
    """Top-left corner of each node: one column per level, and within a column the order
    that puts each node near the nodes it connects to (two barycentre sweeps)."""
    levels = _by_level(view.nodes)
    columns = [levels[level] for level in sorted(levels)]
    neighbours: dict[str, list[str]] = defaultdict(list)
    for edge in view.edges:
        neighbours[edge.src].append(edge.dst)
        neighbours[edge.dst].append(edge.src)
    rank = {node.urn: float(i) for column in columns for i, node in enumerate(column)}
    for sweep in (columns[1:], columns[-2::-1]):
        for column in sweep:
            for node in column:
                known = [rank[n] for n in neighbours[node.urn] if n in rank]
                rank[node.urn] = sum(known) / len(known) if known else rank[node.urn]
            column.sort(key=lambda n: (rank[n.urn], n.urn))
            for i, node in enumerate(column):
                rank[node.urn] = float(i)
    tallest = max(len(column) for column in columns)
    positions: dict[str, tuple[float, float]] = {}
    for x, column in enumerate(columns):
        offset = (tallest - len(column)) * (NODE_H + GAP_Y) / 2  # centre short columns
        for y, node in enumerate(column):
            positions[node.urn] = (
                MARGIN + x * (NODE_W + GAP_X),
                MARGIN + offset + y * (NODE_H + GAP_Y),
            )
    return positions


def to_svg(view: View) -> str:
    """The view as one SVG element, sized to fit."""
    view = trim(view)
    pos = layout(view)
    width = max(x for x, _ in pos.values()) + NODE_W + MARGIN
    height = max(y for _, y in pos.values()) + NODE_H + MARGIN
    parts = [svg_start(width, height, view.title)]
    for edge in view.edges:
        (x1, y1), (x2, y2) = pos[edge.src], pos[edge.dst]
        dash = ' stroke-dasharray="5 4"' if edge.dashed else ""
        attrs = f'class="edge" stroke="#555" stroke-width="1.4"{dash}'
        parts.append(edge_path(x1, y1 + NODE_H / 2, x2, y2 + NODE_H / 2, attrs, edge.via))
    by_quality = shows_quality(view)
    for i, node in enumerate(view.nodes):  # data-node: exact where control characters are not
        ref = f'data-urn="{xml_text(node.urn)}" data-node="{i}"'
        parts.append(node_box(node, *pos[node.urn], by_quality, ref))
    parts.append("</svg>")
    return "".join(parts)


def svg_start(width: float, height: float, title: str) -> str:
    """The opening of a picture's SVG element, sized to fit, with its arrowhead."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{xml_text(title)}">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#555"/></marker></defs>'
    )


def edge_path(x1: float, sy: float, x2: float, ty: float, attrs: str, via: Sequence[str]) -> str:
    """An arrow from the right side of the box at `x1` (height `sy`) to the left side of the
    box at `x2` (height `ty`), hovering names the transformations `via`; `attrs` are the
    path's own attributes (class, stroke)."""
    sx, tx = x1 + NODE_W, x2
    bend = max(40.0, abs(tx - sx) / 2)
    c1, c2 = sx + bend, tx - bend
    if x1 == x2:  # within one level: loop out to the right and back into the other box
        tx = x2 + NODE_W
        c1 = c2 = tx + 50
    tip = f"<title>{xml_text(', '.join(via))}</title>" if via else ""
    return (
        f'<path {attrs} d="M{sx:.0f},{sy:.0f} C{c1:.0f},{sy:.0f} {c2:.0f},{ty:.0f} '
        f'{tx:.0f},{ty:.0f}" fill="none" marker-end="url(#arrow)">{tip}</path>'
    )


def node_box(
    node: Node, x: float, y: float, by_quality: bool, ref: str, height: float = NODE_H
) -> str:
    """One node as an SVG group: its box, name and subtitle. `ref` is the group's data
    attribute by which the page knows what was clicked; `height` makes room for what another
    picture lists inside the box (the explorer's columns)."""
    inside, stroke = fill(node, by_quality), "#333"
    if node.kind == "Transformation":  # jobs drawn hollow, so the assets stand out
        inside, stroke = "#ffffff", colour(node.system)
    width = 3 if node.start or node.kind == "Transformation" else 1
    stroke = "#111" if node.start else stroke
    dash = ' stroke-dasharray="5 3" opacity="0.6"' if node.deleted else ""
    radius = 23 if node.kind == "Transformation" else 7
    e, subtitle = xml_text, _subtitle(node)
    return (
        f'<g class="node" {ref}><title>{e(node.urn)}</title>'
        f'<rect x="{x:.0f}" y="{y:.0f}" width="{NODE_W}" height="{height:.0f}" rx="{radius}" '
        f'fill="{inside}" stroke="{stroke}" stroke-width="{width}"{dash}/>'
        f'<text x="{x + 12:.0f}" y="{y + 19:.0f}" font-size="13" font-weight="600" '
        f'fill="#111"{fit(node.name, 8.2)}>{e(short(node.name, 34))}</text>'
        f'<text x="{x + 12:.0f}" y="{y + 36:.0f}" font-size="11" fill="#222"'
        f"{fit(subtitle, 6.2)}>{e(short(subtitle, 40))}</text></g>"
    )


def xml_text(text: str) -> str:
    """`text` for SVG text or an attribute value: markup escaped, and control characters (which
    XML 1.0 cannot carry at all, or would fold into spaces) written out as `\\x01`, so a name
    is drawn as the text it is and the picture still parses as XML."""
    escaped = html.escape(text, quote=True)
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), escaped)


def fit(text: str, char_width: float, room: float = NODE_W - 24, width: int = 34) -> str:
    """Squeeze a label that would overflow its `room` (widths estimated per character; labels
    are first cut to `width` characters)."""
    if min(len(text), width) * char_width <= room:
        return ""
    return f' textLength="{room}" lengthAdjust="spacingAndGlyphs"'


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 16px;
       color: #111; background: #fafafa; }}
h1 {{ font-size: 18px; margin: 0 0 4px; }}
.note {{ color: #a15c00; margin: 4px 0; }}
.legend span {{ display: inline-block; margin-right: 14px; font-size: 13px; }}
.legend i {{ display: inline-block; width: 12px; height: 12px; border: 1px solid #333;
            border-radius: 3px; margin-right: 4px; vertical-align: -1px; }}
.canvas {{ overflow: auto; border: 1px solid #ddd; background: #fff; margin: 10px 0; }}
.canvas svg {{ direction: ltr; }}
svg text {{ font-family: inherit; }}
table {{ border-collapse: collapse; font-size: 13px; }}
td, th {{ border-bottom: 1px solid #e5e5e5; padding: 3px 10px 3px 0; text-align: left; }}
</style></head>
<body>
<h1>{title}</h1>
<div class="summary">{summary}</div>
{note}
<div class="legend">{legend}<span>── flows to</span><span>- - - reads, or indirect</span>
<span>bold border: the start</span></div>
<div class="canvas" dir="{side}">{svg}</div>
<table><thead><tr><th>level</th><th>system</th><th>kind</th><th>quality</th><th>urn</th></tr>
</thead>
<tbody>{rows}</tbody></table>
</body></html>
"""


def to_html(view: View) -> str:
    """A page that draws the lineage offline: title, legend, the SVG and a table of nodes."""
    e = html.escape
    shown = trim(view)
    if shows_quality(shown):
        legend = "".join(
            f'<span><i style="background:{QUALITY_COLOURS[q]}"></i>{q}</span>'
            for q in QUALITY_COLOURS
        )
    else:
        legend = "".join(
            f'<span><i style="background:{colour(s)}"></i>{e(s or "?")}</span>'
            for s in sorted({n.system or "" for n in shown.nodes})
        )
    rows = "".join(
        f"<tr><td>{n.level}</td><td>{e(n.system or '?')}</td><td>{e(n.kind)}"
        f"{' (deleted)' if n.deleted else ''}</td><td>{e(n.quality or '')}</td>"
        f"<td>{e(n.urn)}</td></tr>"
        for n in sorted(view.nodes, key=lambda n: (n.level, n.urn))
    )
    summary = f"{len(view.nodes)} node(s), {len(view.edges)} edge(s)"
    return _PAGE.format(
        title=e(view.title),
        summary=summary,
        note=f'<p class="note">{e(shown.note)}</p>' if shown.note else "",
        legend=legend,
        svg=to_svg(shown),
        side=_scroll_side(shown),
        rows=rows,
    )


def _scroll_side(view: View) -> str:
    """`rtl` when the start is nearer the picture's right end (an upstream answer): a wide
    picture then opens scrolled to its right end, the start in sight, instead of cutting it
    off; `ltr` otherwise. Plain CSS (a right-to-left scroll box), so the page needs no script."""
    pos = layout(view)
    left = [x for x, _ in pos.values()]
    start = next(pos[n.urn][0] for n in view.nodes if n.start)
    return "rtl" if start - min(left) > max(left) - start else "ltr"


def picture(view: View, fmt: str) -> str:
    """The view in one of PICTURE_FORMATS."""
    if fmt == "mermaid":
        return to_mermaid(view)
    if fmt == "dot":
        return to_dot(view)
    if fmt == "html":
        return to_html(view)
    raise ValueError(f"not a picture format: {fmt!r}; choose one of {', '.join(PICTURE_FORMATS)}")
