"""A Neo4j store written before `changed_at` gets it from init_schema, once, and `diff` then
lists its old changes (lineagegraph.graph.upgrade, docs/history.md).

No Neo4j server runs here, so the upgrade's statements and loop also run for real on the
embedded store, where they must give what its own step (FalkorDBStore._set_changed_at) gives on
the same graph, and finish after being stopped at any statement; and the Neo4j adapter runs them
through its driver against FalkorDB's Bolt listener. The test on Neo4j itself needs Docker
(testcontainers) and skips without it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from lineagegraph.graph import upgrade
from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.history import delete_assets
from lineagegraph.graph.neo4j import Neo4jStore
from lineagegraph.graph.store import GraphStore, Result, open_store
from lineagegraph.questions import history
from lineagegraph.settings import GraphSettings

NODE_TIMES = "MATCH (n) WHERE n.urn IS NOT NULL RETURN n.urn, n.changed_at ORDER BY n.urn"
EDGE_TIMES = (
    "MATCH (a)-[e]->(b) WHERE e.first_seen IS NOT NULL "
    "RETURN a.urn, type(e), b.urn, e.changed_at ORDER BY a.urn, type(e), b.urn"
)
EXPECTED_NODES = [
    ["a", 200],  # first seen at 100; its FLOWS_TO to b stopped at 200
    ["a#x", 250],  # its FEEDS stopped at 250
    ["b", 400],  # deleted at 300, back at 400
    ["b#y", None],  # no lineage leaves it: its first_seen has an index of its own
    ["c", 500],  # deleted at 500
    ["d", 100],
    ["t", 600],  # its WRITES_TO stopped at 600
    ["u", None],  # no lineage leaves it
    ["z", None],  # no history time at all: passed over, not looped on
]
EXPECTED_EDGES = [
    ["a", "FLOWS_TO", "b", 200],
    ["a", "FLOWS_TO", "c", 100],
    ["a#x", "FEEDS", "b#y", 250],
    ["t", "READS_FROM", "a", 120],
    ["t", "WRITES_TO", "d", 600],
]


def old_store(store: GraphStore) -> None:
    """A graph as a version before `changed_at` left it: assets deleted and back, lineage edges
    of every kind stopped, a column and a transformation without lineage, an asset without any
    time; then no `changed_at` anywhere and no marker."""
    table = {"system": "snowflake", "props": {}}
    store.run("merge_tables", {"rows": [{**table, "urn": u, "name": u, "seen": 100}
                                        for u in ("a", "b", "c", "d")]})  # fmt: skip
    store.execute("CREATE (:Asset:Table {urn: 'z', system: 'snowflake'})", write=True)
    delete_assets(store, [{"urn": "b", "at": 300}])
    store.run("merge_tables", {"rows": [{**table, "urn": "b", "name": "b", "seen": 400}]})
    delete_assets(store, [{"urn": "c", "at": 500}])
    store.run("merge_flows", {"rows": [{"src": "a", "dst": d, "at": 100, "via": []}
                                       for d in ("b", "c")]})  # fmt: skip
    columns = [{"urn": f"{a}#{c}", "asset": a, "name": c, "seen": 100} for a, c in ("ax", "by")]
    store.run("merge_columns", {"rows": columns})
    feed = {"src": "a#x", "dst": "b#y", "at": 150, "via": [], "masked_by": []}
    store.run("merge_column_feeds", {"rows": [feed]})
    jobs = [{"urn": t, "system": "spark", "name": t, "run_id": "r", "run_at": 120, "user": None}
            for t in "tu"]  # fmt: skip
    store.run("merge_transformations", {"rows": jobs})
    store.run("merge_reads_from", {"rows": [{"t": "t", "asset": "a", "at": 120}]})
    store.run("merge_writes_to", {"rows": [{"t": "t", "asset": "d", "at": 120}]})
    for name, src, dst, at in (("flows", "a", "b", 200), ("feeds", "a#x", "b#y", 250),
                               ("writes_to", "t", "d", 600)):  # fmt: skip
        stop = {"src": src, "dst": dst, "stopped": [at], "resumed": None, "retired_at": at}
        store.run(f"history_set_{name}", {"rows": [{**stop, "live": []}]})
    forget_changed_at(store)


def forget_changed_at(store: GraphStore) -> None:
    store.execute("MATCH (n) SET n.changed_at = null", write=True)
    store.execute("MATCH ()-[e]->() SET e.changed_at = null", write=True)
    store.execute("MATCH (m:LineagegraphSchema) DELETE m", write=True)
    assert {t for _, t in times(store)[0]} == {None}


def times(store: GraphStore) -> tuple[list[list[Any]], list[list[Any]]]:
    """Every node's and lineage edge's `changed_at`, by urn."""
    return (
        store.execute(NODE_TIMES, write=False).rows,
        store.execute(EDGE_TIMES, write=False).rows,
    )


def listed(store: GraphStore, since: int, until: int) -> list[tuple[str, str, str, str | None]]:
    changes = history.diff(store, since, until).changes
    return sorted((c.change, c.what, c.urn, c.to) for c in changes)


OLD_CHANGES = [  # what `diff` lists on the old store once it has changed_at
    ("removed", "FEEDS", "a#x", "b#y"),
    ("removed", "FLOWS_TO", "a", "b"),
]


def test_the_statements_give_what_the_embedded_step_gives(falkordb: FalkorDBStore) -> None:
    old_store(falkordb)
    assert listed(falkordb, 150, 260) == []  # what the upgrade is for
    falkordb._set_changed_at()  # the embedded store's own step
    embedded = times(falkordb)
    assert embedded == (EXPECTED_NODES, EXPECTED_EDGES)
    forget_changed_at(falkordb)
    upgrade.upgrade(falkordb, page=2)  # several pages of each label
    assert times(falkordb) == embedded
    assert listed(falkordb, 150, 260) == OLD_CHANGES
    assert upgrade.read_marker(falkordb) == upgrade.Marker(upgrade.SCHEMA_STEPS)


class Stopped(Exception):
    """A process killed while the upgrade ran."""


def test_an_upgrade_stopped_at_any_statement_finishes_on_the_next_run(
    falkordb: FalkorDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed before any of its statements, the next run finishes, from where the marker
    says (never from the start once a page is recorded), with the same values."""
    old_store(falkordb)
    run = FalkorDBStore.run
    sent: list[tuple[str, dict[str, Any] | None]] = []

    def recorded(store: FalkorDBStore, name: str, params: Any = None, **kw: Any) -> Result:
        sent.append((name, params))
        return run(store, name, params, **kw)

    monkeypatch.setattr(FalkorDBStore, "run", recorded)
    upgrade.upgrade(falkordb, page=2)
    whole = list(sent)
    # 5 assets, 2 columns, 2 jobs: pages of 2, then an empty one, for each label
    assert len([n for n, _ in whole if n.startswith("store_changed_at_page_")]) == 4 + 2 + 2
    for stop_at in range(len(whole)):
        forget_changed_at(falkordb)
        sent.clear()

        def stopping(store: FalkorDBStore, name: str, params: Any = None, **kw: Any) -> Result:
            if len(sent) == stop_at:  # noqa: B023 - the loop's value is the one meant
                raise Stopped
            return recorded(store, name, params, **kw)

        monkeypatch.setattr(FalkorDBStore, "run", stopping)
        with pytest.raises(Stopped):
            upgrade.upgrade(falkordb, page=2)
        marker = upgrade.read_marker(falkordb)
        monkeypatch.setattr(FalkorDBStore, "run", recorded)
        sent.clear()
        upgrade.upgrade(falkordb, page=2)
        assert times(falkordb) == (EXPECTED_NODES, EXPECTED_EDGES), stop_at
        pages = [p for n, p in sent if n.startswith("store_changed_at_page_")]
        assert pages[0]["after"] == (marker.after or ""), stop_at
        assert len(sent) <= len(whole) - stop_at + 2, stop_at  # resumed, a page redone at most


