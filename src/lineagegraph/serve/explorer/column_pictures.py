"""The explorer's column view: an asset's lineage picture (the same as pictures.graph draws) with
each asset's columns listed inside its box and the column lineage between them (FEEDS) drawn
from column to column. The page highlights what feeds a clicked column and what it feeds from
`columns` and `column_edges`, so a click needs no further request.

Columns are named in the SVG by their index in `columns`, not by urn: a name can hold any
character, and the page looks the exact value up in the JSON instead of in the markup."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.output import time_text
from lineagegraph.questions.schemas import dropped_columns
from lineagegraph.render.style import CHANGE_COLOURS, shows_quality
from lineagegraph.render.svg import (
    GAP_Y,
    MARGIN,
    NODE_H,
    NODE_W,
    changed,
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
_ROW = 'fill="#ffffff" fill-opacity="0.85"', 'stroke="#d1d5db" stroke-width="0.6"'
_GONE = 'fill="#f3f4f6" fill-opacity="0.85"', 'stroke="#9ca3af" stroke-width="0.6"'
_DASHED = ' stroke-dasharray="3 2"'  # a dropped or removed column's outline
_FEED = 'stroke="#2563eb" stroke-width="1.4"'
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
    present: frozenset[str] = frozenset()  # every standing column of the assets, listed or not
    changes: dict[str, str] = field(default_factory=dict)  # column urn -> added, removed
    feed_changes: dict[tuple[str, str], str] = field(default_factory=dict)

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
    ({urn, name, asset, dropped_at, change}) and `column_edges` ({from, to, via, change},
    column urns); the columns and their lineage as of `when.as_of`; with `when.since`, marked
    added or removed since then as the assets and their edges are (`changes`), and counted in
    `column_changes`."""
    view = pictures.lineage_view(
        store, settings, name, side, depth, include_deleted, expanded, when
    )
    view = pictures.coloured(store, settings, trim(view), colour)
    found = columns_on(store, view, include_deleted, when.as_of)
    if when.since is not None:
        then = columns_on(store, view, False, when.since, unlimited=True)
        standing = columns_on(store, view, False, when.as_of) if include_deleted else found
        found = changes(found, set(standing.feeds), then)
    result = pictures.answer(view, colour, lambda shown: to_svg(shown, found), when)
    result["columns"] = [
        {"urn": u, "name": n, "asset": a, "dropped_at": found.dropped.get(u),
         "change": found.changes.get(u)}
        for a, u, n in found.order()
    ]  # fmt: skip
    result["column_edges"] = [
        {"from": a, "to": b, "via": list(via), "change": found.feed_changes.get((a, b))}
        for (a, b), via in sorted(found.feeds.items())
    ]
    if when.since is not None:
        marks = [*found.changes.values(), *found.feed_changes.values()]
        result["column_changes"] = {c: marks.count(c) for c in CHANGE_COLOURS}
    return result


def changes(now: Columns, standing: set[tuple[str, str]], then: Columns) -> Columns:
    """`now` with its columns and column edges marked against `then` (the same assets' at the
    earlier time): added when not standing then; removed when standing then and dropped since
    (a dropped one listed with include_deleted, or else drawn again, as the picture draws a
    removed asset); an edge likewise (`standing`: those of `now` that still hold)."""
    marks = {
        u: "added"
        for cols in now.listed.values()
        for u, _ in cols
        if u not in then.present and u not in now.dropped
    }
    marks.update({u: "removed" for u in now.dropped if u in then.present})
    listed = {asset: list(cols) for asset, cols in now.listed.items()}
    for asset, cols in then.listed.items():
        gone = [(u, n) for u, n in cols if u not in now.present and u not in now.dropped]
        if asset in listed and gone:
            listed[asset] = sorted([*listed[asset], *gone], key=lambda c: (c[1], c[0]))
            marks.update({u: "removed" for u, _ in gone})
    shown = {u for cols in listed.values() for u, _ in cols}
    feeds = dict(now.feeds)
    feed_marks = {
        pair: "added" if pair in standing else "removed"
        for pair in now.feeds
        if (pair in standing) != (pair in then.feeds)
    }
    for pair, via in then.feeds.items():
        if pair not in feeds and shown.issuperset(pair):
            feeds[pair], feed_marks[pair] = via, "removed"
    return replace(now, listed=listed, feeds=feeds, changes=marks, feed_changes=feed_marks)


