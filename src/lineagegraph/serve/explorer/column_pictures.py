"""The explorer's column view: an asset's lineage picture (the same as pictures.graph draws) with
each asset's columns listed inside its box and the column lineage between them (FEEDS) drawn
from column to column. The page highlights what feeds a clicked column and what it feeds from
`columns` and `column_edges`, so a click needs no further request.

Columns are named in the SVG by their index in `columns`, not by urn: a name can hold any
character, and the page looks the exact value up in the JSON instead of in the markup."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.output import time_text
from lineagegraph.questions.schemas import dropped_columns
from lineagegraph.render.style import shows_quality
from lineagegraph.render.svg import (
    GAP_Y,
    MARGIN,
    NODE_H,
    NODE_W,
    edge_attrs,
    edge_path,
    fit,
    layout,
    node_box,
    svg_start,
    xml_text,
)
from lineagegraph.render.views import View, short, trim
from lineagegraph.serve.explorer import pictures
from lineagegraph.settings import Settings

MAX_COLUMNS = 40
"""Columns listed in one box: those with lineage on the picture first, then by name."""
ROW_H, FOOT_H = 18, 8
_ROW = 'fill="#ffffff" fill-opacity="0.85" stroke="#d1d5db" stroke-width="0.6"'
_GONE = (
    'fill="#f3f4f6" fill-opacity="0.85" stroke="#9ca3af" stroke-width="0.6" stroke-dasharray="3 2"'
)
_GONE_INK = 'fill="#6b7280" text-decoration="line-through"'  # a dropped column's name


@dataclass(frozen=True, slots=True)
class Columns:
    """What the column view lists: per asset its columns in the order drawn, as (urn, name),
    how many were left out, and the FEEDS edges between listed columns with their
    transformations."""

    listed: dict[str, list[tuple[str, str]]]
    more: dict[str, int]
    feeds: dict[tuple[str, str], tuple[str, ...]]
    dropped: dict[str, int] = field(default_factory=dict)  # column urn -> when (include_deleted)

    def order(self) -> list[tuple[str, str, str]]:
        """(asset, column urn, name) in the order of the answer's `columns`."""
        return [(a, urn, name) for a, cols in self.listed.items() for urn, name in cols]


def columns(
    store: GraphStore,
    settings: Settings,
    name: str,
    side: pictures.Side,
    depth: int,
    include_deleted: bool,
    expanded: Sequence[str] = (),
    colour: pictures.Colour = "quality",
    when: pictures.When = pictures.NOW,
) -> dict[str, Any]:
    """pictures.graph's answer, with the columns drawn in the boxes and listed as `columns`
    ({urn, name, asset, dropped_at}) and `column_edges` ({from, to, via}, column urns); the
    columns and their lineage as of `when.as_of` (their changes are not marked, the assets' and
    their edges' are)."""
    view = pictures.lineage_view(
        store, settings, name, side, depth, include_deleted, expanded, when
    )
    view = pictures.coloured(store, settings, trim(view), colour)
    found = columns_on(store, view, include_deleted, when.as_of)
    result = pictures.answer(view, colour, lambda shown: to_svg(shown, found), when)
    result["columns"] = [
        {"urn": u, "name": n, "asset": a, "dropped_at": found.dropped.get(u)}
        for a, u, n in found.order()
    ]
    result["column_edges"] = [
        {"from": a, "to": b, "via": list(via)} for (a, b), via in sorted(found.feeds.items())
    ]
    return result


def columns_on(
    store: GraphStore, view: View, include_deleted: bool, as_of: int | None = None
) -> Columns:
    """The columns of the assets on `view` and the FEEDS edges between them (one step of the
    column lineage traversal from all of them at once), as of `as_of` (None: now): a column
    first seen later is not there; one its asset's schema had dropped by then is there only
    with `include_deleted` (marked dropped)."""
    assets = [n.urn for n in view.nodes if n.kind != "Transformation"]
    rows = store.read("explore_columns", {"assets": assets, "as_of": as_of})
    gone = dropped_columns(store, assets, as_of)
    dropped = {
        r["urn"]: at for r in rows if (at := gone.get(r["asset"], {}).get(r["name"])) is not None
    }
    if not include_deleted:
        rows = [r for r in rows if r["urn"] not in dropped]
    on_picture = {r["urn"] for r in rows}
    params = {"frontier": sorted(on_picture), "include_deleted": include_deleted, "as_of": as_of}
    step = store.read("lineage_column_downstream_step", params)
    feeds = {
        (r["reached_from"], r["urn"]): tuple(sorted(r["via"] or ()))
        for r in step
        if r["urn"] in on_picture
    }
    linked = {u for pair in feeds for u in pair}
    by_asset: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for r in rows:
        by_asset[r["asset"]].append((r["urn"], r["name"]))
    listed, more = {}, {}
    for asset in assets:
        every = by_asset.get(asset, [])
        kept = sorted(every, key=lambda c: (c[0] not in linked, c[1]))[:MAX_COLUMNS]
        listed[asset] = sorted(kept, key=lambda c: (c[1], c[0]))
        more[asset] = len(every) - len(kept)
    shown = {urn for cols in listed.values() for urn, _ in cols}
    kept_feeds = {pair: via for pair, via in feeds.items() if shown.issuperset(pair)}
    return Columns(listed, more, kept_feeds, {u: at for u, at in dropped.items() if u in shown})


