"""Tag derivation equals a plain breadth-first search with the stop rules, one origin at a
time, over random graphs (cycles, diamonds, several origins, masked and blocked edges) written
into the store; and untagging restores exactly the tags there were before."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Column, ColumnFeed, Flow, Item, TagFact
from lineagegraph.questions.answers import upstream
from lineagegraph.questions.tags import BLOCK, derive_all, derive_at
from lineagegraph.settings import Settings
from lineagegraph.tags_settings import TagSettings

T0 = 1_700_000_000_000
ASSETS = 4
COLUMNS = 3  # per asset
TAGS = [("pii", "email"), ("pii", "phone"), ("pii", None), ("owner", "crm")]


def asset(i: int) -> str:
    return f"s3://bucket/data set {i}"


def column(i: int) -> str:
    return f"{asset(i // COLUMNS)}#c{i % COLUMNS}"


NODES = [asset(i) for i in range(ASSETS)] + [column(i) for i in range(ASSETS * COLUMNS)]

feeds = st.lists(
    st.tuples(
        st.integers(0, ASSETS * COLUMNS - 1),
        st.integers(0, ASSETS * COLUMNS - 1),
        st.sampled_from([(), (), ("SHA2",), ("COUNT",)]),
    ),
    max_size=20,
)
flows = st.lists(st.tuples(st.integers(0, ASSETS - 1), st.integers(0, ASSETS - 1)), max_size=8)
origins = st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(TAGS)), min_size=1, max_size=5)
blocks = st.lists(
    st.tuples(
        st.sampled_from(NODES),
        st.sampled_from(["pii", "owner"]),
        st.none() | st.sampled_from(NODES),
    ),
    max_size=3,
)


def reference(
    feed_list: list[tuple[int, int, tuple[str, ...]]],
    flow_list: list[tuple[int, int]],
    tagged: list[tuple[str, tuple[str, str | None]]],
    blocked: list[tuple[str, str, str | None]],
) -> set[tuple[str, str, str | None]]:
    """(node, key, value) of every derived tag, by the rules written out plainly."""
    plain: dict[tuple[str, str], bool] = {}
    for src, dst, masks in feed_list:
        key = (column(src), column(dst))
        plain[key] = plain.get(key, False) or not masks
    flow_set = {(asset(a), asset(b)) for a, b in flow_list}

    def owner(urn: str) -> str | None:
        return urn.rpartition("#")[0] if "#" in urn else None

    def is_blocked(key: str, src: str, dst: str) -> bool:
        return any(t == dst and k == key and f in (None, src) for t, k, f in blocked)

    def between(a: str, b: str) -> list[bool]:
        return [p for (s, d), p in plain.items() if owner(s) == a and owner(d) == b]

    def steps(node: str, key: str) -> list[str]:
        out = []
        if owner(node):
            out += [
                d for (s, d), p in plain.items() if s == node and p and not is_blocked(key, s, d)
            ]
            a = owner(node)
            out += [
                b for (x, b) in flow_set
                if x == a and not between(a, b) and not is_blocked(key, a, b)
            ]  # fmt: skip
        else:
            out += [
                b for (x, b) in flow_set
                if x == node and (not between(node, b) or any(between(node, b)))
                and not is_blocked(key, node, b)
            ]  # fmt: skip
        return out

    own = {(node, key, value) for node, (key, value) in tagged}
    found = set()
    for node, (key, value) in tagged:
        seen, queue = {node}, deque([node])
        while queue:
            for nxt in steps(queue.popleft(), key):
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
        found |= {(n, key, value) for n in seen if (n, key, value) not in own}
    return found


def write(store: GraphStore, items: list[Item]) -> None:
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.finish()


def derived(store: GraphStore) -> set[tuple[str, str, str | None]]:
    found = derive_all(store, TagSettings())
    return {(urn, d.key, d.value) for urn, i in found.piece.index.items() for d in found.derived(i)}


def graph_items(
    feed_list: list[tuple[int, int, tuple[str, ...]]], flow_list: list[tuple[int, int]]
) -> list[Item]:
    items: list[Item] = [Asset(asset(i), "Dataset", "s3", f"set {i}", T0) for i in range(ASSETS)]
    items += [
        Column(column(i), asset(i // COLUMNS), f"c{i % COLUMNS}", T0)
        for i in range(ASSETS * COLUMNS)
    ]
    items += [
        ColumnFeed(column(s), column(d), T0 + n, None, masks)
        for n, (s, d, masks) in enumerate(feed_list)
    ]
    items += [Flow(asset(a), asset(b), T0) for a, b in flow_list]
    return items


@pytest.mark.parametrize("store", ["falkordb"], indirect=True)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(feed_list=feeds, flow_list=flows, tagged=origins, blocked=blocks, extra=origins)
def test_derivation_is_a_plain_search_with_the_stops_and_untag_restores_it(
    store: GraphStore,
    feed_list: list[tuple[int, int, tuple[str, ...]]],
    flow_list: list[tuple[int, int]],
    tagged: list[tuple[str, tuple[str, str | None]]],
    blocked: list[tuple[str, str, str | None]],
    extra: list[tuple[str, tuple[str, str | None]]],
) -> None:
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    # the writer keeps no edge from a node to itself
    feed_list = [(s, d, m) for s, d, m in feed_list if s != d]
    flow_list = [(a, b) for a, b in flow_list if a != b]
    # one fact per (source, key, target): the last statement of each, as the store keeps
    tagged = list({(n, t[0]): (n, t) for n, t in tagged}.values())
    extra = list({(n, t[0]): (n, t) for n, t in extra}.values())
    blocked = list({(t, k): (t, k, f) for t, k, f in blocked}.values())
    facts = [TagFact(n, k, v, "manual", "ana", T0) for n, (k, v) in tagged]
    block_facts = [TagFact(t, k, f, BLOCK, "bo", T0) for t, k, f in blocked]
    write(store, [*graph_items(feed_list, flow_list), *facts, *block_facts])
    before = derived(store)
    assert before == reference(feed_list, flow_list, tagged, blocked)
    for node in NODES:  # each node asked alone reads only what lies upstream of it
        owner = node.rpartition("#")[0] or None
        one = derive_at(store, TagSettings(), [(node, owner)])
        assert {(node, d.key, d.value) for d in one.derived(one.piece.index[node])} == {
            t for t in before if t[0] == node
        }
    for i in range(ASSETS):  # `upstream` reuses its traversal's edges, whole or cut by depth
        for depth in (1, 20):
            answer = upstream(store, Settings(), asset(i), depth=depth)
            listed = {
                (t.on, t.tag)
                for item in [answer.start, *answer.assets]
                for t in item.tags or ()
                if t.kind == "derived"
            }
            shown = {a.urn for a in [answer.start, *answer.assets]}
            assert listed == {
                (urn, key if value is None else f"{key}={value}")
                for urn, key, value in before
                if (urn.rpartition("#")[0] or urn) in shown
            }

    # more tags from another source, then withdrawn: every copy goes, the rest stays
    more = [TagFact(n, k, v, "dbt", "run", T0 + 1) for n, (k, v) in extra]
    write(store, more)
    assert derived(store) == reference(
        feed_list, flow_list, tagged + [(n, t) for n, t in extra], blocked
    )
    write(
        store, [TagFact(f.target, f.key, f.value, "dbt", "run", T0 + 2, removed=True) for f in more]
    )
    assert derived(store) == before


def test_no_tag_travels_along_lineage_that_stopped(store: GraphStore) -> None:
    """A retired FLOWS_TO and FEEDS (docs/history.md) carry no tag, in a full derivation, a
    slice and `upstream` alike; the edges that still hold carry on."""
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    facts = [TagFact(column(0), "pii", None, "manual", "ana", T0)]
    facts.append(TagFact(asset(0), "owner", "crm", "manual", "ana", T0))
    write(
        store,
        [*graph_items([(0, COLUMNS, ()), (COLUMNS, 2 * COLUMNS, ())], [(0, 1), (1, 2)]), *facts],
    )
    assert (column(2 * COLUMNS), "pii", None) in derived(store)
    store.execute(
        "MATCH (:Asset {urn: $a})-[e:FLOWS_TO]->(:Asset {urn: $b}) SET e.retired_at = $at",
        {"a": asset(0), "b": asset(1), "at": T0},
        write=True,
    )
    store.execute(
        "MATCH (:Column {urn: $a})-[e:FEEDS]->(:Column {urn: $b}) SET e.retired_at = $at",
        {"a": column(0), "b": column(COLUMNS), "at": T0},
        write=True,
    )
    after = derived(store)
    assert not {t for t in after if not t[0].startswith(asset(0))}
    one = derive_at(store, TagSettings(), [(column(2 * COLUMNS), asset(2))])
    assert not one.derived(one.piece.index[column(2 * COLUMNS)])
    answer = upstream(store, Settings(), asset(2), depth=20)
    assert not [
        t for item in [answer.start, *answer.assets] for t in item.tags or () if t.kind == "derived"
    ]
