"""The lineage questions as a library: ask with a name as a user types it, get an answer that
renders itself as a table, a tree, JSON, Mermaid, DOT or an HTML page.

The CLI commands (cli/lineage.py) and the Python API (lineagegraph.api) both call these.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from functools import partial

from lineagegraph.graph.base import GraphStore
from lineagegraph.identity import S3_ACCESS_SYSTEM
from lineagegraph.output import time_text
from lineagegraph.questions import history, lineage
from lineagegraph.questions.gate import GateAnswer, quality_gate
from lineagegraph.questions.lineage import Direction, Impact, PathAnswer, Reached, Reader
from lineagegraph.questions.schemas import SchemaHistory, history_of
from lineagegraph.questions.tags import Walked, asset_tags
from lineagegraph.render.as_json import to_json
from lineagegraph.render.formats import PICTURE_FORMATS, picture
from lineagegraph.render.text import (
    direct_readers_text,
    impact_text,
    paths_text,
    reached_table,
    tree,
)
from lineagegraph.render.views import (
    columns_view,
    impact_view,
    paths_view,
    traversal_view,
    with_readers,
)
from lineagegraph.settings import Settings


@dataclass
class Traversal:
    """The assets upstream or downstream of `start`, nearest first. Upstream, `readers` are
    the principals that read the start or an asset shown straight from S3 (access logs,
    CloudTrail): consumers no lineage edge shows, since they write nothing."""

    start: Reached
    direction: Direction
    depth: int
    assets: list[Reached]
    as_of: int | None = None
    readers: list[Reader] = field(default_factory=list)

    def render(self, fmt: str) -> str:
        start, reached, direction, depth = self.start, self.assets, self.direction, self.depth
        view = traversal_view(start, reached, direction)
        when = _when(self.as_of)
        if self.readers:
            view = with_readers(view, self.readers, direction)
        if fmt == "json":
            answer = {"start": start, "direction": direction, "depth": depth, "assets": reached}
            if direction == "upstream":
                answer["readers"] = self.readers
            return to_json(_with_as_of(answer, self.as_of))
        if fmt in PICTURE_FORMATS:
            view.note = when.strip()
            return picture(view, fmt)
        if fmt == "tree" and (reached or self.readers):
            return tree(view)
        direct = "\n\n" + direct_readers_text(self.readers) if self.readers else ""
        if not reached:
            return f"nothing {direction} of {start.urn} within {depth} hop(s){when}" + direct
        header = f"{direction} of {start.urn}: {len(reached)} asset(s) within {depth} hop(s)"
        return header + when + "\n" + reached_table(reached, direction) + direct


def _when(as_of: int | None) -> str:
    """What a text answer as of a time says after its first line."""
    return "" if as_of is None else f" as of {time_text(as_of)}"


def _with_as_of(answer: dict[str, object], as_of: int | None) -> dict[str, object]:
    """A JSON answer, with `as_of` (epoch ms) when it was asked as of a time."""
    return answer if as_of is None else {"as_of": as_of, **answer}


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
    as_of: int | None = None

    def render(self, fmt: str, *, notes_shown: bool = True) -> str:
        """`notes_shown=False` leaves the notes out of a text answer (the CLI prints them on
        stderr, so that a terminal shows them once)."""
        found, notes = self.answer.paths, self.answer.notes
        if fmt == "json":
            answer = {"from": self.start, "to": self.end, "depth": self.depth, "paths": found,
                      "notes": notes}  # fmt: skip
            return to_json(_with_as_of(answer, self.as_of))
        if fmt in PICTURE_FORMATS:
            view = paths_view(found, self.start, self.end)
            view.note = " ".join([*notes, _when(self.as_of).strip()]).strip()
            return picture(view, fmt)
        if not found:
            none = f"no path from {self.answer.src} to {self.answer.dst} within {self.depth} hop(s)"
            none += _when(self.as_of)
            if self.reverse:
                none += f"; one runs the other way: path {self.answer.dst} {self.answer.src}"
            return none
        when = [f"as of {time_text(self.as_of)}"] if self.as_of is not None else []
        return "\n".join([*(notes if notes_shown else ()), *when, paths_text(found)])


@dataclass
class ImpactAnswer:
    """Everything downstream of an asset, by system and kind, and the jobs that read it."""

    impact: Impact
    as_of: int | None = None

    def render(self, fmt: str) -> str:
        if fmt == "json":
            if self.as_of is None:
                return to_json(self.impact)
            return to_json({"as_of": self.as_of, **_fields(self.impact)})
        if fmt in PICTURE_FORMATS:
            view = impact_view(self.impact)
            view.note = _when(self.as_of).strip()
            return picture(view, fmt)
        if fmt == "tree":
            return tree(impact_view(self.impact))
        when = f"as of {time_text(self.as_of)}\n" if self.as_of is not None else ""
        return when + impact_text(self.impact)


def _fields(value: object) -> dict[str, object]:
    """A dataclass's fields by name, as to_json writes them."""
    return {name: getattr(value, name) for name in value.__dataclass_fields__}  # type: ignore[attr-defined]


