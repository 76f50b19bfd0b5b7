"""Classifications along lineage: the tags a column or an asset carries, its own and those
derived from upstream, each with its why (docs/classifications.md).

Facts are `(:Tag)-[:TAGS]->` nodes written by harvesters and `lineagegraph tag` (newest
statement wins, removal kept as a time), plus the [[tags.globs]] of settings, applied here.
Derived tags are computed from facts and lineage on every question and never stored, so
untagging an origin takes every derived copy with it: there is nothing to clean up.

The rules (DESIGN: tags travel downstream only):
- a column's tag follows FEEDS to the columns derived from it, and crosses FLOWS_TO from its
  asset to an asset with no column lineage between the two (an unknown column mapping must not
  lose a classification);
- an asset's tag follows FLOWS_TO where there is no column lineage, or where some FEEDS edge
  between the two assets copied a value plainly;
- it stops at a FEEDS edge whose value was only ever masked (`masked_by`: SHA2, MD5, a masking
  policy, COUNT), at an asset edge whose column lineage is all masked, and at an edge blocked
  by hand (a `block` fact on the destination, for one key, from one source or from all); every
  stop is reported with its reason;
- each (key, value) travels on its own, so a node fed by several origins gets each tag; for
  keys with ordered levels ([tags] levels) only the highest derived level is kept.

The graph is read in batches of urns, level by level from the seeds (cypher/tags_*.cypher),
into integer-indexed lists; the search itself is a breadth-first search in Python per
(key, value), from all its origins at once, so every node is reached once per tag from its
nearest origin, whose path is kept as a predecessor array.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from lineagegraph import gc_pause
from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.tags_settings import TagSettings, split_tag
from lineagegraph.values.globs import glob_regex

MANUAL = "manual"
SETTINGS = "settings"
BLOCK = "block"
"""The source of a block fact: on the destination column or asset, key the tag it blocks,
value the urn of the one source it blocks from (null: from every source)."""

_CHUNK = 5000
_NO_FLOWS: list[int] = []  # a column's: shared, never appended to (FLOWS_TO leave assets)
UNREACHED, _ORIGIN = -2, -1
"""A node's predecessor in a Propagation: not reached by the tag, or an origin of it."""
ASSET, _COLUMN_OF_UNKNOWN = -2, -1
"""A node's asset_of in a LineageSlice: it is an asset, or a column of an asset not read."""


