"""Lineage questions over the graph: upstream, downstream, paths, impact and column lineage.

Upstream, downstream and impact want the set of reachable assets, not every path: a
variable-length pattern enumerates paths, which can grow exponentially with fan-out and depth. So
these expand a frontier of distinct nodes level by level, one bounded hop per statement, and
return each asset once with its distance (docs/graph-model.md). Only `paths` enumerates paths,
bounded, shortest first, and only once a level-by-level search has found that one exists.

Filters (systems, kinds) select what is returned, never what is traversed: lineage from an S3
prefix to a Snowflake table runs through Spark datasets even when only tables are asked for.
Deleted assets (`deleted_at` set) are neither returned nor traversed unless asked for, since
data no longer flows through them; nor are edges that stopped holding (`retired_at`).

Every question takes `as_of` (epoch ms; None: now): the graph as it was then, from the history
each asset and edge keeps (docs/history.md): an edge counts when it was first seen by then and
had not stopped then.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from lineagegraph.errors import NotFound, UsageError
from lineagegraph.graph.store import GraphStore
from lineagegraph.identity import (
    WHOLE_NAME_SYSTEMS,
    IdentityError,
    column_urn,
    dataset_urn,
    snowflake_urn,
    split_column_urn,
)
from lineagegraph.output import time_text, visible
from lineagegraph.questions.quality import asset_quality
from lineagegraph.questions.tags import ListedTag
from lineagegraph.settings import Settings
from lineagegraph.store_check import require_assets

Direction = Literal["upstream", "downstream"]
DIRECTIONS: tuple[Direction, ...] = ("upstream", "downstream")
KINDS = ("Table", "Dataset", "File")

DEFAULT_DEPTH = 20
MAX_DEPTH = 1000
"""Level-by-level search stops when nothing new is found; this only guards against typos."""
MAX_PATH_DEPTH = 20
"""The fixed bound in cypher/lineage_paths.cypher (no backend takes a parameter there)."""
DEFAULT_PATH_LIMIT = 20
SUGGESTIONS = 5
_SUGGEST_CANDIDATES = 200  # per word searched
_SEPARATORS = re.compile(r"[\s_\-./:#@\"'=]+")
_MIN_NEEDLE = 3

_DETAILS = {"asset": "lineage_assets", "column": "lineage_columns"}
_DETAIL_CHUNK = 5000
_STEP: dict[tuple[str, Direction], str] = {
    ("asset", "downstream"): "lineage_downstream_step",
    ("asset", "upstream"): "lineage_upstream_step",
    ("column", "downstream"): "lineage_column_downstream_step",
    ("column", "upstream"): "lineage_column_upstream_step",
}


class AssetNotFound(NotFound):
    """What the user typed names no asset (or several); the message lists the closest ones."""

    def __init__(self, message: str, suggestions: Iterable[str] = ()) -> None:
        self.suggestions = list(suggestions)
        if self.suggestions:
            # one line each, shown as a terminal table shows names (control characters as
            # \x1b): `suggestions` keep them exactly
            lines = "\n".join(f"  {visible(s)}" for s in self.suggestions)
            message += "; did you mean:\n" + lines
        super().__init__(message)


class AssetDeleted(NotFound):
    """A traversal starts at a soft-deleted asset without include_deleted."""


@dataclass(frozen=True, slots=True)
class Reached:
    """An asset (or column) found by a traversal, once, at its shortest distance from the start.

    `reached_from` are the nodes one hop nearer the start through which it was first reached
    (with filters: the nearest returned nodes, or the start, on the way there), and `via` the
    transformations on the edges that reached it. `linked_from` are other nodes of the answer
    with a direct edge to it that did not reach it first (e.g. a table feeding both a mart and
    that mart's source). Together they draw the answer's picture. `quality` is an asset's
    latest data quality (lineagegraph.questions.quality: pass, warn, error, fail or
    unknown); None for columns. `tags` are the classifications of an asset and its columns,
    own and derived (lineagegraph.questions.tags), where the answer lists them (upstream,
    downstream, impact); None where it does not.
    """

    urn: str
    name: str
    system: str | None
    kind: str
    distance: int
    via: tuple[str, ...] = ()
    reached_from: tuple[str, ...] = ()
    deleted_at: int | None = None
    linked_from: tuple[str, ...] = ()
    quality: str | None = None
    tags: tuple[ListedTag, ...] | None = None

    @property
    def tag_names(self) -> list[str]:
        """Each tag on the asset or its columns once, as `key=value`."""
        return sorted({t.tag for t in self.tags or ()})


@dataclass(frozen=True, slots=True)
class LineagePath:
    """One FLOWS_TO path: its assets in flow order and the transformations on each hop."""

    hops: int
    assets: tuple[Reached, ...]
    via: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Reader:
    """A transformation that reads impacted assets, so it is affected by a change, and the
    assets it writes (none for a read-only query)."""

    urn: str
    name: str | None
    system: str | None
    user: str | None
    runs: int | None
    last_run_at: int | None
    reads: tuple[str, ...]
    writes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Impact:
    """Everything downstream of an asset, grouped by (system, kind), and who reads it."""

    start: Reached
    assets: list[Reached]
    groups: dict[tuple[str, str], list[Reached]] = field(default_factory=dict)
    transformations: list[Reader] = field(default_factory=list)


# --- Looking assets up ----------------------------------------------------------------------


def held_at(row: dict[str, Any], as_of: int) -> bool:
    """Whether an asset (or a column, by its asset's deletions) was there at `as_of`, from its
    details row: first seen by then, and not deleted then (each deletion until it came back)."""
    if row["first_seen"] is not None and row["first_seen"] > as_of:
        return False
    deleted = row.get("deleted") or ([row["deleted_at"]] if row["deleted_at"] is not None else [])
    restored = row.get("restored") or []
    return sum(d <= as_of for d in deleted) == sum(r <= as_of for r in restored)


def _deleted_at(row: dict[str, Any], as_of: int | None) -> int | None:
    """The deletion a node shows: now, its `deleted_at`; as of a time, the last deletion by
    then when it was deleted then."""
    if as_of is None:
        return row["deleted_at"]  # type: ignore[no-any-return]
    if held_at(row, as_of):
        return None
    deleted = row.get("deleted") or ([row["deleted_at"]] if row["deleted_at"] is not None else [])
    return max((d for d in deleted if d <= as_of), default=None)


def _reached(row: dict[str, Any], hit: _Hit | None = None, as_of: int | None = None) -> Reached:
    """A found node from its details row and, when a search found it, how it was reached."""
    return Reached(
        urn=row["urn"],
        name=row["name"] or row["urn"],
        system=row["system"],
        kind=row["kind"],
        distance=hit.distance if hit else 0,
        via=hit.via if hit else (),
        reached_from=hit.reached_from if hit else (),
        deleted_at=_deleted_at(row, as_of),
        linked_from=tuple(sorted(hit.linked_from)) if hit else (),
        quality=row.get("quality"),
    )


def _details(store: GraphStore, what: str, urns: list[str]) -> dict[str, dict[str, Any]]:
    """Name, system, kind and deletion of nodes by urn (and an asset's quality), in bounded
    chunks of urns."""
    rows: dict[str, dict[str, Any]] = {}
    for begin in range(0, len(urns), _DETAIL_CHUNK):
        chunk = urns[begin : begin + _DETAIL_CHUNK]
        rows.update((row["urn"], row) for row in store.read(_DETAILS[what], {"urns": chunk}))
    if what == "asset":
        for urn, quality in asset_quality(store, list(rows)).items():
            rows[urn]["quality"] = quality
    return rows


def lookup(
    store: GraphStore, urns: Collection[str], as_of: int | None = None
) -> dict[str, Reached]:
    """The assets among `urns` that exist (deleted ones included), by urn."""
    rows = _details(store, "asset", list(urns))
    return {urn: _reached(row, as_of=as_of) for urn, row in rows.items()}


def start_asset(
    store: GraphStore, urn: str, *, include_deleted: bool = False, as_of: int | None = None
) -> Reached:
    """The asset a question starts from; unknown (at `as_of`: not seen yet) or (by default)
    deleted is an error."""
    row = _details(store, "asset", [urn]).get(urn)
    if row is None:
        raise AssetNotFound(f"no asset {urn!r} in the graph", suggest(store, urn))
    return _started(row, "asset", include_deleted, as_of)


def _started(row: dict[str, Any], what: str, include_deleted: bool, as_of: int | None) -> Reached:
    """The node a question starts from, or why it cannot start there (at `as_of`)."""
    found = _reached(row, as_of=as_of)
    urn = found.urn
    if as_of is not None and row["first_seen"] is not None and row["first_seen"] > as_of:
        raise AssetNotFound(
            f"{what} {urn!r} was first seen at {time_text(row['first_seen'])}, "
            f"after {time_text(as_of)}"
        )
    if found.deleted_at is not None and not include_deleted:
        whose = "asset" if what == "asset" else "the asset of column"
        raise AssetDeleted(
            f"{whose} {urn!r} is deleted (deleted_at={found.deleted_at}); "
            "pass --include-deleted to follow its lineage anyway"
        )
    return found


def candidate_urns(settings: Settings, text: str) -> list[str]:
    """The urns a typed name may mean, most literal first: the text itself (an exact urn, such
    as a File's key as listed, whitespace at its ends included: a name may end in a space),
    then without that whitespace, then its normalized dataset or Snowflake form."""
    candidates = [text]
    text = text.strip()
    candidates.append(text)
    rules = settings.identity.rules()
    account = settings.identity.snowflake_account
    try:
        if text.startswith("/") or re.match(r"(?i)(s3[an]?|file):", text):
            candidates.append(dataset_urn(text, rules))
        elif text.lower().startswith("snowflake://"):
            acct, _, name = text[len("snowflake://") :].partition("/")
            if not name.startswith("@"):
                candidates.append(snowflake_urn(acct, name, from_metadata=False))
        elif account and "://" not in text and text.count(".") >= 2:
            candidates.append(snowflake_urn(account, text, from_metadata=False))
    except IdentityError:
        pass  # not a path or name we can normalize: the exact text and suggestions remain
    return list(dict.fromkeys(candidates))


def resolve(store: GraphStore, settings: Settings, text: str) -> str:
    """The urn of the asset a user means by `text`: a urn, a path (`s3a://b/p/`) or a dotted
    Snowflake name (`db.schema.table`), normalized through `identity`, or a unique short name.
    Raises AssetNotFound listing the closest matches."""
    if not text.strip():
        raise AssetNotFound("empty asset name")
    candidates = candidate_urns(settings, text)
    found = lookup(store, candidates)
    for urn in candidates:
        if urn in found:
            return urn
    accountless = _snowflake_without_account(store, settings, text)
    if accountless:
        return accountless
    named = short_named(store, text)
    if len(named) == 1:
        return str(named[0]["urn"])
    if named:
        raise AssetNotFound(
            f"{text!r} names several assets; give the full urn",
            [_label(row) for row in named[:SUGGESTIONS]],
        )
    require_assets(store, "lineage_any_asset", "assets", "all")
    hint = ""
    if "://" not in text and text.count(".") >= 2 and not settings.identity.snowflake_account:
        hint = " (set identity.snowflake_account to look up Snowflake names)"
    raise AssetNotFound(f"no asset matches {text!r}{hint}", suggest(store, text, candidates))


def short_named(store: GraphStore, text: str) -> list[dict[str, Any]]:
    """The assets `text` is a short name of (up to SUGGESTIONS + 1): their whole name, or a
    dotted tail of a table's name (`customer_revenue`, `main.customer_revenue` for
    `duckdb://shop.duckdb/shop.main.customer_revenue`), case-insensitively."""
    name = text.strip().lower()
    return store.read("lineage_assets_named", {
        "name": name, "dotted": "." + name, "whole_name_systems": sorted(WHOLE_NAME_SYSTEMS),
        "limit": SUGGESTIONS + 1,
    })  # fmt: skip


def _snowflake_without_account(store: GraphStore, settings: Settings, text: str) -> str | None:
    """`db.schema.table` typed with no account in settings: the one Snowflake asset of any
    account with that name, if exactly one exists."""
    if settings.identity.snowflake_account or "://" in text or text.count(".") < 2:
        return None
    try:
        name = snowflake_urn("any", text.strip(), from_metadata=False).split("/", 3)[3]
    except IdentityError:
        return None
    rows = store.read("lineage_snowflake_named", {"suffix": "/" + name, "limit": 2})
    return str(rows[0]["urn"]) if len(rows) == 1 else None


def resolve_column(store: GraphStore, settings: Settings, text: str) -> str:
    """The urn of a column typed as `{asset}#{column}`, the asset part resolved as in
    `resolve`."""
    try:
        asset_text, column = split_column_urn(text)  # any name is data: ends kept, as resolve
    except IdentityError:
        raise UsageError(
            f"{text!r} is not a column: write ASSET#COLUMN, "
            "e.g. ANALYTICS.MARTS.DAILY_ACTIVE#REVENUE"
        ) from None
    asset = resolve(store, settings, asset_text)
    names = [column, column.strip(), column.upper(), column.lower()]
    urns = [column_urn(asset, name) for name in dict.fromkeys(names)]
    found = _details(store, "column", urns)
    for urn in urns:
        if urn in found:
            return urn
    known = [r["name"] for r in store.read("lineage_columns_of", {"asset": asset, "limit": 1000})]
    close = difflib.get_close_matches(column, known, n=SUGGESTIONS, cutoff=0.0)
    raise AssetNotFound(
        f"asset {asset!r} has no column {column!r} in the graph"
        + ("" if known else " (no column lineage was harvested for it)"),
        [column_urn(asset, c) for c in close],
    )


def suggest(store: GraphStore, text: str, also: Iterable[str] = ()) -> list[str]:
    """The assets whose urn or name look most like `text` (deleted ones marked).

    Names are compared by their parts (split on `_ - . /` and the like), so a typo inside one
    part (`DAU_DASHBORD`, `events_daly`) still finds the asset. Candidates come from one
    search per part typed and per part's first and last three letters (so a typo in the
    middle of a word, or a common part such as a schema name, cannot hide the rest); they are
    ranked by how well each typed part matches some part of the candidate, then by the
    similarity of the whole text."""
    targets = [text.strip(), *also]
    needles = {text.strip().lower()}  # the whole text, for names too short to have parts
    for target in targets:
        for part in _parts(target):
            if len(part) >= _MIN_NEEDLE:
                needles.update({part, part[:_MIN_NEEDLE], part[-_MIN_NEEDLE:]})
    by_urn: dict[str, dict[str, Any]] = {}
    for needle in sorted(needles):
        for row in store.read("lineage_suggest", {"needle": needle, "limit": _SUGGEST_CANDIDATES}):
            by_urn[row["urn"]] = row
    likeness = {urn: _likeness(targets, row) for urn, row in by_urn.items()}
    best = sorted(by_urn, key=lambda urn: (-likeness[urn][0], -likeness[urn][1], urn))
    return [_label(by_urn[urn]) for urn in best[:SUGGESTIONS]]


def _likeness(targets: Sequence[str], row: dict[str, Any]) -> tuple[float, float]:
    """How much a candidate looks like what was typed: the mean over typed parts of the best
    match among the candidate's parts, then the whole text's similarity (ties, such as a
    table and its `_backup` copy, go to the closer whole)."""
    names = [_without_scheme(row["urn"]), row["name"] or ""]
    theirs = [part for name in names for part in _parts(name)] or [""]
    typed = [ours for ours in map(_parts, targets) if ours]
    by_parts = max(
        [sum(max(_ratio(p, q) for q in theirs) for p in ours) / len(ours) for ours in typed],
        default=0.0,
    )
    whole = max(_ratio(t.lower(), n.lower()) for t in targets for n in names)
    return by_parts, whole


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def _parts(text: str) -> list[str]:
    """The words of a name or urn, lower-cased: `s3://b/events_daly` -> b, events, daly."""
    return [part for part in _SEPARATORS.split(_without_scheme(text).lower()) if part]


def _without_scheme(text: str) -> str:
    """The part of a urn that tells assets apart: no scheme, no Snowflake account."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    return rest.partition("/")[2] if scheme.lower() == "snowflake" else rest


def _label(row: dict[str, Any]) -> str:
    return row["urn"] + (" (deleted)" if row.get("deleted_at") is not None else "")


# --- Level-by-level traversal ---------------------------------------------------------------


def _check_depth(depth: int, maximum: int) -> None:
    if not 1 <= depth <= maximum:
        raise UsageError(f"depth must be between 1 and {maximum}, got {depth}")


@dataclass(slots=True)
class _Hit:
    urn: str
    distance: int
    reached_from: tuple[str, ...]
    via: tuple[str, ...]
    linked_from: set[str] = field(default_factory=set)  # filled as later levels find links


def _search(
    store: GraphStore,
    what: str,
    direction: Direction,
    start: str,
    depth: int,
    include_deleted: bool,
    until: str | None = None,
    as_of: int | None = None,
    edges: set[tuple[str, str]] | None = None,
) -> list[_Hit]:
    """Breadth-first from `start`: one bounded hop per statement over the current frontier,
    each node kept once, at the level it is first reached; stops after the level that reaches
    `until`. Nodes already seen are dropped here, in a set, rather than in Cypher (see
    cypher/lineage_downstream_step.cypher). Every edge read, back to the start included, is
    added to `edges` as (node reached, the node it was reached from)."""
    hits: dict[str, _Hit] = {}
    frontier = [start]
    for distance in range(1, depth + 1):
        if not frontier or until in hits:
            break
        params = {"frontier": frontier, "include_deleted": include_deleted, "as_of": as_of}
        rows = store.read(_STEP[what, direction], params)
        reached: dict[str, tuple[set[str], set[str]]] = {}
        for row in rows:  # one row per edge: group them by the node reached
            urn = row["urn"]
            if edges is not None:
                edges.add((urn, row["reached_from"]))
            if urn in hits:  # found on an earlier level: a link between two found nodes
                hits[urn].linked_from.add(row["reached_from"])
            elif urn != start:
                sources, via = reached.setdefault(urn, (set(), set()))
                sources.add(row["reached_from"])
                via.update(row["via"] or ())
        frontier = sorted(reached)  # a stable order for every backend
        for urn in frontier:
            sources, via = reached[urn]
            hits[urn] = _Hit(urn, distance, tuple(sorted(sources)), tuple(sorted(via)))
    return list(hits.values())


def _expand(
    store: GraphStore,
    what: str,
    direction: Direction,
    start: str,
    depth: int,
    include_deleted: bool,
    as_of: int | None = None,
    edges: set[tuple[str, str]] | None = None,
) -> list[Reached]:
    """The search's nodes with their details, nearest first (`edges` as in _search)."""
    hits = _search(store, what, direction, start, depth, include_deleted, as_of=as_of, edges=edges)
    details = _details(store, what, [hit.urn for hit in hits])
    return [_reached(details[hit.urn], hit, as_of) for hit in hits if hit.urn in details]


def _matches(item: Reached, systems: Collection[str], kinds: Collection[str]) -> bool:
    return (not systems or item.system in systems) and (not kinds or item.kind in kinds)


def traverse(
    store: GraphStore,
    urn: str,
    direction: Direction,
    *,
    depth: int = DEFAULT_DEPTH,
    systems: Collection[str] = (),
    kinds: Collection[str] = (),
    include_deleted: bool = False,
    as_of: int | None = None,
    edges: set[tuple[str, str]] | None = None,
) -> list[Reached]:
    """The assets upstream or downstream of `urn` within `depth` hops, each once, nearest
    first (as of `as_of`). `systems`/`kinds` filter the answer, not the search. Given `edges`,
    every FLOWS_TO edge the search read is added to it as (asset reached, asset it was reached
    from), so a later question on the same assets need not read them again."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    _check_depth(depth, MAX_DEPTH)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise UsageError(f"unknown asset kind(s) {sorted(unknown)}; choose from {', '.join(KINDS)}")
    start_asset(store, urn, include_deleted=include_deleted, as_of=as_of)
    found = _expand(store, "asset", direction, urn, depth, include_deleted, as_of, edges)
    if not systems and not kinds:
        return found
    return _select(found, lambda item: _matches(item, systems, kinds))


def _select(found: list[Reached], keep: Callable[[Reached], bool]) -> list[Reached]:
    """The kept items, each `reached_from` rewritten to its nearest kept items (or the start)
    through the ones left out, so a picture of a filtered answer still connects up."""
    # `found` is nearest first and every item's reached_from lie one level nearer, so each
    # item's kept ancestors are known before the item itself.
    kept_above: dict[str, frozenset[str]] = {}
    dropped = {item.urn for item in found if not keep(item)}
    selected = []
    for item in found:
        above = frozenset().union(*(kept_above.get(p, frozenset([p])) for p in item.reached_from))
        if keep(item):
            kept_above[item.urn] = frozenset([item.urn])
            links = tuple(u for u in item.linked_from if u not in dropped)
            selected.append(replace(item, reached_from=tuple(sorted(above)), linked_from=links))
        else:
            kept_above[item.urn] = above
    return selected


def impact(
    store: GraphStore,
    urn: str,
    *,
    depth: int = MAX_DEPTH,
    include_deleted: bool = False,
    as_of: int | None = None,
) -> Impact:
    """What a change to `urn` affects: every asset downstream, grouped by (system, kind), and
    the transformations that read the start or any of those assets (as of `as_of`)."""
    _check_depth(depth, MAX_DEPTH)
    start = start_asset(store, urn, include_deleted=include_deleted, as_of=as_of)
    assets = _expand(store, "asset", "downstream", urn, depth, include_deleted, as_of)
    groups: dict[tuple[str, str], list[Reached]] = {}
    for item in sorted(assets, key=lambda a: (a.system or "", a.kind, a.distance, a.urn)):
        groups.setdefault((item.system or "", item.kind), []).append(item)
    found = readers(store, [urn, *(a.urn for a in assets)], as_of=as_of)
    return Impact(start=start, assets=assets, groups=groups, transformations=found)


def readers(
    store: GraphStore, urns: list[str], systems: Collection[str] = (), as_of: int | None = None
) -> list[Reader]:
    """The transformations that read any of these assets (only those of `systems`, when
    given), by system and urn, as of `as_of`."""
    rows = store.read("lineage_readers", {"urns": urns, "systems": sorted(systems), "as_of": as_of})
    return [
        Reader(
            urn=row["urn"],
            name=row["name"],
            system=row["system"],
            user=row["user"],
            runs=row["runs"],
            last_run_at=row["last_run_at"],
            reads=tuple(sorted(row["reads"])),
            writes=tuple(sorted(row["writes"] or ())),
        )
        for row in rows
    ]


def paths(
    store: GraphStore,
    src: str,
    dst: str,
    max_depth: int = 10,
    limit: int = DEFAULT_PATH_LIMIT,
    *,
    include_deleted: bool = False,
    as_of: int | None = None,
) -> list[LineagePath]:
    """The FLOWS_TO paths from `src` to `dst` of at most `max_depth` hops, shortest first.

    Enumerating paths from `src` explores every path of up to `max_depth` hops, which can grow
    exponentially, and is wasted when `dst` is not reachable. So a level-by-level search from
    `src` (stopping at the level that reaches `dst`) first checks that there is a path at all.
    """
    _check_depth(max_depth, MAX_PATH_DEPTH)
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    start_asset(store, src, include_deleted=include_deleted, as_of=as_of)
    start_asset(store, dst, include_deleted=include_deleted, as_of=as_of)
    if src == dst:
        raise UsageError(f"FROM and TO are the same asset ({src!r})")
    found = _search(
        store, "asset", "downstream", src, max_depth, include_deleted, until=dst, as_of=as_of
    )
    if not any(hit.urn == dst for hit in found):  # no path: nothing to enumerate
        return []
    rows = store.read(
        "lineage_paths",
        {
            "src": src,
            "dst": dst,
            "depth": max_depth,
            "limit": limit,
            "include_deleted": include_deleted,
            "as_of": as_of,
        },
    )
    quality = asset_quality(store, {a["urn"] for row in rows for a in row["assets"]})
    return [
        LineagePath(
            hops=row["hops"],
            assets=tuple(
                Reached(
                    a["urn"],
                    a["name"] or a["urn"],
                    a["system"],
                    a["kind"],
                    i,
                    quality=quality[a["urn"]],
                )
                for i, a in enumerate(row["assets"])
            ),
            via=tuple(tuple(v or ()) for v in row["vias"]),
        )
        for row in rows
    ]


@dataclass(frozen=True, slots=True)
class PathAnswer:
    """The paths found, between the assets they were looked for from and to: the ones asked
    for, or the dataset an S3 object asked for is part of (`notes` say which)."""

    src: str
    dst: str
    paths: list[LineagePath]
    notes: tuple[str, ...] = ()


def paths_between(
    store: GraphStore,
    src: str,
    dst: str,
    max_depth: int = 10,
    limit: int = DEFAULT_PATH_LIMIT,
    *,
    include_deleted: bool = False,
    as_of: int | None = None,
) -> PathAnswer:
    """`paths`, and when an end is an S3 object with no path of its own, the paths of the
    dataset it is PART_OF: flows are recorded between datasets (a Spark job reads a prefix),
    so an object's lineage is its dataset's."""
    found = paths(store, src, dst, max_depth, limit, include_deleted=include_deleted, as_of=as_of)
    if found:
        return PathAnswer(src, dst, found)
    rows = store.read("lineage_dataset_of", {"urns": [src, dst]})
    datasets = {row["file"]: row["dataset"] for row in rows}
    new_src, new_dst = datasets.get(src, src), datasets.get(dst, dst)
    if (new_src, new_dst) == (src, dst) or new_src == new_dst:
        return PathAnswer(src, dst, found)
    found = paths(
        store, new_src, new_dst, max_depth, limit, include_deleted=include_deleted, as_of=as_of
    )
    notes = tuple(
        f"{end} {urn} is an S3 object with no lineage of its own: showing the paths "
        f"{'from' if end == 'FROM' else 'to'} the dataset it is part of, {dataset}"
        for end, urn, dataset in (("FROM", src, new_src), ("TO", dst, new_dst))
        if dataset != urn
    )
    return PathAnswer(new_src, new_dst, found, notes) if found else PathAnswer(src, dst, [])


def start_column(
    store: GraphStore, col_urn: str, *, include_deleted: bool = False, as_of: int | None = None
) -> Reached:
    """The column a column-lineage question starts from; its asset's deletion applies to it."""
    row = _details(store, "column", [col_urn]).get(col_urn)
    if row is None:
        raise AssetNotFound(f"no column {col_urn!r} in the graph")
    return _started(row, "column", include_deleted, as_of)


def column_lineage(
    store: GraphStore,
    col_urn: str,
    direction: Direction,
    depth: int = DEFAULT_DEPTH,
    *,
    include_deleted: bool = False,
    as_of: int | None = None,
) -> list[Reached]:
    """The columns upstream or downstream of a column over FEEDS, each once, nearest first
    (as of `as_of`)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    _check_depth(depth, MAX_DEPTH)
    start_column(store, col_urn, include_deleted=include_deleted, as_of=as_of)
    return _expand(store, "column", direction, col_urn, depth, include_deleted, as_of)
