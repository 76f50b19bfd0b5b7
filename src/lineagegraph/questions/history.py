"""What changed and when: `lineagegraph diff` (the assets, columns and lineage edges added and
removed between two times, and the schema changes in between) and `lineagegraph history` (one
asset's timeline).

Both read the history every asset, column and lineage edge keeps (docs/history.md): an asset is
there from `first_seen` except between each deletion (`deleted`) and its return (`restored`), a
column while its asset is and from its own `first_seen`, an edge from `first_seen` except
between each stop (`stopped`) and its resumption (`resumed`). A diff compares the graph at the
window's two ends, so something that came and went within the window is no change. Schema
changes are each source's changes between consecutive versions (lineagegraph.schemas), dated by
the source's time: every one within the window counts.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from lineagegraph.errors import UsageError
from lineagegraph.graph.store import GraphStore
from lineagegraph.identity import IdentityError, split_column_urn
from lineagegraph.output import format_rows, time_text
from lineagegraph.questions import lineage
from lineagegraph.questions.lineage import held_at
from lineagegraph.questions.schemas import change_dict, history_of
from lineagegraph.render.as_json import to_json
from lineagegraph.render.formats import PICTURE_FORMATS, picture
from lineagegraph.render.views import Edge, Node, View, label
from lineagegraph.schemas import Change as SchemaChange
from lineagegraph.schemas import changes_by_asset

log = logging.getLogger(__name__)

ChangeKind = Literal["added", "removed"]
EDGE_KINDS = ("FLOWS_TO", "FEEDS", "READS_FROM", "WRITES_TO")
DEFAULT_DEPTH = 3


@dataclass(frozen=True, slots=True)
class Change:
    """An asset, column or lineage edge that was not there at the start of the window and is
    at its end (added), or the other way round (removed). `at`: when, within the window; an
    edge runs from `urn` to `to` (a transformation's READS_FROM runs from it to the asset)."""

    change: ChangeKind
    what: str  # Asset, Column, or the edge's type
    urn: str
    at: int
    to: str | None = None
    via: tuple[str, ...] = ()
    kind: str | None = None  # an asset's kind (Table, Dataset, File)
    system: str | None = None


@dataclass
class Diff:
    """The changes between `since` and `until`, around `asset` (within `depth` hops) or in the
    whole graph."""

    since: int
    until: int
    changes: list[Change]
    asset: str | None = None
    depth: int | None = None
    schemas: list[tuple[str, SchemaChange]] = field(default_factory=list)  # (asset, change)

    def render(self, fmt: str) -> str:
        added = [c for c in self.changes if c.change == "added"]
        removed = [c for c in self.changes if c.change == "removed"]
        if fmt == "json":
            schemas = [{"asset": urn, **change_dict(c)} for urn, c in self.schemas]
            return to_json({"since": self.since, "until": self.until, "asset": self.asset,
                            "depth": self.depth, "added": added, "removed": removed,
                            "schemas": schemas})  # fmt: skip
        if fmt in PICTURE_FORMATS:
            return picture(self.view(), fmt)
        title = self.title()
        if not self.changes and not self.schemas:
            return f"no changes {title}"
        counts = f"{len(added)} added, {len(removed)} removed"
        if self.schemas:
            counts += f", {len(self.schemas)} schema change(s)"
        if fmt == "tree":
            lines = [f"{counts} {title}"]
            for name, group in (("added", added), ("removed", removed)):
                lines.append(f"{name}:")
                lines += [f"  {_described(c)}  ({time_text(c.at)})" for c in group]
            if self.schemas:
                lines.append("schema changed:")
                lines += [f"  {urn} ({c.source}): {_schema_summary(c)}  ({time_text(c.at)})"
                          for urn, c in self.schemas]  # fmt: skip
            return "\n".join(lines)
        rows = [
            [c.change, c.what, c.urn, c.to or "", time_text(c.at), ", ".join(c.via)]
            for c in self.changes
        ]
        rows += [
            ["breaking" if c.breaking else "compatible", f"Schema ({c.source})", urn, "",
             time_text(c.at), c.summary()]
            for urn, c in self.schemas
        ]  # fmt: skip
        table = format_rows(["change", "what", "urn", "to", "at", "via"], rows, "table")
        return f"{counts} {title}\n{table}"

    def title(self) -> str:
        window = f"between {time_text(self.since)} and {time_text(self.until)}"
        if self.asset is None:
            return window
        return f"{window} within {self.depth} hop(s) of {self.asset}"

    def view(self) -> View:
        """The asset-level changes as a picture: assets and FLOWS_TO added drawn as usual,
        removed ones marked deleted and dashed; an asset whose schema changed says how."""
        detail: dict[str, list[str]] = {}
        for urn, sc in self.schemas:
            detail.setdefault(urn, []).append(f"schema: {_schema_summary(sc)}")
        nodes: dict[str, Node] = {}
        edges = []
        for c in self.changes:
            if c.what == "Asset":
                name = label(c.urn, c.kind or "Asset", c.urn)
                nodes[c.urn] = Node(c.urn, name, c.system, c.kind or "Asset", 0,
                                    deleted=c.change == "removed",
                                    detail="; ".join(detail.get(c.urn, ())))  # fmt: skip
            elif c.what == "FLOWS_TO" and c.to is not None:
                edges.append(Edge(c.urn, c.to, c.via, dashed=c.change == "removed"))
        for urn in [*(u for e in edges for u in (e.src, e.dst)), *detail]:
            nodes.setdefault(urn, Node(urn, label(urn, "Asset", urn), None, "Asset", 0,
                                       detail="; ".join(detail.get(urn, ()))))  # fmt: skip
        note = "removed: dashed edges and deleted assets; added: the others"
        return View(f"changes {self.title()}", list(nodes.values()), edges, note=note)


def _schema_summary(change: SchemaChange) -> str:
    return ("breaking: " if change.breaking else "") + change.summary()


def _described(change: Change) -> str:
    if change.to is None:
        return f"{change.what} {change.urn}"
    via = f" via {', '.join(change.via)}" if change.via else ""
    return f"{change.what} {change.urn} -> {change.to}{via}"


def edge_held(first_seen: int | None, stopped: Sequence[int] | None,
              resumed: Sequence[int] | None, at: int) -> bool:  # fmt: skip
    """Whether an edge held at `at`: first seen by then, and every stop by then resumed."""
    if first_seen is None or first_seen > at:
        return False
    return sum(s <= at for s in stopped or ()) == sum(r <= at for r in resumed or ())


def changed_at(times: Iterable[int | None], since: int, until: int) -> int:
    """The last of `times` within (since, until]: when the change happened."""
    return max((t for t in times if t is not None and since < t <= until), default=until)


def diff(
    store: GraphStore,
    since: int,
    until: int,
    asset: str | None = None,
    depth: int = DEFAULT_DEPTH,
) -> Diff:
    """The assets, columns and lineage edges added and removed between `since` and `until`
    (epoch ms), and the schema changes between, in the whole graph or within `depth` hops of
    the asset `asset`, either way."""
    if until <= since:
        raise UsageError(f"--until ({time_text(until)}) must be after --since ({time_text(since)})")
    if pending := store.upgrade_pending():  # its older changes have no changed_at to be found by
        log.warning("%s", pending)
    window = {"since": since, "until": until}
    around = None if asset is None else _around(store, asset, depth)
    changes: list[Change] = []
    for what, statement in (("Asset", "history_changed_assets"),
                            ("Column", "history_changed_columns")):  # fmt: skip
        for row in store.read(statement, window):
            owner = row["asset"] if what == "Column" else row["urn"]
            if around is not None and owner not in around:
                continue
            before, after = held_at(row, since), held_at(row, until)
            if before != after:
                deleted = [*(row["deleted"] or ()), row["deleted_at"]]
                times = deleted if before else [row["first_seen"], *(row["restored"] or ())]
                changes.append(Change("added" if after else "removed", what, row["urn"],
                                      changed_at(times, since, until), kind=row["kind"],
                                      system=row["system"]))  # fmt: skip
    for row in store.read("history_changed_edges", window):
        if around is not None and not ({_asset_of(row["src"]), _asset_of(row["dst"])} & around):
            continue
        spans = (row["first_seen"], row["stopped"], row["resumed"])
        before, after = edge_held(*spans, since), edge_held(*spans, until)
        if before != after:
            starts = [row["first_seen"], *(row["resumed"] or ())]
            times = (row["stopped"] or ()) if before else starts
            changes.append(Change("added" if after else "removed", row["kind"], row["src"],
                                  changed_at(times, since, until), to=row["dst"],
                                  via=tuple(row["via"])))  # fmt: skip
    order = {"Asset": 0, "Column": 1, **{k: 2 + i for i, k in enumerate(EDGE_KINDS)}}
    changes.sort(key=lambda c: (c.change, order[c.what], c.urn, c.to or ""))
    schemas = [
        (urn, c)
        for urn, cs in changes_by_asset(store.read("history_schema_changes", window)).items()
        if around is None or urn in around
        for c in cs
        if since < c.at <= until
    ]
    return Diff(since, until, changes, asset, depth if asset is not None else None, schemas)


def _around(store: GraphStore, urn: str, depth: int) -> Collection[str]:
    """The asset and every asset within `depth` hops of it either way, at any time."""
    found = {urn}
    for direction in lineage.DIRECTIONS:
        reached = lineage.traverse(store, urn, direction, depth=depth, include_deleted=True)
        found.update(r.urn for r in reached)
    return found


def _asset_of(urn: str) -> str:
    """A column's asset, or the urn itself (an asset, a transformation)."""
    if "#" not in urn:
        return urn
    try:
        return split_column_urn(urn)[0]
    except IdentityError:
        return urn


# --- one asset's timeline -------------------------------------------------------------------

_EVENTS = {  # (kind, direction) -> what an edge of the asset is, in the timeline
    ("FLOWS_TO", "out"): "flows to",
    ("FLOWS_TO", "in"): "flows from",
    ("READS_FROM", "in"): "read by",
    ("WRITES_TO", "in"): "written by",
    ("FEEDS", "out"): "feeds",
    ("FEEDS", "in"): "fed by",
}


@dataclass(frozen=True, slots=True)
class Event:
    """One dated change of an asset: it, one of its columns, one of its lineage edges
    (`what` happened to `subject`: first seen, deleted, back, started, stopped, resumed) or its
    schema as a source reports it (`schema changed (source)`, `other` says how)."""

    at: int
    subject: str
    what: str
    other: str | None = None


@dataclass
class Timeline:
    """An asset's history, oldest first."""

    asset: str
    events: list[Event] = field(default_factory=list)

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return to_json({"asset": self.asset, "events": self.events})
        rows = [[time_text(e.at), e.subject, e.what, e.other or ""] for e in self.events]
        table = format_rows(["at", "subject", "what", "other"], rows, "table")
        return f"history of {self.asset}: {len(self.events)} event(s)\n{table}"


def timeline(store: GraphStore, urn: str) -> Timeline:
    """The asset `urn`'s timeline: when it was first seen, deleted and back; when each of its
    columns was first seen; when each of its lineage edges started, stopped and resumed; when
    each source saw its schema change."""
    row = lineage.start_asset(store, urn, include_deleted=True)
    (details,) = store.read("lineage_assets", {"urns": [row.urn]})
    events = [Event(details["first_seen"], urn, "first seen")] if details["first_seen"] else []
    deleted = details["deleted"] or ([details["deleted_at"]] if details["deleted_at"] else [])
    events += [Event(at, urn, "deleted") for at in deleted]
    events += [Event(at, urn, "back") for at in details["restored"] or ()]
    for column in store.read("history_columns_of", {"urn": urn}):
        if column["first_seen"] is not None:
            events.append(Event(column["first_seen"], column["urn"], "first seen"))
    for edge in store.read("history_of_asset", {"urn": urn}):
        what = _EVENTS[edge["kind"], edge["direction"]]
        if edge["first_seen"] is not None:
            events.append(Event(edge["first_seen"], edge["node"], what, edge["other"]))
        events += [Event(at, edge["node"], f"stopped: {what}", edge["other"])
                   for at in edge["stopped"] or ()]  # fmt: skip
        events += [Event(at, edge["node"], f"resumed: {what}", edge["other"])
                   for at in edge["resumed"] or ()]  # fmt: skip
    events += [Event(c.at, urn, f"schema changed ({c.source})", _schema_summary(c))
               for c in history_of(store, row.urn).changes()]  # fmt: skip
    events.sort(key=lambda e: (e.at, e.subject, e.what, e.other or ""))
    return Timeline(urn, events)
