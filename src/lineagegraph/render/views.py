"""A lineage answer as a graph to draw: nodes in levels, edges the way data flows."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lineagegraph.identity import IdentityError, name_of
from lineagegraph.output import cut_middle
from lineagegraph.questions.lineage import Direction, Impact, LineagePath, Reached, Reader

MAX_PICTURE_NODES = 400
"""Beyond this a picture stops being readable: the nodes nearest the start are kept."""


@dataclass(frozen=True, slots=True)
class Node:
    urn: str
    name: str  # the label drawn: short, but telling apart assets that share a name
    system: str | None
    kind: str
    level: int
    start: bool = False
    deleted: bool = False
    detail: str = ""  # a transformation's second line: what it writes
    quality: str | None = None  # an asset's latest data quality (lineagegraph.questions.quality)
    tags: tuple[str, ...] = ()  # the classifications of an asset and its columns, `key=value`
    change: str | None = None  # "added" or "removed" since an earlier time (the explorer's diff)


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    via: tuple[str, ...] = ()
    dashed: bool = False  # an indirect hop (filtered-out assets between) or a read
    link: bool = False  # an edge between found nodes that is not how the later one was reached
    change: str | None = None  # "added" or "removed" since an earlier time (the explorer's diff)


@dataclass
class View:
    """A lineage answer as a graph to draw; `nodes` keep their order (start first)."""

    title: str
    nodes: list[Node]
    edges: list[Edge]
    note: str = ""
    hidden: int = 0  # nodes left out of a picture by MAX_PICTURE_NODES
    by_tag: bool = False  # assets coloured by their classifications (Node.tags)
    by_urn: dict[str, Node] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_urn = {node.urn: node for node in self.nodes}


def label(urn: str, kind: str, name: str) -> str:
    """What a picture calls a node: the urn without scheme and Snowflake account
    (`RAW.PUBLIC.ORDERS`, `raw-bucket/orders`), `TABLE.COLUMN` for a column, and a
    transformation's name.

    >>> label("snowflake://acme/DB.S.ORDERS", "Table", "ORDERS")
    'DB.S.ORDERS'
    >>> label("s3://b/raw/orders", "Dataset", "orders"), label("file:///tmp/x", "Dataset", "x")
    ('b/raw/orders', '/tmp/x')
    >>> label("snowflake://acme/DB.S.ORDERS#AMOUNT", "Column", "AMOUNT")
    'ORDERS.AMOUNT'
    """
    if kind == "Transformation":
        return name
    if kind == "Column":
        asset, _, column = urn.rpartition("#")
        try:
            return f"{name_of(asset)}.{column}"
        except IdentityError:
            return urn
    scheme, sep, rest = urn.partition("://")
    if not sep:
        return urn
    if scheme == "snowflake":
        return rest.partition("/")[2] or rest
    return rest


def _node(item: Reached, level: int, start: bool = False) -> Node:
    deleted = item.deleted_at is not None
    name = label(item.urn, item.kind, item.name)
    return Node(
        item.urn, name, item.system, item.kind, level, start, deleted,
        quality=item.quality, tags=tuple(item.tag_names),
    )  # fmt: skip


def traversal_view(start: Reached, reached: Sequence[Reached], direction: Direction) -> View:
    """Upstream to the left of the start, downstream to the right; edges point the way data
    flows, from the nodes each asset was reached from."""
    sign = -1 if direction == "upstream" else 1
    nodes = [_node(start, 0, start=True)] + [_node(r, sign * r.distance) for r in reached]
    distance = {start.urn: 0} | {r.urn: r.distance for r in reached}
    edges = []
    for item in reached:
        for near in item.reached_from:
            indirect = distance.get(near, 0) != item.distance - 1
            pair = (near, item.urn) if direction == "downstream" else (item.urn, near)
            edges.append(Edge(*pair, via=item.via, dashed=indirect))
        for near in item.linked_from:
            pair = (near, item.urn) if direction == "downstream" else (item.urn, near)
            edges.append(Edge(*pair, link=True))
    title = f"{direction} of {start.urn}"
    return View(title, nodes, edges)


def impact_view(result: Impact) -> View:
    """The downstream view plus the transformations that read the impacted assets."""
    view = traversal_view(result.start, result.assets, "downstream")
    view.title = f"impact of {result.start.urn}"
    return with_readers(view, result.transformations, "downstream")


def with_readers(view: View, readers: Sequence[Reader], direction: Direction) -> View:
    """A view plus transformations that read its assets, linked to them by dashed edges, each
    drawn one level further from the start than the furthest asset it reads (so that a tree
    shows it under that asset)."""
    nodes, edges = list(view.nodes), list(view.edges)
    for reader in readers:
        levels = [view.by_urn[urn].level for urn in reader.reads]
        level = max(levels) + 1 if direction == "downstream" else min(levels) - 1
        nodes.append(
            Node(
                reader.urn,
                reader.name or reader.urn,
                reader.system,
                "Transformation",
                level,
                detail=_writes(reader, view),
            )
        )
        edges.extend(Edge(urn, reader.urn, dashed=True) for urn in reader.reads)
    return View(view.title, nodes, edges)


def _writes(reader: Reader, view: View) -> str:
    """What a transformation pill says besides its name: what it writes, by the label its
    node has in the picture (its urn otherwise)."""
    if not reader.writes:
        return "writes nothing (reads only)"
    first = reader.writes[0]
    name = view.by_urn[first].name if first in view.by_urn else first
    more = len(reader.writes) - 1
    return f"writes {short(name, 26)}" + (f" (+{more})" if more else "")


def paths_view(found: Sequence[LineagePath], src: Reached, dst: Reached) -> View:
    """The union of the paths, levelled by longest distance from FROM so every edge points
    right."""
    items: dict[str, Reached] = {src.urn: src, dst.urn: dst}
    via: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in found:
        for item in path.assets:
            items.setdefault(item.urn, item)
        for a, b, hop_via in zip(path.assets, path.assets[1:], path.via, strict=False):
            via[a.urn, b.urn].update(hop_via)
    level = _longest_levels(src.urn, list(via))
    nodes = [_node(item, level.get(urn, 0), start=urn == src.urn) for urn, item in items.items()]
    edges = [Edge(a, b, tuple(sorted(v))) for (a, b), v in via.items()]
    return View(f"paths from {src.urn} to {dst.urn}", nodes, edges)


def columns_view(start: Reached, up: Sequence[Reached], down: Sequence[Reached]) -> View:
    """Column lineage both ways around one column."""
    upstream = traversal_view(start, up, "upstream")
    downstream = traversal_view(start, down, "downstream")
    return View(
        f"column lineage of {start.urn}",
        upstream.nodes + downstream.nodes[1:],
        upstream.edges + downstream.edges,
    )


def _longest_levels(root: str, edges: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering from `root` (Kahn's order); a node on a cycle keeps the level it
    had when the cycle was met."""
    succ: dict[str, list[str]] = defaultdict(list)
    indegree: dict[str, int] = defaultdict(int)
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    level = {root: 0}
    ready = [n for n in {root, *succ} if indegree[n] == 0]
    while ready:
        n = ready.pop()
        for m in succ[n]:
            level[m] = max(level.get(m, 0), level.get(n, 0) + 1)
            indegree[m] -= 1
            if indegree[m] == 0:
                ready.append(m)
    for a, b in edges:  # nodes left on cycles
        level.setdefault(b, level.get(a, 0) + 1)
    return level