@dataclass
class ColumnLineage:
    """The columns a column is derived from (upstream) and those derived from it."""

    start: Reached
    depth: int
    found: dict[Direction, list[Reached]] = field(default_factory=dict)
    as_of: int | None = None

    def render(self, fmt: str) -> str:
        found, depth, urn, when = self.found, self.depth, self.start.urn, _when(self.as_of)
        up, down = found.get("upstream", []), found.get("downstream", [])
        if fmt == "json":
            return to_json(_with_as_of({"column": self.start, "depth": depth, **found}, self.as_of))
        if fmt in PICTURE_FORMATS:
            view = columns_view(self.start, up, down)
            view.note = when.strip()
            return picture(view, fmt)
        if fmt == "tree":
            return tree(columns_view(self.start, up, down))
        return "\n\n".join(
            f"{d} of {urn}: {len(items)} column(s){when}\n" + reached_table(items, d)
            if items
            else f"nothing {d} of {urn} within {depth} hop(s){when}"
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
    as_of: int | None = None,
) -> Traversal:
    """`upstream` or `downstream` of NAME (a urn, an S3 path or a Snowflake name), now or as
    of `as_of` (epoch ms)."""
    urn = lineage.resolve(store, settings, name)
    start = lineage.start_asset(store, urn, include_deleted=include_deleted, as_of=as_of)
    edges: set[tuple[str, str]] = set()
    reached = lineage.traverse(
        store,
        urn,
        direction,
        depth=depth,
        systems={s.lower() for s in systems},
        kinds=set(kinds),
        include_deleted=include_deleted,
        as_of=as_of,
        edges=edges,
    )
    walked = None
    if direction == "upstream" and as_of is None and not (systems or kinds or include_deleted):
        # every asset of the answer is a seed of the tags' slice, and the edges between them
        # were just read: only their column lineage is left to read
        complete = [urn, *(r.urn for r in reached if r.distance < depth)]
        walked = Walked(edges, frozenset(complete))
    start, *reached = with_tags(store, settings, [start, *reached], walked)
    readers: list[Reader] = []
    if direction == "upstream":
        shown = [start.urn, *(item.urn for item in reached)]
        readers = lineage.readers(store, shown, systems=[S3_ACCESS_SYSTEM], as_of=as_of)
    return Traversal(start, direction, depth, reached, as_of, readers)


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
    as_of: int | None = None,
) -> Paths:
    """The lineage paths from `source` to `target`, shortest first (as of `as_of`)."""
    src = lineage.resolve(store, settings, source)
    dst = lineage.resolve(store, settings, target)
    deleted = include_deleted
    answer = lineage.paths_between(
        store, src, dst, depth, limit, include_deleted=deleted, as_of=as_of
    )
    start, end = (
        lineage.start_asset(store, urn, include_deleted=deleted, as_of=as_of)
        for urn in (answer.src, answer.dst)
    )
    reverse = not answer.paths and bool(
        lineage.paths_between(store, dst, src, depth, 1, include_deleted=deleted, as_of=as_of).paths
    )
    return Paths(start, end, depth, answer, reverse, as_of)


def impact(
    store: GraphStore,
    settings: Settings,
    name: str,
    *,
    include_deleted: bool = False,
    as_of: int | None = None,
) -> ImpactAnswer:
    """What a change to NAME would affect (as of `as_of`)."""
    urn = lineage.resolve(store, settings, name)
    found = lineage.impact(store, urn, include_deleted=include_deleted, as_of=as_of)
    start, *assets = with_tags(store, settings, [found.start, *found.assets])
    tagged = {item.urn: item for item in assets}
    groups = {key: [tagged[item.urn] for item in items] for key, items in found.groups.items()}
    return ImpactAnswer(replace(found, start=start, assets=assets, groups=groups), as_of)


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
    as_of: int | None = None,
) -> ColumnLineage:
    """Column lineage of ASSET#COLUMN, both ways unless `direction` is given (as of
    `as_of`)."""
    urn = lineage.resolve_column(store, settings, column)
    start = lineage.start_column(store, urn, include_deleted=include_deleted, as_of=as_of)
    directions = [direction] if direction else list(lineage.DIRECTIONS)
    found = {
        d: lineage.column_lineage(
            store, urn, d, depth, include_deleted=include_deleted, as_of=as_of
        )
        for d in directions
    }
    return ColumnLineage(start, depth, found, as_of)


def diff(
    store: GraphStore,
    settings: Settings,
    since: int,
    until: int | None = None,
    name: str | None = None,
    *,
    depth: int = history.DEFAULT_DEPTH,
) -> history.Diff:
    """What was added and removed between `since` and `until` (epoch ms; default: now), in
    the whole graph or within `depth` hops of NAME."""
    urn = None if name is None else lineage.resolve(store, settings, name)
    end = int(time.time() * 1000) if until is None else until
    return history.diff(store, since, end, urn, depth)


def timeline(store: GraphStore, settings: Settings, name: str) -> history.Timeline:
    """NAME's history: when it, its columns and its lineage edges came and went."""
    return history.timeline(store, lineage.resolve(store, settings, name))


def schema_history(store: GraphStore, settings: Settings, name: str) -> SchemaHistory:
    """NAME's schema versions as each source reports them, and the changes between them."""
    return history_of(store, lineage.resolve(store, settings, name))