def _heights(view: View, found: Columns) -> dict[str, float]:
    rows = {a: len(cols) + (1 if found.more.get(a) else 0) for a, cols in found.listed.items()}
    return {
        n.urn: NODE_H + (ROW_H * rows[n.urn] + FOOT_H if rows.get(n.urn) else 0) for n in view.nodes
    }


def column_layout(view: View, found: Columns) -> dict[str, tuple[float, float]]:
    """svg.layout's levels and order, each level's boxes stacked by their heights."""
    heights = _heights(view, found)
    by_x: dict[float, list[tuple[float, str]]] = defaultdict(list)
    for urn, (x, y) in layout(view).items():
        by_x[x].append((y, urn))
    pos: dict[str, tuple[float, float]] = {}
    for x, boxes in by_x.items():
        top = float(MARGIN)
        for _, urn in sorted(boxes):
            pos[urn] = (x, top)
            top += heights[urn] + GAP_Y
    return pos


def to_svg(view: View, found: Columns) -> str:
    """The picture: asset boxes with their columns, asset edges faint, column edges on top.
    Groups carry `data-node` (index in the answer's `nodes`) and `data-column` (in `columns`)."""
    pos, heights = column_layout(view, found), _heights(view, found)
    width = max(x for x, _ in pos.values()) + NODE_W + MARGIN
    height = max(pos[u][1] + heights[u] for u in pos) + MARGIN
    index = {urn: i for i, (_, urn, _) in enumerate(found.order())}
    middle: dict[str, tuple[float, float]] = {}  # column urn -> (its box's x, its row's middle)
    for asset, cols in found.listed.items():
        x, y = pos[asset]
        for k, (urn, _) in enumerate(cols):
            middle[urn] = (x, y + NODE_H + ROW_H * k + ROW_H / 2)
    parts = [svg_start(width, height, view.title)]
    for edge in view.edges:
        (x1, y1), (x2, y2) = pos[edge.src], pos[edge.dst]
        attrs = (
            edge_attrs(False, edge.change)  # removed: dashed all the same
            if edge.change
            else 'class="edge" stroke="#c4c4c4" stroke-width="1.2" stroke-dasharray="3 3"'
        )
        half = NODE_H / 2
        parts.append(edge_path(x1, y1 + half, x2, y2 + half, attrs, edge.via))
    by_quality = shows_quality(view)
    for i, node in enumerate(view.nodes):
        x, y = pos[node.urn]
        ref = f'data-node="{i}"'
        box = node_box(node, x, y, by_quality, ref, heights[node.urn], by_tag=view.by_tag)
        parts.append(box)
        parts.extend(_rows(found, node.urn, x, y, index))
    for (a, b), via in sorted(found.feeds.items()):
        (x1, y1), (x2, y2) = middle[a], middle[b]
        ends = f'data-from="{index[a]}" data-to="{index[b]}"'
        attrs = f'class="feed" {ends} stroke="#2563eb" stroke-width="1.4"'
        parts.append(edge_path(x1, y1, x2, y2, attrs, via))
    parts.append("</svg>")
    return "".join(parts)


def _rows(found: Columns, asset: str, x: float, y: float, index: dict[str, int]) -> list[str]:
    """An asset's column rows (each a group to click) and how many more it has; a dropped
    column (shown with include_deleted) is struck through, dashed and says when."""
    e, parts, top = xml_text, [], y + NODE_H
    for k, (urn, name) in enumerate(found.listed.get(asset, [])):
        ry = top + ROW_H * k
        gone = found.dropped.get(urn)
        kind, rect, ink, title = "column", _ROW, 'fill="#111"', e(urn)
        if gone is not None:
            kind, rect, ink = "column dropped", _GONE, _GONE_INK
            title += f" (dropped {e(time_text(gone) or '')})"
        parts.append(
            f'<g class="{kind}" data-column="{index[urn]}"><title>{title}</title>'
            f'<rect x="{x + 6:.0f}" y="{ry:.0f}" width="{NODE_W - 12}" height="{ROW_H}" '
            f'{rect}/><text x="{x + 12:.0f}" y="{ry + 13:.0f}" font-size="11" {ink}'
            f"{fit(name, 6.6, NODE_W - 24, 40)}>{e(short(name, 40))}"
            "</text></g>"
        )
    more = found.more.get(asset, 0)
    if more:
        ry = top + ROW_H * len(found.listed[asset]) + 13
        parts.append(
            f'<text x="{x + 12:.0f}" y="{ry:.0f}" font-size="11" fill="#444">'
            f"… {more} more column(s)</text>"
        )
    return parts
