"""The lineage questions as a library: ask with a name as a user types it, get an answer that
renders itself as a table, a tree, JSON, Mermaid, DOT or an HTML page.

The CLI commands (cli/lineage.py) and the Python API (lineagegraph.api) both call these.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from functools import partial

from lineagegraph.graph.base import GraphStore
from lineagegraph.questions import lineage
from lineagegraph.questions.gate import GateAnswer, quality_gate
from lineagegraph.questions.lineage import Direction, Impact, PathAnswer, Reached
from lineagegraph.questions.tags import Walked, asset_tags
from lineagegraph.render.as_json import to_json
from lineagegraph.render.formats import PICTURE_FORMATS, picture
from lineagegraph.render.text import impact_text, paths_text, reached_table, tree
from lineagegraph.render.views import columns_view, impact_view, paths_view, traversal_view
from lineagegraph.settings import Settings


@dataclass
class Traversal:
    """The assets upstream or downstream of `start`, nearest first."""

    start: Reached
    direction: Direction
    depth: int
    assets: list[Reached]

    def render(self, fmt: str) -> str:
        start, reached, direction, depth = self.start, self.assets, self.direction, self.depth
        view = traversal_view(start, reached, direction)
        if fmt == "json":
            return to_json(
                {"start": start, "direction": direction, "depth": depth, "assets": reached}
            )
        if fmt in PICTURE_FORMATS:
            return picture(view, fmt)
        if not reached:
            return f"nothing {direction} of {start.urn} within {depth} hop(s)"
        if fmt == "tree":
            return tree(view)
        header = f"{direction} of {start.urn}: {len(reached)} asset(s) within {depth} hop(s)"
        return header + "\n" + reached_table(reached, direction)


@dataclass
class Paths:
    """The lineage paths between two assets, shortest first; `answer.notes` say when an S3
    object's dataset stood in for it. `reverse`: with no path that way, whether one runs from
    TO to FROM (people often ask the question the other way round)."""

    start: Reached
    end: Reached
    depth: int
    answer: PathAnswer
    reverse: bool = False

    def render(self, fmt: str, *, notes_shown: bool = True) -> str:
        """`notes_shown=False` leaves the notes out of a text answer (the CLI prints them on
        stderr, so that a terminal shows them once)."""
        found, notes = self.answer.paths, self.answer.notes
        if fmt == "json":
            return to_json(
                {
                    "from": self.start,
                    "to": self.end,
                    "depth": self.depth,
                    "paths": found,
                    "notes": notes,
                }
            )
        if fmt in PICTURE_FORMATS:
            view = paths_view(found, self.start, self.end)
            view.note = " ".join(notes)
            return picture(view, fmt)
        if not found:
            none = f"no path from {self.answer.src} to {self.answer.dst} within {self.depth} hop(s)"
            if self.reverse:
                none += f"; one runs the other way: path {self.answer.dst} {self.answer.src}"
            return none
        return "\n".join([*(notes if notes_shown else ()), paths_text(found)])


@dataclass
class ImpactAnswer:
    """Everything downstream of an asset, by system and kind, and the jobs that read it."""

    impact: Impact

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return to_json(self.impact)
        if fmt in PICTURE_FORMATS:
            return picture(impact_view(self.impact), fmt)
        if fmt == "tree":
            return tree(impact_view(self.impact))
        return impact_text(self.impact)


@dataclass
class ColumnLineage:
    """The columns a column is derived from (upstream) and those derived from it."""

    start: Reached
    depth: int
    found: dict[Direction, list[Reached]] = field(default_factory=dict)

    def render(self, fmt: str) -> str:
        found, depth, urn = self.found, self.depth, self.start.urn
        up, down = found.get("upstream", []), found.get("downstream", [])
        if fmt == "json":
            return to_json({"column": self.start, "depth": depth, **found})
        if fmt in PICTURE_FORMATS:
            return picture(columns_view(self.start, up, down), fmt)
        if fmt == "tree":
            return tree(columns_view(self.start, up, down))
        return "\n\n".join(
            f"{d} of {urn}: {len(items)} column(s)\n" + reached_table(items, d)
            if items
            else f"nothing {d} of {urn} within {depth} hop(s)"
            for d, items in found.items()
        )


def traversal(
    store: GraphStore,
    settings: Settings,
    name: str,
    direction: Direction,
    *,
    depth: int = lineage.DEFAULT_DEPTH,
    systems: Collection[str] = (),
    kinds: Collection[str] = (),
    include_deleted: bool = False,
) -> Traversal:
    """`upstream` or `downstream` of NAME (a urn, an S3 path or a Snowflake name)."""
    urn = lineage.resolve(store, settings, name)
    start = lineage.start_asset(store, urn, include_deleted=include_deleted)
    edges: set[tuple[str, str]] = set()
    reached = lineage.traverse(
        store,
        urn,
        direction,
        depth=depth,
        systems={s.lower() for s in systems},
        kinds=set(kinds),
        include_deleted=include_deleted,
        edges=edges,
    )
    walked = None
    if direction == "upstream" and not (systems or kinds or include_deleted):
        # every asset of the answer is a seed of the tags' slice, and the edges between them
        # were just read: only their column lineage is left to read
        complete = [urn, *(r.urn for r in reached if r.distance < depth)]
        walked = Walked(edges, frozenset(complete))
    start, *reached = with_tags(store, settings, [start, *reached], walked)
    return Traversal(start, direction, depth, reached)


def with_tags(
    store: GraphStore, settings: Settings, items: list[Reached], walked: Walked | None = None
) -> list[Reached]:
    """The assets, each with its classifications and its columns' (one derivation for all)."""
    found = asset_tags(store, settings.tags, [item.urn for item in items], walked)
    return [replace(item, tags=found[item.urn]) for item in items]