def trim(view: View, limit: int = MAX_PICTURE_NODES) -> View:
    """At most `limit` nodes, nearest the start first, and a note saying what was left out."""
    if len(view.nodes) <= limit:
        return view
    kept = sorted(view.nodes, key=lambda n: (not n.start, abs(n.level)))[:limit]
    keep = {n.urn for n in kept}
    nodes = [n for n in view.nodes if n.urn in keep]
    edges = [e for e in view.edges if e.src in keep and e.dst in keep]
    hidden = len(view.nodes) - len(nodes)
    note = (
        f"showing the {len(nodes)} nodes nearest the start; {hidden} more left out "
        "(narrow with --depth, --system or --label)"
    )
    return View(view.title, nodes, edges, note=note, hidden=hidden, by_tag=view.by_tag)


def short(text: str, width: int) -> str:
    """Cut in the middle (`ANALYTI…DAILY_ACTIVE`): the start says where an asset lives (a
    database, a bucket), the end what it is; a label cut from the front lost the former."""
    return cut_middle(text, width)


def by_level(nodes: Iterable[Node]) -> dict[int, list[Node]]:
    """The nodes of each level, in their order: a picture's columns or ranks."""
    levels: dict[int, list[Node]] = defaultdict(list)
    for node in nodes:
        levels[node.level].append(node)
    return levels
