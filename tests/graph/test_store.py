"""The behavioural suite every backend passes: the graph model of docs/graph-model.md."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lineagegraph.errors import QueryError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Column, ColumnFeed, Flow, PartOf, Transformation

T0 = 1_700_000_000_000


def table(name: str, seen: int = T0) -> Asset:
    return Asset(f"snowflake://acme/DB.S.{name}", "Table", "snowflake", name, seen)


def count(store: GraphStore, cypher: str, **params: object) -> int:
    return int(store.execute(cypher, params, write=False).rows[0][0])


def write(store: GraphStore, *items: object) -> GraphWriter:
    writer = GraphWriter(store)
    writer.add_all(items)  # type: ignore[arg-type]
    writer.flush()
    return writer


def lineage(at: int) -> list[object]:
    """Two tables and a file flowing into a third through one transformation run at `at`."""
    t = Transformation(
        "snowflake://acme/query/h1",
        "snowflake",
        "q",
        f"run-{at}",
        at,
        "ALICE",
        reads=(table("A").urn, table("B").urn),
        writes=(table("C").urn,),
    )
    return [
        table("A", at),
        table("B", at),
        table("C", at),
        Asset("s3://b/raw/x.csv", "File", "s3", "x.csv", at, {"size": 10}),
        Asset("s3://b/raw", "Dataset", "s3", "raw", at),
        PartOf("s3://b/raw/x.csv", "s3://b/raw"),
        t,
        Flow(table("A").urn, table("C").urn, at, t.urn),
        Flow(table("B").urn, table("C").urn, at, t.urn),
        Flow("s3://b/raw", table("A").urn, at),
        Column(table("A").urn + "#ID", table("A").urn, "ID", at),
        Column(table("C").urn + "#ID", table("C").urn, "ID", at),
        ColumnFeed(table("A").urn + "#ID", table("C").urn + "#ID", at, t.urn),
    ]


GRAPH_SHAPE = {
    "MATCH (n:Asset:Table) RETURN count(n)": 3,
    "MATCH (n:Asset:File) RETURN count(n)": 1,
    "MATCH (n:Asset:Dataset) RETURN count(n)": 1,
    "MATCH (:Asset)-[e:FLOWS_TO]->(:Asset) RETURN count(e)": 3,
    "MATCH (:Transformation)-[e:READS_FROM]->(:Asset) RETURN count(e)": 2,
    "MATCH (:Transformation)-[e:WRITES_TO]->(:Asset) RETURN count(e)": 1,
    "MATCH (:File)-[e:PART_OF]->(:Dataset) RETURN count(e)": 1,
    "MATCH (:Column)-[e:COLUMN_OF]->(:Asset) RETURN count(e)": 2,
    "MATCH (:Column)-[e:FEEDS]->(:Column) RETURN count(e)": 1,
}


def shape(store: GraphStore) -> dict[str, int]:
    return {q: count(store, q) for q in GRAPH_SHAPE}


def test_writer_builds_the_contracted_graph(store: GraphStore) -> None:
    write(store, *lineage(T0))
    assert shape(store) == GRAPH_SHAPE
    node = store.execute(
        "MATCH (n:Asset {urn: $u}) RETURN n.system, n.name, n.first_seen, n.last_seen, n.size",
        {"u": "s3://b/raw/x.csv"},
        write=False,
    ).rows[0]
    assert node == ["s3", "x.csv", T0, T0, 10]


def test_rewriting_changes_nothing_but_newer_sightings(store: GraphStore) -> None:
    write(store, *lineage(T0))
    write(store, *lineage(T0))  # a replayed window
    assert shape(store) == GRAPH_SHAPE
    runs = "MATCH (t:Transformation) RETURN t.runs, t.last_run_id, t.last_run_at"
    assert store.execute(runs, write=False).rows == [[1, f"run-{T0}", T0]]
    write(store, *lineage(T0 + 1000))  # a new run
    write(store, *lineage(T0 + 500))  # an older run, processed late
    assert shape(store) == GRAPH_SHAPE
    assert store.execute(runs, write=False).rows == [[2, f"run-{T0 + 1000}", T0 + 1000]]
    edge = store.execute(
        "MATCH (:Table {urn: $a})-[e:FLOWS_TO]->() RETURN e.runs, e.first_seen, e.last_seen, e.via",
        {"a": table("A").urn},
        write=False,
    ).rows
    assert edge == [[2, T0, T0 + 1000, ["snowflake://acme/query/h1"]]]


def test_via_collects_each_transformation_once(store: GraphStore) -> None:
    write(store, table("A"), table("C"))
    write(
        store,
        Flow(table("A").urn, table("C").urn, T0, "t1"),
        Flow(table("A").urn, table("C").urn, T0 + 1, "t2"),
        Flow(table("A").urn, table("C").urn, T0 + 2, "t1"),
        Flow(table("A").urn, table("C").urn, T0 + 3, None),
    )
    via = store.execute("MATCH ()-[e:FLOWS_TO]->() RETURN e.via, e.runs", write=False).rows
    assert via == [[["t1", "t2"], 4]]


def test_self_edges_are_dropped_and_counted(store: GraphStore) -> None:
    writer = write(
        store, table("A"), Flow(table("A").urn, table("A").urn, T0), ColumnFeed("x#a", "x#a", T0)
    )
    assert count(store, "MATCH ()-[e]->() RETURN count(e)") == 0
    assert writer.counts["self_edges_skipped"] == 2


def test_soft_delete_survives_older_sightings_only(store: GraphStore) -> None:
    write(store, table("A", T0))
    store.execute(
        "MATCH (n:Asset {urn: $u}) SET n.deleted_at = $t",
        {"u": table("A").urn, "t": T0 + 100},
        write=True,
    )
    deleted = "MATCH (n:Asset {urn: $u}) RETURN n.deleted_at"
    write(store, table("A", T0 + 50))  # a replayed, older sighting
    assert store.execute(deleted, {"u": table("A").urn}, write=False).rows == [[T0 + 100]]
    write(store, table("A", T0 + 200))  # seen again after the drop
    assert store.execute(deleted, {"u": table("A").urn}, write=False).rows == [[None]]


# Per node statement: the label to read it back by, the urn, and one row sighting it at `seen`.
NODE_SIGHTINGS: dict[str, tuple[str, str, Callable[[int], dict[str, object]]]] = {
    "merge_tables": (
        "Asset",
        table("A").urn,
        lambda seen: {"urn": table("A").urn, "system": "snowflake", "name": "A", "seen": seen,
                      "props": {}},
    ),
    "merge_datasets": (
        "Asset",
        "s3://b/raw",
        lambda seen: {"urn": "s3://b/raw", "system": "s3", "name": "raw", "seen": seen,
                      "props": {}},
    ),
    "merge_files": (
        "Asset",
        "s3://b/raw/x.csv",
        lambda seen: {"urn": "s3://b/raw/x.csv", "system": "s3", "name": "x.csv", "seen": seen,
                      "props": {"size": 10}},
    ),
    "s3_merge_datasets": (
        "Asset",
        "s3://b/raw",
        lambda seen: {"urn": "s3://b/raw", "name": "raw", "seen": seen},
    ),
    "merge_columns": (
        "Column",
        table("A").urn + "#ID",
        lambda seen: {"urn": table("A").urn + "#ID", "asset": table("A").urn, "name": "ID",
                      "seen": seen},
    ),
    "merge_transformations": (
        "Transformation",
        "snowflake://acme/query/h1",
        lambda seen: {"urn": "snowflake://acme/query/h1", "system": "snowflake", "name": "q",
                      "run_id": f"run-{seen}", "run_at": seen, "user": "ALICE"},
    ),
    "merge_job_runs": (
        "Transformation",
        "snowflake://acme/query/h1",
        lambda seen: {"urn": "snowflake://acme/query/h1", "system": "snowflake", "name": "q",
                      "times": [seen], "first": seen, "last": seen, "last_run_id": f"run-{seen}",
                      "last_user": "ALICE"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", NODE_SIGHTINGS)
def test_an_older_sighting_lowers_first_seen_only(store: GraphStore, name: str) -> None:
    """A late but older sighting (an inventory older than the first listing, a replayed window)
    moves first_seen back and leaves last_seen alone, as the edge statements do."""
    label, urn, row = NODE_SIGHTINGS[name]
    if name == "merge_columns":
        write(store, table("A", T0 + 100))  # the column's asset
    for seen in (T0 + 100, T0 + 200, T0):  # first sighting, a newer one, then an older one
        store.run(name, {"rows": [row(seen)], "bucket": "b", "region": None})
    got = store.execute(
        f"MATCH (n:{label} {{urn: $u}}) RETURN n.first_seen, n.last_seen", {"u": urn}, write=False
    ).rows
    assert got == [[T0, T0 + 200]]


@pytest.mark.parametrize("name", ["merge_tables", "merge_datasets", "merge_files"])
def test_an_older_sighting_keeps_the_newer_properties(store: GraphStore, name: str) -> None:
    urn = "snowflake://acme/DB.S.T" if name == "merge_tables" else "s3://b/raw/x"
    for seen, size in ((T0 + 100, 1), (T0 + 200, 2), (T0, 3)):  # the last one is the oldest
        row = {"urn": urn, "system": "s3", "name": "x", "seen": seen, "props": {"size": size}}
        store.run(name, {"rows": [row]})
    got = store.execute("MATCH (n:Asset {urn: $u}) RETURN n.size", {"u": urn}, write=False).rows
    assert got == [[2]]


def test_a_failed_batch_leaves_the_graph_as_it_was(store: GraphStore) -> None:
    write(store, table("A"))
    # The second row's property is a map, which no backend stores: the whole batch must fail.
    rows = [
        {"urn": "s3://b/ok", "system": "s3", "name": "ok", "seen": T0, "props": {}},
        {
            "urn": "s3://b/bad",
            "system": "s3",
            "name": "bad",
            "seen": T0,
            "props": {"nested": {"a": 1}},
        },
    ]
    with pytest.raises(QueryError):
        store.write_batches("merge_files", rows)
    assert count(store, "MATCH (n:Asset) RETURN count(n)") == 1


def test_unique_urn_is_enforced(store: GraphStore) -> None:
    """Writers MERGE on the urn; Neo4j also refuses a second node (FalkorDB has no constraint:
    its unique check crashes on some values, see tests/graph/test_unique_merge.py)."""
    write(store, table("A"))
    write(store, table("A", T0 + 1))
    assert count(store, "MATCH (n:Asset) RETURN count(n)") == 1
    if store.backend == "neo4j":
        with pytest.raises(QueryError):
            store.execute("CREATE (:Asset:Dataset {urn: $u})", {"u": table("A").urn}, write=True)
        assert count(store, "MATCH (n:Asset) RETURN count(n)") == 1


def test_init_schema_is_idempotent(store: GraphStore) -> None:
    store.init_schema()
    store.init_schema()
    write(store, table("A"))
    assert count(store, "MATCH (n:Asset) RETURN count(n)") == 1


def test_reads_refuse_writes(store: GraphStore) -> None:
    with pytest.raises(QueryError, match="pass --write"):
        store.execute("CREATE (:Asset {urn: 'x'})", write=False)
    # every node but Neo4j's schema marker (lineagegraph.graph.upgrade)
    assert count(store, "MATCH (n) WHERE NOT n:LineagegraphSchema RETURN count(n)") == 0


def test_invalid_cypher_is_a_query_error(store: GraphStore) -> None:
    with pytest.raises(QueryError, match="rejected the query"):
        store.execute("MATCH (n RETURN n", write=False)


def test_nodes_relationships_and_paths_decode_alike(store: GraphStore) -> None:
    write(store, table("A"), table("C"), Flow(table("A").urn, table("C").urn, T0))
    row = store.execute(
        "MATCH p = (a:Table {urn: $a})-[e:FLOWS_TO]->(c) RETURN a, e, p",
        {"a": table("A").urn},
        write=False,
    ).rows[0]
    node, rel, path = row
    assert node["_labels"] == ["Asset", "Table"] and node["urn"] == table("A").urn
    assert rel["_type"] == "FLOWS_TO" and rel["runs"] == 1
    assert [p.get("urn", p.get("_type")) for p in path] == [
        table("A").urn,
        "FLOWS_TO",
        table("C").urn,
    ]


def test_parameters_carry_awkward_strings(store: GraphStore) -> None:
    urn = 's3://b/it\'s "quoted"/ünï cødé/%41+b'
    write(store, Asset(urn, "File", "s3", "x", T0))
    assert store.execute("MATCH (n:File) RETURN n.urn", write=False).rows == [[urn]]


def test_repeated_keys_in_one_batch(store: GraphStore) -> None:
    """One batch that MERGEs the same node and edge several times, in time order."""
    store.batch_size = 100
    first = Asset("s3://b/f", "File", "s3", "f", T0, {"size": 1})
    again = Asset("s3://b/f", "File", "s3", "f", T0 + 5, {"size": 2})
    write(
        store,
        table("A"),
        table("C"),
        first,
        again,
        *[Flow(table("A").urn, table("C").urn, T0 + i, f"t{i % 2}") for i in range(4)],
    )
    assert store.execute("MATCH (n:File) RETURN n.size, n.last_seen", write=False).rows == [
        [2, T0 + 5]
    ]
    edge = store.execute("MATCH ()-[e:FLOWS_TO]->() RETURN e.runs, e.via", write=False).rows
    assert edge == [[4, ["t0", "t1"]]]
