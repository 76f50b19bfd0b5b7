"""A view as an SVG picture: a layered layout drawn in Python, so it needs no layout library."""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Sequence

from lineagegraph.render.style import (
    CHANGE_COLOURS,
    CONTROL,
    TAGGED,
    colour,
    fill,
    shows_quality,
    subtitle,
)
from lineagegraph.render.views import Node, View, by_level, short, trim

NODE_W, NODE_H, GAP_X, GAP_Y, MARGIN = 230, 46, 70, 16, 24


def layout(view: View) -> dict[str, tuple[float, float]]:
    """Top-left corner of each node: one column per level, and within a column the order
    that puts each node near the nodes it connects to (two barycentre sweeps)."""
    levels = by_level(view.nodes)
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
        attrs = edge_attrs(edge.dashed, edge.change)
        parts.append(edge_path(x1, y1 + NODE_H / 2, x2, y2 + NODE_H / 2, attrs, edge.via))
    by_quality = shows_quality(view)
    for i, node in enumerate(view.nodes):  # data-node: exact where control characters are not
        ref = f'data-urn="{xml_text(node.urn)}" data-node="{i}"'
        parts.append(node_box(node, *pos[node.urn], by_quality, ref, by_tag=view.by_tag))
    parts.append("</svg>")
    return "".join(parts)


def edge_attrs(dashed: bool, change: str | None) -> str:
    """An edge path's class and stroke: grey, or in its change's colour (the class names the
    change, as the legend does); dashed when indirect, a read, or removed."""
    dash = ' stroke-dasharray="5 4"' if dashed or change == "removed" else ""
    stroke, width = (CHANGE_COLOURS[change], 2.4) if change else ("#555", 1.4)
    return f'class="{changed("edge", change)}" stroke="{stroke}" stroke-width="{width}"{dash}'


def changed(kind: str, change: str | None) -> str:
    """The class of a node or edge: `kind`, and its change (added, removed) if it has one."""
    return f"{kind} {change}" if change else kind


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
    node: Node,
    x: float,
    y: float,
    by_quality: bool,
    ref: str,
    height: float = NODE_H,
    *,
    by_tag: bool = False,
) -> str:
    """One node as an SVG group: its box, name and subtitle. `ref` is the group's data
    attribute by which the page knows what was clicked; `height` makes room for what another
    picture lists inside the box (the explorer's columns)."""
    inside, stroke = fill(node, by_quality, by_tag), "#333"
    if node.kind == "Transformation":  # jobs drawn hollow, so the assets stand out
        inside, stroke = "#ffffff", colour(node.system)
    width = 3 if node.start or node.kind == "Transformation" or node.tags or node.change else 1
    if node.tags:
        stroke = TAGGED
    stroke = CHANGE_COLOURS[node.change] if node.change else "#111" if node.start else stroke
    gone = node.deleted or node.change == "removed"
    dash = ' stroke-dasharray="5 3" opacity="0.6"' if gone else ""
    radius = 23 if node.kind == "Transformation" else 7
    e, second = xml_text, subtitle(node)
    return (
        f'<g class="{changed("node", node.change)}" {ref}><title>{e(node.urn)}</title>'
        f'<rect x="{x:.0f}" y="{y:.0f}" width="{NODE_W}" height="{height:.0f}" rx="{radius}" '
        f'fill="{inside}" stroke="{stroke}" stroke-width="{width}"{dash}/>'
        f'<text x="{x + 12:.0f}" y="{y + 19:.0f}" font-size="13" font-weight="600" '
        f'fill="#111"{fit(node.name, 8.2)}>{e(short(node.name, 34))}</text>'
        f'<text x="{x + 12:.0f}" y="{y + 36:.0f}" font-size="11" fill="#222"'
        f"{fit(second, 6.2)}>{e(short(second, 40))}</text></g>"
    )


def xml_text(text: str) -> str:
    """`text` for SVG text or an attribute value: markup escaped, and control characters (which
    XML 1.0 cannot carry at all, or would fold into spaces) written out as `\\x01`, so a name
    is drawn as the text it is and the picture still parses as XML."""
    escaped = html.escape(text, quote=True)
    return CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), escaped)


def fit(text: str, char_width: float, room: float = NODE_W - 24, width: int = 34) -> str:
    """Squeeze a label that would overflow its `room` (widths estimated per character; labels
    are first cut to `width` characters)."""
    if min(len(text), width) * char_width <= room:
        return ""
    return f' textLength="{room}" lengthAdjust="spacingAndGlyphs"'