def columns_on(
    store: GraphStore,
    view: View,
    include_deleted: bool,
    as_of: int | None = None,
    unlimited: bool = False,
) -> Columns:
    """The columns of the assets on `view` and the FEEDS edges between them (one step of the
    column lineage traversal from all of them at once), as of `as_of` (None: now): a column
    first seen later is not there; one its asset's schema had dropped by then is there only
    with `include_deleted` (marked dropped). Up to MAX_COLUMNS of an asset (all: `unlimited`)."""
    assets = [n.urn for n in view.nodes if n.kind != "Transformation"]
    rows = store.read("explore_columns", {"assets": assets, "as_of": as_of})
    gone = dropped_columns(store, assets, as_of)
    dropped = {
        r["urn"]: at for r in rows if (at := gone.get(r["asset"], {}).get(r["name"])) is not None
    }
    present = frozenset(r["urn"] for r in rows if r["urn"] not in dropped)
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
        limit = None if unlimited else MAX_COLUMNS
        kept = sorted(every, key=lambda c: (c[0] not in linked, c[1]))[:limit]
        listed[asset] = sorted(kept, key=lambda c: (c[1], c[0]))
        more[asset] = len(every) - len(kept)
    shown = {urn for cols in listed.values() for urn, _ in cols}
    kept_feeds = {pair: via for pair, via in feeds.items() if shown.issuperset(pair)}
    dropped_shown = {u: at for u, at in dropped.items() if u in shown}
    return Columns(listed, more, kept_feeds, dropped_shown, present)


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
        change = found.feed_changes.get((a, b))
        stroke = f'stroke="{CHANGE_COLOURS[change]}" stroke-width="2.2"' if change else _FEED
        dash = ' stroke-dasharray="4 3"' if change == "removed" else ""
        attrs = f'class="{changed("feed", change)}" {ends} {stroke}{dash}'
        parts.append(edge_path(x1, y1, x2, y2, attrs, via))
    parts.append("</svg>")
    return "".join(parts)


def _rows(found: Columns, asset: str, x: float, y: float, index: dict[str, int]) -> list[str]:
    """An asset's column rows (each a group to click) and how many more it has; a dropped
    column (shown with include_deleted) is struck through, dashed and says when."""
    e, parts, top = xml_text, [], y + NODE_H
    for k, (urn, name) in enumerate(found.listed.get(asset, [])):
        ry = top + ROW_H * k
        gone, change = found.dropped.get(urn), found.changes.get(urn)
        kind, (fill, stroke), ink, title = "column", _ROW, 'fill="#111"', e(urn)
        if gone is not None:
            kind, (fill, stroke), ink = "column dropped", _GONE, _GONE_INK
            title += f" (dropped {e(time_text(gone) or '')})"
        if change:  # outlined in its change's colour, as the picture outlines an asset
            kind, title = changed(kind, change), f"{title} ({change})"
            stroke = f'stroke="{CHANGE_COLOURS[change]}" stroke-width="2"'
        if gone is not None or change == "removed":
            stroke += _DASHED
        parts.append(
            f'<g class="{kind}" data-column="{index[urn]}"><title>{title}</title>'
            f'<rect x="{x + 6:.0f}" y="{ry:.0f}" width="{NODE_W - 12}" height="{ROW_H}" '
            f'{fill} {stroke}/><text x="{x + 12:.0f}" y="{ry + 13:.0f}" font-size="11" {ink}'
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
