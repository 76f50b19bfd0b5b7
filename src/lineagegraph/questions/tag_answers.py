"""`lineagegraph tag`, `untag` and `tags` as a library: facts stated by hand, and the tags of
one column or asset with their why (lineagegraph.questions.tags derives them)."""

from __future__ import annotations

import getpass
import time
from dataclasses import dataclass, field
from typing import Any

from lineagegraph.errors import NotFound, UsageError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import split_column_urn
from lineagegraph.model import TagFact
from lineagegraph.output import FORMATS as ROW_FORMATS
from lineagegraph.output import format_rows, time_text
from lineagegraph.questions import lineage
from lineagegraph.questions.tags import (
    BLOCK,
    MANUAL,
    DerivedTag,
    TagOrigin,
    TagStop,
    derive_at,
)
from lineagegraph.render.as_json import to_json
from lineagegraph.render.formats import PICTURE_FORMATS, picture
from lineagegraph.render.text import tree
from lineagegraph.render.views import Edge, Node, View, label
from lineagegraph.settings import Settings
from lineagegraph.tags_settings import split_tag

TAG_FORMATS = ("table", "tree", "json", "csv", "markdown", *PICTURE_FORMATS)


@dataclass(frozen=True, slots=True)
class Target:
    """What a tag is on: a column (with its asset) or an asset (asset None)."""

    urn: str
    asset: str | None

    @property
    def kind(self) -> str:
        return "Column" if self.asset else "Asset"


def resolve_target(store: GraphStore, settings: Settings, text: str) -> Target:
    """ASSET#COLUMN or ASSET as other commands resolve them; an S3 asset whose key holds a
    `#` is tried whole when no such column exists. NotFound (exit 7) when neither is."""
    if "#" not in text:
        return Target(lineage.resolve(store, settings, text), None)
    try:
        urn = lineage.resolve_column(store, settings, text)
    except (NotFound, UsageError) as column_error:
        try:
            return Target(lineage.resolve(store, settings, text), None)
        except NotFound:
            raise column_error from None
    return Target(urn, split_column_urn(urn)[0])


def state(
    store: GraphStore,
    target: Target,
    tag: str,
    *,
    reason: str | None,
    by: str | None = None,
    removed: bool = False,
    block: bool = False,
    block_from: Target | None = None,
) -> TagFact:
    """Write a fact stated by hand: a tag (source `manual`) or its removal, or a block (source
    `block`: the key may not enter `target` from `block_from`, or from anywhere)."""
    key, value = _parse(tag)
    source = MANUAL
    if block:
        if value is not None:
            raise UsageError(f"a block names a KEY, not {tag!r}: it stops every value of the key")
        source, value = BLOCK, block_from.urn if block_from else None
    if removed:
        stated = {
            row["source"]
            for row in store.read(_FACTS_ON[target.kind], {"urns": [target.urn]})
            if row["key"] == key
        }
        if source not in stated:
            what = "block of" if block else "tag"
            raise TagNotFound(f"no {what} {key!r} stated by hand on {target.urn!r}")
    fact = TagFact(
        target.urn, key, value, source, by or _user(), int(time.time() * 1000),
        reason, removed,
    )  # fmt: skip
    writer = GraphWriter(store)
    writer.add_all([fact])
    writer.finish()
    return fact