@dataclass(frozen=True, slots=True)
class TagOrigin:
    """A classification as stated: by a source on a target (a fact), or by a settings glob."""

    target: str
    key: str
    value: str | None
    source: str
    by: str | None = None
    at: int | None = None
    reason: str | None = None

    @property
    def tag(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"


@dataclass(frozen=True, slots=True)
class DerivedTag:
    """A tag a node carries because lineage brought it from `origin`: `path` the urns from the
    origin's target to this one, `hops` its length in edges."""

    target: str
    key: str
    value: str | None
    origin: TagOrigin
    path: tuple[str, ...]
    hops: int

    @property
    def tag(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"


@dataclass(frozen=True, slots=True)
class TagStop:
    """Where a tag travelling from `origin` did not cross an edge, and why."""

    key: str
    value: str | None
    origin: str
    src: str
    dst: str
    reason: str


# --- The slice of the graph a derivation runs on ------------------------------------------


@dataclass
class LineageSlice:
    """Nodes (column and asset urns) as integers, with their out-edges. `feeds[u]` holds the
    columns u feeds, `~v` for an edge only ever masked (its functions in `masked`); `flows[a]`
    the assets a flows to, `~b` for an edge with column lineage (in `linked`: the masking
    functions when no FEEDS edge between the two carries a value plainly, else ())."""

    index: dict[str, int] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    asset_of: list[int] = field(default_factory=list)  # ASSET for an asset
    feeds: list[list[int]] = field(default_factory=list)
    flows: list[list[int]] = field(default_factory=list)
    masked: dict[tuple[int, int], tuple[str, ...]] = field(default_factory=dict)
    linked: dict[tuple[int, int], tuple[str, ...]] = field(default_factory=dict)
    fed: set[int] = field(default_factory=set)  # columns whose FEEDS were read one way
    flowed: set[int] = field(default_factory=set)  # assets whose FLOWS_TO were read one way

    def node(self, urn: str, asset: str | None = None, *, column: bool) -> int:
        """The integer of a urn, added when new; a column's asset recorded when known."""
        i = self.index.get(urn)
        if i is None:
            i = len(self.names)
            self.index[urn] = i
            self.names.append(urn)
            self.asset_of.append(_COLUMN_OF_UNKNOWN if column else ASSET)
            self.feeds.append([])
            self.flows.append(_NO_FLOWS if column else [])
        if column and asset is not None and self.asset_of[i] == _COLUMN_OF_UNKNOWN:
            self.asset_of[i] = self.node(asset, column=False)
        return i

    def add_columns(self, columns: Iterable[tuple[str, int]]) -> list[int]:
        """Columns known to be new, each with its asset node (the whole-graph load)."""
        begin = len(self.names)
        for urn, asset in columns:
            self.index[urn] = len(self.names)
            self.names.append(urn)
            self.asset_of.append(asset)
        added = len(self.names) - begin
        self.feeds.extend([] for _ in range(added))
        self.flows.extend([_NO_FLOWS] * added)
        return list(range(begin, begin + added))

    def is_column(self, i: int) -> bool:
        return self.asset_of[i] != ASSET

    def open_flows(self) -> dict[int, list[int]]:
        """The assets each asset flows to with no column lineage between them, for the assets
        that have any (most have none, and every column of theirs would look)."""
        found: dict[int, list[int]] = {}
        for a, targets in enumerate(self.flows):
            if targets and (opened := [b for b in targets if b >= 0]):
                found[a] = opened
        return found

    def masked_reason(self, src: int, dst: int) -> str:
        """Why a tag does not cross the masked edge src -> dst."""
        if self.is_column(src):
            return "masked by " + ", ".join(self.masked[src, dst])
        return "every column feed masked by " + ", ".join(self.linked[src, dst])

    def add_feed(self, src: int, dst: int, masks: Iterable[str]) -> None:
        masks = tuple(masks)
        self.feeds[src].append(~dst if masks else dst)
        if masks:
            self.masked[src, dst] = masks

    def add_flow(
        self, src: int, dst: int, linked: bool, carrying: bool, masks: Iterable[str]
    ) -> None:
        if not linked:
            self.flows[src].append(dst)
            return
        self.flows[src].append(~dst)
        self.linked[src, dst] = () if carrying else tuple(masks)


def _add_feed_rows(piece: LineageSlice, rows: Iterable[dict[str, Any]]) -> list[int]:
    """Add tags_feeds_up rows; returns the columns they name that were new."""
    new = []
    for row in rows:
        before = len(piece.names)
        src = piece.node(row["src"], row["asset"], column=True)
        if src >= before:
            new.append(src)
        piece.add_feed(src, piece.index[row["dst"]], row["masks"] or ())
    return new


def _read(store: GraphStore, name: str, urns: list[str]) -> Iterator[dict[str, Any]]:
    """A frontier statement over `urns` in chunks (read on several connections at once)."""
    params = [{"frontier": chunk} for chunk in chunks(urns, _CHUNK)]
    for rows in store.read_each(name, params):
        yield from rows


@dataclass(frozen=True, slots=True)
class Walked:
    """What an upstream traversal already read: the FLOWS_TO edges (src, dst) into `complete`,
    the assets whose every live upstream edge it read (those nearer than its depth). Their
    columns must be among the slice's seeds: the column lineage between two assets is then
    known from the FEEDS read into those columns, and their edges are not read again."""

    edges: Collection[tuple[str, str]]
    complete: Collection[str]


def load_upstream(
    store: GraphStore, piece: LineageSlice, seeds: Iterable[int], walked: Walked | None = None
) -> None:
    """Read everything that can bring a tag to the slice's seeds: FEEDS into columns, FLOWS_TO
    into assets, and the columns of an asset flowing into one with no column lineage. A
    column's asset is recorded, not followed: what reaches it only leaves by FLOWS_TO edges,
    which the search from an asset seed finds."""
    new = list(seeds)
    walked_flows: list[tuple[int, int]] = []
    if walked is not None:
        piece.flowed.update(piece.node(urn, column=False) for urn in walked.complete)
        for src, dst in sorted(walked.edges):
            if dst in walked.complete:
                walked_flows.append((piece.node(src, column=False), piece.node(dst, column=False)))
        new += [src for src, _ in walked_flows if src not in piece.flowed]
    while new:
        cols = sorted({i for i in new if piece.is_column(i) and i not in piece.fed})
        assets = sorted({i for i in new if not piece.is_column(i) and i not in piece.flowed})
        piece.fed.update(cols)
        piece.flowed.update(assets)
        new = _add_feed_rows(piece, _read(store, "tags_feeds_up", [piece.names[i] for i in cols]))
        flows = list(_read(store, "tags_flows_up", [piece.names[i] for i in assets]))
        for row in flows:
            before = len(piece.names)
            src = piece.node(row["src"], column=False)
            if src >= before or src not in piece.flowed:
                new.append(src)
            dst = piece.index[row["dst"]]
            piece.add_flow(src, dst, row["linked"] > 0, row["carrying"] > 0, row["masks"])
        open_sources = sorted({row["src"] for row in flows if not row["linked"]})
        params = [{"urns": chunk} for chunk in chunks(open_sources, _CHUNK)]
        for rows in store.read_each("tags_columns_of", params):
            for row in rows:
                before = len(piece.names)
                i = piece.node(row["column"], row["asset"], column=True)
                if i >= before:
                    new.append(i)
    if walked_flows:
        _add_walked_flows(piece, walked_flows)


def _add_walked_flows(piece: LineageSlice, flows: list[tuple[int, int]]) -> None:
    """The traversal's FLOWS_TO edges with the column lineage between their assets, from the
    FEEDS the slice holds (every one into a column of an edge's destination), as
    tags_flows_up would give it."""
    wanted = set(flows)
    carrying: set[tuple[int, int]] = set()
    masks: dict[tuple[int, int], set[str]] = {}
    asset_of = piece.asset_of
    for u, edges in enumerate(piece.feeds):
        a = asset_of[u]
        if a < 0:
            continue
        for v in edges:
            pair = (a, asset_of[v if v >= 0 else ~v])
            if pair not in wanted:
                continue
            if v >= 0:
                carrying.add(pair)
            else:
                masks.setdefault(pair, set()).update(piece.masked[u, ~v])
    for pair in flows:
        linked = pair in carrying or pair in masks
        piece.add_flow(*pair, linked, pair in carrying, sorted(masks.get(pair, ())))


_PAGE = 100_000


def load_all(store: GraphStore, piece: LineageSlice) -> None:
    """Read the whole graph's lineage into the slice: pages of internal ids (tags_page_*),
    processed page by page, so no reply holds millions of rows, and read as lists of ids
    (GraphStore.read_rows): a dict per row cost more than the server's work. Columns of
    deleted assets, and deleted assets, are left out."""
    [top] = [row["top"] for row in store.read("store_node_id_max")]
    if top is None:
        return
    slot = array("i", [-1]) * (top + 1)  # internal id -> slice node
    pages = [{"from": start, "to": start + _PAGE} for start in range(0, top + 1, _PAGE)]
    for page in pages:
        for graph_id, urn, deleted_at in store.read_rows("tags_page_assets", page, plain=True):
            if deleted_at is None:
                slot[graph_id] = piece.node(urn, column=False)
    index, is_asset = piece.index, piece.asset_of
    for page in pages:
        rows = []
        for graph_id, urn in store.read_rows("tags_page_columns", page, plain=True):
            owner = index.get(urn.rpartition("#")[0], -1)  # identity.column_urn
            if owner >= 0 and is_asset[owner] == ASSET:  # not of a deleted asset
                rows.append((graph_id, urn, owner))
        added = piece.add_columns((urn, owner) for _, urn, owner in rows)
        for (graph_id, _, _), i in zip(rows, added, strict=True):
            slot[graph_id] = i
    width = top + 2
    carrying: set[int] = set()  # asset pairs some plain FEEDS edge joins, as src * width + dst
    masked: dict[int, set[str]] = {}
    asset_of, feeds = piece.asset_of, piece.feeds
    masked_sources: set[int] = set()  # internal ids
    for page in pages:
        for src, dst, only_masked in store.read_rows("tags_page_feeds", page, numbers=True):
            if only_masked:
                masked_sources.add(src)
                continue
            src, dst = slot[src], slot[dst]
            if src >= 0 and dst >= 0:
                feeds[src].append(dst)
                carrying.add(asset_of[src] * width + asset_of[dst])
    params = [{"ids": ids} for ids in chunks(sorted(masked_sources), _CHUNK)]
    for rows in store.read_each("tags_masked_feeds_from", params):
        for row in rows:
            src, dst = slot[row["src"]], slot[row["dst"]]
            if src >= 0 and dst >= 0:
                piece.add_feed(src, dst, row["masks"] or ("?",))
                masked.setdefault(asset_of[src] * width + asset_of[dst], set()).update(
                    row["masks"] or ("?",)
                )
    for page in pages:
        for src, dst in store.read_rows("tags_page_flows", page, numbers=True):
            src, dst = slot[src], slot[dst]
            if src < 0 or dst < 0:
                continue
            pair = src * width + dst
            masks = masked.get(pair, set())
            linked = pair in carrying or bool(masks)
            piece.add_flow(src, dst, linked, pair in carrying, sorted(masks))


# --- Facts --------------------------------------------------------------------------------


@dataclass
class Facts:
    """The tags stated (origins) and the blocks, as read for a derivation."""

    origins: list[TagOrigin] = field(default_factory=list)
    blocks: list[TagOrigin] = field(default_factory=list)

    def add(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            fact = TagOrigin(
                row["target"], row["key"], row["value"], row["source"],
                row["by"], row["at"], row["reason"],
            )  # fmt: skip
            (self.blocks if fact.source == BLOCK else self.origins).append(fact)


def tag_list(store: GraphStore, settings: TagSettings) -> list[dict[str, str | None]]:
    """Every tag stated in the graph or by a settings glob, once, with one reason as its
    description: Marquez's tag list (derived tags repeat these)."""
    found: dict[str, str | None] = {}
    for row in store.read("tags_facts"):
        if row["source"] != BLOCK:
            tag = row["key"] if row["value"] is None else f"{row['key']}={row['value']}"
            found[tag] = found.get(tag) or row["reason"]
    for glob in settings.globs:
        found[glob.tag] = found.get(glob.tag) or glob.reason
    return [{"name": name, "description": found[name]} for name in sorted(found)]


def glob_origins(settings: TagSettings, urns: Iterable[str]) -> list[TagOrigin]:
    """The tags [[tags.globs]] give the assets among `urns`."""
    found = []
    for urn in urns:
        for glob in settings.globs:
            if glob_regex(glob.pattern).fullmatch(urn):
                key, value = split_tag(glob.tag)
                reason = glob.reason or f"[[tags.globs]] {glob.pattern}"
                found.append(TagOrigin(urn, key, value, SETTINGS, SETTINGS, None, reason))
    return found


def all_facts(store: GraphStore, settings: TagSettings) -> Facts:
    """Every fact in the graph and every asset a settings glob tags."""
    facts = Facts()
    facts.add(store.read("tags_facts"))
    candidates: set[str] = set()
    for glob in settings.globs:
        prefix = glob.pattern.split("*", 1)[0]
        candidates.update(row["urn"] for row in store.read("tags_assets_under", {"prefix": prefix}))
    facts.origins += glob_origins(settings, sorted(candidates))
    return facts


def slice_facts(store: GraphStore, settings: TagSettings, piece: LineageSlice) -> Facts:
    """The facts on the slice's nodes, and the tags settings globs give its assets."""
    facts = Facts()
    columns = [urn for i, urn in enumerate(piece.names) if piece.is_column(i)]
    assets = [piece.names[i] for i in sorted(piece.flowed)]  # others: owners of columns only
    for name, urns in (("tags_facts_on_columns", columns), ("tags_facts_on_assets", assets)):
        for rows in store.read_each(name, [{"urns": c} for c in chunks(urns, _CHUNK)]):
            facts.add(rows)
    facts.origins += glob_origins(settings, assets)
    return facts


# --- Derivation ---------------------------------------------------------------------------


@dataclass
class Propagation:
    """The result of deriving every tag over a slice: per (key, value), each node's
    predecessor towards its nearest origin (`_ORIGIN` at an origin, `UNREACHED` elsewhere)
    and which origin; and every stop."""

    piece: LineageSlice
    groups: list[tuple[str, str | None]]
    origins: list[list[TagOrigin]]  # per group, by index
    pred: list[array[int]]
    origin_of: list[array[int]]
    stop_edges: list[tuple[int, int, int, str]]  # (group, src, dst, reason)
    levels: dict[str, list[str]]

    def derived_count(self) -> int:
        """How many (node, tag) pairs lineage derives, origins themselves not counted."""
        return sum(sum(1 for p in pred if p >= 0) for pred in self.pred)

    def own(self, node: int) -> list[TagOrigin]:
        found = []
        for g, pred in enumerate(self.pred):
            if pred[node] == _ORIGIN:
                found += [o for o in self.origins[g] if self.piece.index[o.target] == node]
        return found

    def derived(self, node: int) -> list[DerivedTag]:
        """The tags derived at `node` not stated on it, highest level only for ordered keys."""
        own = {(o.key, o.value) for o in self.own(node)}
        found = []
        for g, pred in enumerate(self.pred):
            if pred[node] < 0 or self.groups[g] in own:
                continue
            origin, urns = self.why(g, node)
            key, value = self.groups[g]
            found.append(DerivedTag(urns[-1], key, value, origin, urns, len(urns) - 1))
        return highest(found, self.levels, own)

    def tag_names(self, urn: str) -> list[str]:
        """`key=value` of every tag `urn` carries, its own and derived (none if not in the
        slice), as Marquez names tags."""
        node = self.piece.index.get(urn)
        if node is None:
            return []
        found: list[TagOrigin | DerivedTag] = [*self.own(node), *self.derived(node)]
        return sorted({t.tag for t in found})

    def why(self, group: int, node: int) -> tuple[TagOrigin, tuple[str, ...]]:
        """The origin that brought the group's tag to `node` and the urns on the way."""
        pred, path = self.pred[group], [node]
        while pred[path[-1]] >= 0:
            path.append(pred[path[-1]])
        origin = self.origins[group][self.origin_of[group][node]]
        return origin, tuple(self.piece.names[i] for i in reversed(path))

    def stops(self) -> list[TagStop]:
        """Every edge a tag did not cross, with the reason."""
        names = self.piece.names
        return [
            TagStop(
                *self.groups[g], self._origin_target(g, s), names[s], names[d],
                reason or self.piece.masked_reason(s, d),
            )
            for g, s, d, reason in self.stop_edges
        ]  # fmt: skip

    def _origin_target(self, group: int, node: int) -> str:
        return self.origins[group][self.origin_of[group][node]].target


def highest(
    found: list[DerivedTag], levels: dict[str, list[str]], own: Collection[tuple[str, Any]] = ()
) -> list[DerivedTag]:
    """For keys with ordered levels, the derived tags below the highest level present (own or
    derived) left out; values not among the levels are kept."""
    rank: dict[str, int] = {}
    for key, value in [*own, *((d.key, d.value) for d in found)]:
        order = levels.get(key)
        if order and value in order:
            rank[key] = max(rank.get(key, -1), order.index(value))
    return [
        d
        for d in found
        if d.key not in rank
        or d.value not in levels[d.key]
        or levels[d.key].index(d.value) >= rank[d.key]
    ]


Blocked = dict[tuple[int, int], str]


def _blocks(piece: LineageSlice, blocks: Iterable[TagOrigin]) -> dict[str, Blocked]:
    """Per key, the blocked edges as (src or -1 for every source, dst) with their reason."""
    found: dict[str, Blocked] = {}
    for block in blocks:
        dst = piece.index.get(block.target)
        if dst is None:
            continue
        src = -1 if block.value is None else piece.index.get(block.value)
        if src is None:
            continue
        why = f"blocked by {block.by or 'hand'}" + (f": {block.reason}" if block.reason else "")
        found.setdefault(block.key, {})[src, dst] = why
    return found


def propagate(
    piece: LineageSlice, facts: Facts, levels: dict[str, list[str]] | None = None
) -> Propagation:
    """Every tag derived over the slice (see the module's rules)."""
    by_group: dict[tuple[str, str | None], list[TagOrigin]] = {}
    for origin in sorted(facts.origins, key=lambda o: (o.target, o.source, o.key, o.value or "")):
        if origin.target in piece.index:
            by_group.setdefault((origin.key, origin.value), []).append(origin)
    blocks = _blocks(piece, facts.blocks)
    groups = sorted(by_group, key=lambda k: (k[0], k[1] or ""))
    preds, origin_ofs = [], []
    stops: list[tuple[int, int, int, str]] = []
    size = len(piece.names)
    opened = piece.open_flows()
    for g, group in enumerate(groups):
        pred = array("i", [UNREACHED]) * size
        origin_of = array("i", [0]) * size
        queue = []
        for o, origin in enumerate(by_group[group]):
            node = piece.index[origin.target]
            if pred[node] == UNREACHED:
                pred[node] = _ORIGIN
                origin_of[node] = o
                queue.append(node)
        _search(piece, queue, pred, origin_of, blocks.get(group[0], {}), stops, g, opened)
        preds.append(pred)
        origin_ofs.append(origin_of)
    origins = [by_group[g] for g in groups]
    return Propagation(piece, groups, origins, preds, origin_ofs, stops, levels or {})


def _search(
    piece: LineageSlice,
    queue: list[int],
    pred: array[int],
    origin_of: array[int],
    blocked: dict[tuple[int, int], str],
    stops: list[tuple[int, int, int, str]],
    group: int,
    opened: dict[int, list[int]],
) -> None:
    """Breadth-first from the queue's origins; `queue` grows as it is walked (`opened`: the
    slice's open_flows). A masked edge's
    stop is kept with no reason (`masked_reason` gives it when asked: most never are); the
    loop over a column's edges is the whole derivation's hot spot, so it is kept bare."""
    feeds, flows, asset_of = piece.feeds, piece.flows, piece.asset_of
    for u in queue:
        a = asset_of[u]
        column = a != ASSET
        for v in feeds[u] if column else flows[u]:
            if v < 0:
                v = ~v
                if column or piece.linked[u, v]:  # a masked column feed, or all of an asset's
                    stops.append((group, u, v, ""))
                    continue
            if blocked:
                why = blocked.get((u, v)) or blocked.get((-1, v))
                if why:
                    stops.append((group, u, v, why))
                    continue
            if pred[v] == UNREACHED:
                pred[v] = u
                origin_of[v] = origin_of[u]
                queue.append(v)
        if a >= 0 and a in opened:  # to assets its asset feeds with no column lineage
            for b in opened[a]:
                why = (blocked.get((a, b)) or blocked.get((-1, b))) if blocked else None
                if why:
                    stops.append((group, u, b, why))
                elif pred[b] == UNREACHED:
                    pred[b] = u
                    origin_of[b] = origin_of[u]
                    queue.append(b)


# --- Questions ----------------------------------------------------------------------------


@gc_pause.paused()
def derive_all(store: GraphStore, settings: TagSettings) -> Propagation:
    """Every derived tag in the graph: its whole lineage read, then searched. The millions of
    lists it builds hold no cycles: the cycle collector would only re-scan them over and over
    (see lineagegraph.gc_pause)."""
    facts = all_facts(store, settings)
    piece = LineageSlice()
    load_all(store, piece)
    return propagate(piece, facts, settings.levels)


def derive_at(
    store: GraphStore,
    settings: TagSettings,
    urns: Iterable[tuple[str, str | None]],
    walked: Walked | None = None,
) -> Propagation:
    """The tags of the given nodes (urn, and the asset of a column or None for an asset):
    the slice upstream of them, searched downstream."""
    piece = LineageSlice()
    seeds = [piece.node(urn, asset, column=asset is not None) for urn, asset in urns]
    load_upstream(store, piece, seeds, walked)
    return propagate(piece, slice_facts(store, settings, piece), settings.levels)


@dataclass(frozen=True, slots=True)
class ListedTag:
    """A tag as a lineage answer lists it beside an asset: on the asset or one of its columns
    (`on`), its own (`origin` the same node, no path) or derived with its why."""

    tag: str
    on: str
    kind: str  # "own" or "derived"
    source: str
    origin: str
    hops: int
    path: tuple[str, ...]
    reason: str | None


def asset_tags(
    store: GraphStore,
    settings: TagSettings,
    urns: Collection[str],
    walked: Walked | None = None,
) -> dict[str, tuple[ListedTag, ...]]:
    """The tags of each asset among `urns` and of its columns, own and derived: one
    derivation over the slice upstream of them all, however many they are (none at all when
    the graph states no tag and settings tag no prefix: the usual graph costs nothing).
    `walked`: what an upstream traversal of these assets read (its complete assets among
    `urns`)."""
    assets = sorted(set(urns))
    if not settings.globs and not store.read("tags_any_fact"):
        return {urn: () for urn in assets}
    seeds: list[tuple[str, str | None]] = [(urn, None) for urn in assets]
    for rows in store.read_each("tags_columns_of", [{"urns": c} for c in chunks(assets, _CHUNK)]):
        seeds += sorted((row["column"], row["asset"]) for row in rows)
    found = derive_at(store, settings, seeds, walked)
    listed: dict[str, list[ListedTag]] = {urn: [] for urn in assets}
    for urn, asset in seeds:
        node = found.piece.index[urn]
        listed[asset or urn] += [
            ListedTag(o.tag, urn, "own", o.source, urn, 0, (), o.reason) for o in found.own(node)
        ] + [
            ListedTag(d.tag, urn, "derived", d.origin.source, d.origin.target, d.hops, d.path,
                      d.origin.reason)
            for d in found.derived(node)
        ]  # fmt: skip
    return {urn: tuple(tags) for urn, tags in listed.items()}
