"""What the browser explorer asks (lineagegraph.serve.explorer.routes): suggestions as a name
is typed, the lineage picture of an asset grown by the nodes clicked, the paths between two
assets, and an asset's page. Pictures are drawn here, by lineagegraph.render.svg, as SVG: the
page needs no layout library and fetches nothing from anywhere else.

A lineage picture can be drawn as of a past time, and can mark what changed since an earlier
one: the picture then and the picture at `since` are both asked, what is only on the later one
is added, what is only on the earlier one is drawn too, removed (docs/history.md)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from lineagegraph.errors import UsageError
from lineagegraph.graph.store import GraphStore
from lineagegraph.output import time_text
from lineagegraph.questions import answers, lineage
from lineagegraph.questions.quality import checks_of
from lineagegraph.questions.tag_answers import tags_of
from lineagegraph.questions.tags import asset_tags
from lineagegraph.render.style import (
    CHANGE_COLOURS,
    QUALITY_COLOURS,
    UNTAGGED,
    colour,
    shows_quality,
    tag_colour,
)
from lineagegraph.render.svg import to_svg
from lineagegraph.render.views import View, impact_view, paths_view, traversal_view, trim
from lineagegraph.settings import Settings

Side = Literal["upstream", "downstream", "both", "impact"]
SIDES: tuple[Side, ...] = ("upstream", "downstream", "both", "impact")
Colour = Literal["quality", "system", "tag"]
COLOURS: tuple[Colour, ...] = ("quality", "system", "tag")
MAX_EXPANDED = 50
"""Nodes a picture can be grown from at once: each is one more pair of one-hop traversals."""
SUGGESTIONS = 10


@dataclass(frozen=True, slots=True)
class When:
    """The time a lineage picture is drawn at (`as_of`, epoch ms; None: now) and the earlier
    time its changes are marked since (`since`; None: no changes marked)."""

    as_of: int | None = None
    since: int | None = None


NOW = When()


def suggest(store: GraphStore, text: str) -> list[str]:
    """Assets whose urn holds what was typed; when none does, the ones that look most like it
    (the CLI's did-you-mean, so a typo still finds its asset)."""
    rows = store.read("serve_search_assets", {"needle": text.lower(), "limit": SUGGESTIONS})
    found = [row["urn"] for row in rows]
    return found or [s.removesuffix(" (deleted)") for s in lineage.suggest(store, text)]


def graph(
    store: GraphStore,
    settings: Settings,
    name: str,
    side: Side,
    depth: int,
    include_deleted: bool,
    expanded: Sequence[str] = (),
    colour: Colour = "quality",
    when: When = NOW,
) -> dict[str, Any]:
    """The picture of `name`'s lineage (see `lineage_view`)."""
    view = lineage_view(store, settings, name, side, depth, include_deleted, expanded, when)
    return answer(coloured(store, settings, trim(view), colour), colour, when=when)


def coloured(store: GraphStore, settings: Settings, view: View, colour: Colour) -> View:
    """The view as drawn in `colour`: by tag, each asset with its classifications and its
    columns' (one derivation for the picture), coloured by them; otherwise as it is."""
    if colour != "tag":
        return view
    urns = [n.urn for n in view.nodes if n.kind != "Transformation"]
    found = asset_tags(store, settings.tags, urns)
    nodes = [
        replace(n, tags=tuple(sorted({t.tag for t in found[n.urn]}))) if n.urn in found else n
        for n in view.nodes
    ]
    return View(view.title, nodes, view.edges, view.note, view.hidden, by_tag=True)


def lineage_view(
    store: GraphStore,
    settings: Settings,
    name: str,
    side: Side,
    depth: int,
    include_deleted: bool,
    expanded: Sequence[str] = (),
    when: When = NOW,
) -> View:
    """`name`'s lineage as of `when.as_of`, plus one hop both ways around each expanded node
    that is on it (a transformation is not an asset and has no lineage of its own to grow);
    with `when.since`, what changed since then marked (see `changes`)."""
    urn = lineage.resolve(store, settings, name)
    found = _grown(store, urn, side, depth, include_deleted, expanded, when.as_of)
    if when.since is None:
        return found
    until = when.as_of if when.as_of is not None else int(time.time() * 1000)
    if when.since >= until:
        raise UsageError(f"since ({time_text(when.since)}) must be before {time_text(until)}")
    try:
        before = _grown(store, urn, side, depth, include_deleted, expanded, when.since)
    except (lineage.AssetNotFound, lineage.AssetDeleted):  # not there then: all of it is new
        before = View(found.title, [], [])
    return changes(before, found, when.since)


def _grown(
    store: GraphStore,
    urn: str,
    side: Side,
    depth: int,
    deleted: bool,
    expanded: Sequence[str],
    as_of: int | None,
) -> View:
    found = _around(store, urn, side, depth, deleted, as_of)
    for other in expanded[:MAX_EXPANDED]:
        node = found.by_urn.get(other)
        if node is not None and node.kind != "Transformation":
            more = _around(store, other, "both", 1, deleted, as_of)
            found = _union(found, [(more, node.level)])
    return found


def changes(before: View, after: View, since: int) -> View:
    """`after` with what is not on `before` marked added, and what is only on `before` drawn
    too, marked removed (where it was on `before`; never the start)."""
    held = {(e.src, e.dst) for e in before.edges}
    now = {(e.src, e.dst) for e in after.edges}
    nodes = [n if n.urn in before.by_urn else replace(n, change="added") for n in after.nodes]
    edges = [e if (e.src, e.dst) in held else replace(e, change="added") for e in after.edges]
    gone = View(
        "",
        [
            replace(n, change="removed", start=False)
            for n in before.nodes
            if n.urn not in after.by_urn
        ],
        [replace(e, change="removed") for e in before.edges if (e.src, e.dst) not in now],
    )
    title = f"{after.title}, changes since {time_text(since)}"
    return _union(View(title, nodes, edges, note=after.note), [(gone, 0)])


def _around(
    store: GraphStore, urn: str, side: Side, depth: int, deleted: bool, as_of: int | None
) -> View:
    if side == "impact":
        found = lineage.impact(store, urn, depth=depth, include_deleted=deleted, as_of=as_of)
        return impact_view(found)
    start = lineage.start_asset(store, urn, include_deleted=deleted, as_of=as_of)
    views = [
        traversal_view(
            start,
            lineage.traverse(store, urn, d, depth=depth, include_deleted=deleted, as_of=as_of),
            d,
        )
        for d in (("upstream", "downstream") if side == "both" else (side,))
    ]
    title = f"{side} of {urn}" if side != "both" else f"lineage of {urn}"
    if as_of is not None:
        title += f" as of {time_text(as_of)}"
    return _union(View(title, [], []), [(v, 0) for v in views])


def _union(base: View, more: Sequence[tuple[View, int]]) -> View:
    """`base` with the nodes and edges of other views added, each view's levels shifted by its
    offset; a node already drawn keeps its place, and there is one start (the first)."""
    nodes, edges = list(base.nodes), list(base.edges)
    seen, linked = set(base.by_urn), {(e.src, e.dst) for e in base.edges}
    has_start = any(n.start for n in nodes)
    for view, offset in more:
        for node in view.nodes:
            if node.urn not in seen:
                seen.add(node.urn)
                start = node.start and not has_start
                nodes.append(replace(node, level=node.level + offset, start=start))
        has_start = has_start or any(n.start for n in nodes)
        for edge in view.edges:
            if (edge.src, edge.dst) not in linked:
                linked.add((edge.src, edge.dst))
                edges.append(edge)
    return View(base.title, nodes, edges, note=base.note)


def paths(
    store: GraphStore,
    settings: Settings,
    source: str,
    target: str,
    depth: int,
    include_deleted: bool,
    colour: Colour = "quality",
) -> dict[str, Any]:
    """The picture of every path from `source` to `target` (the CLI's `path`)."""
    asked = answers.path(
        store, settings, source, target, depth=depth, include_deleted=include_deleted
    )
    found = asked.answer
    view = paths_view(found.paths, asked.start, asked.end)
    notes = list(found.notes) or ([] if found.paths else [f"no path within {depth} hops"])
    view.note = "; ".join(notes)
    view = coloured(store, settings, trim(view), colour)
    return answer(view, colour) | {"paths": len(found.paths)}


def answer(
    view: View,
    by: Colour = "quality",
    draw: Callable[[View], str] = to_svg,
    when: When = NOW,
) -> dict[str, Any]:
    """A picture for the page: its SVG (drawn by `draw` from the view as shown), what is on it
    (for clicks; `nodes` in the order drawn) and the legend of its colours: by tag for a view
    `coloured` so, by quality once any asset on it has one (as the CLI's pictures), or by
    system; with `when.since`, also the changes' outlines (`class`: added, removed, as the
    SVG's nodes and edges carry it) and how many of each (`changes`)."""
    shown = trim(view)
    if by == "system":
        plain = [replace(n, quality=None) for n in shown.nodes]
        shown = View(shown.title, plain, shown.edges, shown.note, shown.hidden)
    if shown.by_tag:
        sets = {n.tags for n in shown.nodes if n.kind != "Transformation"}
        legend = [
            {"label": ", ".join(tags) or "untagged", "colour": tag_colour(tags)}
            for tags in sorted(sets - {()})
        ] + ([{"label": "untagged", "colour": UNTAGGED}] if () in sets else [])
    elif shows_quality(shown):
        legend = [{"label": q, "colour": c} for q, c in QUALITY_COLOURS.items()]
    else:
        legend = [
            {"label": s or "?", "colour": colour(s or None)}
            for s in sorted({n.system or "" for n in shown.nodes})
        ]
    if when.since is not None:
        legend += [
            {"label": f"{c} since {time_text(when.since)}", "colour": CHANGE_COLOURS[c], "class": c}
            for c in CHANGE_COLOURS
        ]
    nodes = [
        {
            "urn": n.urn,
            "name": n.name,
            "system": n.system,
            "kind": n.kind,
            "level": n.level,
            "start": n.start,
            "deleted": n.deleted,
            "quality": n.quality,
            "tags": list(n.tags),
            "change": n.change,
        }
        for n in shown.nodes
    ]
    counted = [*shown.nodes, *shown.edges]
    return {
        "title": shown.title,
        "note": shown.note,
        "svg": draw(shown),
        "nodes": nodes,
        "edges": len(shown.edges),
        "legend": legend,
        "as_of": when.as_of,
        "changes": {c: sum(x.change == c for x in counted) for c in CHANGE_COLOURS},
    }


def asset(store: GraphStore, settings: Settings, name: str) -> dict[str, Any]:
    """An asset's page: what the graph stores of it, the transformations that read or write it
    (with their runs), its checks' latest results (on it or on its columns), and its
    classifications and its columns', own and derived with their why, and where a tag
    stopped on the way (as `lineagegraph tags`)."""
    urn = lineage.resolve(store, settings, name)
    found = lineage.lookup(store, [urn])[urn]
    rows = store.read("explore_asset", {"urn": urn})
    jobs = store.read("explore_asset_jobs", {"urn": urn})
    checks = sorted(checks_of(store, [urn]), key=lambda c: (c.target, c.name or "", c.urn))
    return {
        "asset": found,
        "labels": sorted(rows[0]["labels"]) if rows else [],
        "properties": dict(sorted(rows[0]["properties"].items())) if rows else {},
        "transformations": jobs,
        "checks": checks,
        "tags": tags_of(store, settings, urn),
    }