def test_a_current_store_is_not_scanned_again(
    falkordb: FalkorDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_store(falkordb)
    upgrade.upgrade(falkordb)
    falkordb.execute("MATCH (a:Asset {urn: 'd'}) SET a.changed_at = null", write=True)
    upgrade.upgrade(falkordb)  # one read of the marker, no page
    assert ["d", None] in times(falkordb)[0]
    assert falkordb.execute("MATCH (m:LineagegraphSchema) RETURN count(m)", write=False).rows == [
        [1]
    ]


def test_the_upgrade_never_lowers_a_newer_value(falkordb: FalkorDBStore) -> None:
    """A value set since (a harvest that ran between two runs of a stopped upgrade) stays."""
    old_store(falkordb)
    for match in ("(n {urn: 'a'})", "(n {urn: 'b#y'})", "(:Transformation)-[n:READS_FROM]->()"):
        falkordb.execute(f"MATCH {match} SET n.changed_at = 900", write=True)
    upgrade.upgrade(falkordb, page=2)
    nodes, edges = times(falkordb)
    assert ["a", 900] in nodes and ["b#y", 900] in nodes and ["t", 900] in nodes
    assert ["t", "READS_FROM", "a", 900] in edges and ["t", "WRITES_TO", "d", 600] in edges


def test_the_upgrade_ends_on_nodes_without_history(falkordb: FalkorDBStore) -> None:
    falkordb.execute("UNWIND range(1, 5) AS i CREATE (:Asset {urn: toString(i)})", write=True)
    falkordb.execute("UNWIND range(1, 5) AS i CREATE (:Column {urn: toString(i)})", write=True)
    upgrade.upgrade(falkordb, page=2)
    assert {t for _, t in times(falkordb)[0]} == {None}
    assert upgrade.read_marker(falkordb).step == upgrade.SCHEMA_STEPS


def test_the_neo4j_adapter_runs_the_upgrade_over_bolt(
    bolt_uri: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Neo4jStore's own path (the driver's managed transactions, parameters over Bolt), on
    FalkorDB's Bolt listener: everything init_schema does after its schema statements, which
    that listener does not take (Neo4j's CREATE CONSTRAINT)."""
    store = Neo4jStore(GraphSettings(uri=bolt_uri))
    try:
        old_store(store)
        with caplog.at_level(logging.WARNING, logger="lineagegraph"):
            assert listed(store, 150, 260) == []
        assert "`diff` misses the changes it wrote until `lineagegraph init` (or" in caplog.text
        upgrade.upgrade(store, page=2)
        assert store.upgrade_pending() is None
        assert times(store) == (EXPECTED_NODES, EXPECTED_EDGES)
        assert listed(store, 150, 260) == OLD_CHANGES
    finally:
        store.execute("MATCH (n) DETACH DELETE n", write=True)
        store.close()


@pytest.fixture()
def neo4j(neo4j_uri: str) -> Iterator[GraphStore]:
    """An empty Neo4j database with the current schema (skips without Docker)."""
    store = open_store(GraphSettings(uri=neo4j_uri, password="lineagegraph-test"))
    try:
        store.execute("MATCH (n) DETACH DELETE n", write=True)
        store.init_schema()
        yield store
    finally:
        store.close()


def test_an_older_neo4j_store_gets_changed_at_from_init_schema(
    neo4j: GraphStore, caplog: pytest.LogCaptureFixture
) -> None:
    old_store(neo4j)
    with caplog.at_level(logging.WARNING, logger="lineagegraph"):
        assert listed(neo4j, 150, 260) == []
    assert "`diff` misses the changes it wrote until `lineagegraph init` (or" in caplog.text
    neo4j.init_schema()
    assert neo4j.upgrade_pending() is None
    assert times(neo4j) == (EXPECTED_NODES, EXPECTED_EDGES)
    assert listed(neo4j, 150, 260) == OLD_CHANGES
    assert upgrade.read_marker(neo4j) == upgrade.Marker(upgrade.SCHEMA_STEPS)
    neo4j.execute("MATCH (a:Asset {urn: 'd'}) SET a.changed_at = null", write=True)
    neo4j.init_schema()  # marked current: not scanned again
    assert ["d", None] in times(neo4j)[0]
    rows = neo4j.execute("MATCH (n) WHERE n:LineagegraphSchema RETURN count(n)", write=False).rows
    assert rows == [[1]]