def _user() -> str:
    """Who runs the command; `unknown` where the system cannot say (no login name, no USER)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


class TagNotFound(NotFound):
    """`untag` of a tag nobody stated by hand on the target (exit 7)."""


_FACTS_ON = {"Column": "tags_facts_on_columns", "Asset": "tags_facts_on_assets"}


def _parse(tag: str) -> tuple[str, str | None]:
    try:
        return split_tag(tag)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


@dataclass
class TagsAnswer:
    """The tags of a column or an asset: its own, those derived with their why, the stops on
    the way to it and, for an asset, its columns' tags."""

    target: Target
    own: list[TagOrigin]
    derived: list[DerivedTag]
    stops: list[TagStop]
    columns: dict[str, dict[str, Any]] = field(default_factory=dict)

    def rows(self) -> list[list[Any]]:
        """One row per tag: on what, the tag, own or derived, its origin and why."""
        found: list[list[Any]] = []
        for on, own, derived in [
            (self.target.urn, self.own, self.derived),
            *((urn, c["own"], c["derived"]) for urn, c in self.columns.items()),
        ]:
            found += [
                [on, o.tag, "own", o.source, o.by, time_text(o.at), o.reason, None, 0, None]
                for o in own
            ]
            found += [
                [
                    on, d.tag, "derived", d.origin.source, d.origin.by, time_text(d.origin.at),
                    d.origin.reason, d.origin.target, d.hops, " -> ".join(d.path),
                ]
                for d in derived
            ]  # fmt: skip
        return found

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return to_json(self)
        if fmt in PICTURE_FORMATS:
            return picture(self.view(), fmt)
        if fmt == "tree":
            return tree(self.view())
        columns = ["on", "tag", "kind", "source", "by", "at", "reason", "origin", "hops", "path"]
        rows = self.rows()
        stops = [[s.key, s.value, s.origin, s.src, s.dst, s.reason] for s in self.stops]
        if fmt != "table":
            if fmt not in ROW_FORMATS:
                raise ValueError(f"unknown format {fmt!r}")
            return format_rows(columns, rows, fmt)
        head = f"tags of {self.target.urn}: {len(self.own)} own, {len(self.derived)} derived"
        if self.columns:
            head += f", and the tags of {len(self.columns)} of its columns"
        parts = [head, format_rows(columns, rows, "table") if rows else "(no tags)"]
        if stops:
            parts += [
                f"stopped on the way: {len(stops)}",
                format_rows(["key", "value", "origin", "from", "to", "reason"], stops, "table"),
            ]
        return "\n".join(parts)

    def view(self) -> View:
        """The paths that brought each derived tag, the target at the right."""
        levels: dict[str, int] = {self.target.urn: 0}
        edges: set[tuple[str, str]] = set()
        details: dict[str, list[str]] = {}
        for d in [*self.derived, *(x for c in self.columns.values() for x in c["derived"])]:
            for i, urn in enumerate(d.path):
                if urn != self.target.urn:
                    levels[urn] = min(levels.get(urn, 0), i - len(d.path))
            edges.update(zip(d.path, d.path[1:], strict=False))
            details.setdefault(d.path[0], []).append(f"{d.tag} ({d.origin.source})")
        details.setdefault(self.target.urn, []).extend(o.tag for o in self.own)
        nodes = [
            Node(
                urn,
                label(urn, "Column" if "#" in urn else "Asset", urn),
                None,
                "Column" if "#" in urn else "Asset",
                level,
                start=urn == self.target.urn,
                detail=", ".join(dict.fromkeys(details.get(urn, []))),
            )
            for urn, level in levels.items()
        ]
        return View(f"tags of {self.target.urn}", nodes, [Edge(a, b) for a, b in sorted(edges)])


def tags_of(store: GraphStore, settings: Settings, name: str) -> TagsAnswer:
    """The tags of ASSET#COLUMN or ASSET, own and derived, and the stops on the way; for an
    asset, its columns' tags too."""
    target = resolve_target(store, settings, name)
    seeds = [(target.urn, target.asset)]
    if target.asset is None:
        rows = store.read("tags_columns_of", {"urns": [target.urn]})
        seeds += [(row["column"], target.urn) for row in rows]
    found = derive_at(store, settings.tags, seeds)
    index = found.piece.index
    answer = TagsAnswer(
        target,
        found.own(index[target.urn]),
        found.derived(index[target.urn]),
        found.stops(),
    )
    for urn, _ in sorted(seeds[1:]):
        own, derived = found.own(index[urn]), found.derived(index[urn])
        if own or derived:
            answer.columns[urn] = {"own": own, "derived": derived}
    return answer