upstream = partial(traversal, direction="upstream")
"""Every asset that feeds NAME, each once with its distance in hops (options: `traversal`)."""
downstream = partial(traversal, direction="downstream")
"""Every asset NAME flows into, each once with its distance in hops (options: `traversal`)."""


def path(
    store: GraphStore,
    settings: Settings,
    source: str,
    target: str,
    *,
    depth: int = 10,
    limit: int = lineage.DEFAULT_PATH_LIMIT,
    include_deleted: bool = False,
) -> Paths:
    """The lineage paths from `source` to `target`, shortest first."""
    src = lineage.resolve(store, settings, source)
    dst = lineage.resolve(store, settings, target)
    answer = lineage.paths_between(store, src, dst, depth, limit, include_deleted=include_deleted)
    start, end = (
        lineage.start_asset(store, urn, include_deleted=include_deleted)
        for urn in (answer.src, answer.dst)
    )
    reverse = not answer.paths and bool(
        lineage.paths_between(store, dst, src, depth, 1, include_deleted=include_deleted).paths
    )
    return Paths(start, end, depth, answer, reverse)


def impact(
    store: GraphStore, settings: Settings, name: str, *, include_deleted: bool = False
) -> ImpactAnswer:
    """What a change to NAME would affect."""
    urn = lineage.resolve(store, settings, name)
    found = lineage.impact(store, urn, include_deleted=include_deleted)
    start, *assets = with_tags(store, settings, [found.start, *found.assets])
    tagged = {item.urn: item for item in assets}
    groups = {key: [tagged[item.urn] for item in items] for key, items in found.groups.items()}
    return ImpactAnswer(replace(found, start=start, assets=assets, groups=groups))


def check(
    store: GraphStore, settings: Settings, name: str, *, depth: int = lineage.MAX_DEPTH
) -> GateAnswer:
    """The quality gate of NAME: the latest result of every check on it and upstream of it;
    `.passed` is False when one of them fails (the CLI then exits 6)."""
    return quality_gate(store, lineage.resolve(store, settings, name), depth=depth)


def columns(
    store: GraphStore,
    settings: Settings,
    column: str,
    *,
    direction: Direction | None = None,
    depth: int = lineage.DEFAULT_DEPTH,
    include_deleted: bool = False,
) -> ColumnLineage:
    """Column lineage of ASSET#COLUMN, both ways unless `direction` is given."""
    urn = lineage.resolve_column(store, settings, column)
    start = lineage.start_column(store, urn, include_deleted=include_deleted)
    directions = [direction] if direction else list(lineage.DIRECTIONS)
    found = {
        d: lineage.column_lineage(store, urn, d, depth, include_deleted=include_deleted)
        for d in directions
    }
    return ColumnLineage(start, depth, found)
