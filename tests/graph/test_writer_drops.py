"""A row the graph cannot take (its endpoint is missing) is written later or counted, never lost.

The store fixture's batch size is 3, so every test here crosses batch boundaries.
"""

from __future__ import annotations

from contextlib import nullcontext
from itertools import pairwise

import pytest

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import (
    Asset,
    CheckResult,
    Column,
    ColumnFeed,
    Flow,
    Item,
    PartOf,
    Transformation,
)
from lineagegraph.pipeline import harvest_run

T0 = 1_700_000_000_000


def table(name: str) -> Asset:
    return Asset(f"snowflake://acme/DB.S.{name}", "Table", "snowflake", name, T0)


def column(asset: Asset, name: str) -> Column:
    return Column(f"{asset.urn}#{name}", asset.urn, name, T0)


def count(store: GraphStore, cypher: str) -> int:
    return int(store.execute(cypher, write=False).rows[0][0])


def backwards() -> list[Item]:
    """Lineage of six tables with everything that needs a node yielded before that node."""
    tables = [table(f"T{i}") for i in range(6)]
    cols = [column(t, "ID") for t in tables]
    dataset = Asset("s3://lake/events/", "Dataset", "s3", "events", T0)
    file = Asset("s3://lake/events/a.parquet", "File", "s3", "a.parquet", T0)
    job = Transformation(
        "snowflake://acme/query/h1",
        "snowflake",
        "q",
        "r1",
        T0,
        None,
        (tables[0].urn,),
        (tables[1].urn,),
    )
    check = CheckResult("dbt://p/test.not_null", "dbt", "not_null", cols[5].urn, "fail", T0, "r")
    needing: list[Item] = [
        check,
        *(ColumnFeed(a.urn, b.urn, T0) for a, b in pairwise(cols)),
        *(Flow(a.urn, b.urn, T0) for a, b in pairwise(tables)),
        PartOf(file.urn, dataset.urn),
        *cols,
        job,
    ]
    return [*needing, file, dataset, *tables]


def test_items_before_what_they_need_are_all_written(store: GraphStore) -> None:
    writer = GraphWriter(store)
    writer.add_all(backwards())
    writer.finish()

    assert count(store, "MATCH (:Column)-[:COLUMN_OF]->(:Asset) RETURN count(*)") == 6
    assert count(store, "MATCH (:Column)-[:FEEDS]->(:Column) RETURN count(*)") == 5
    assert count(store, "MATCH (:Asset)-[:FLOWS_TO]->(:Asset) RETURN count(*)") == 5
    assert count(store, "MATCH (:File)-[:PART_OF]->(:Dataset) RETURN count(*)") == 1
    assert count(store, "MATCH (:Transformation)-[:READS_FROM]->(:Asset) RETURN count(*)") == 1
    assert count(store, "MATCH (:Transformation)-[:WRITES_TO]->(:Asset) RETURN count(*)") == 1
    assert count(store, "MATCH (:Check)-[:CHECKS]->(:Column) RETURN count(*)") == 1
    assert writer.counts["merge_columns"] == 6
    assert writer.counts["merge_column_feeds"] == 5
    assert writer.counts["merge_flows"] == 5
    assert writer.counts["merge_checks"] == 1
    assert not [k for k in writer.counts if k.startswith("dropped_")]
    assert writer.warnings() == []


def test_rows_whose_endpoint_never_comes_are_counted_and_named(store: GraphStore) -> None:
    t, ghost = table("T"), table("GHOST")
    writer = GraphWriter(store)
    writer.add_all([
        column(ghost, "A"), column(ghost, "B"), Flow(t.urn, ghost.urn, T0),
        CheckResult("dbt://p/test.unique", "dbt", "unique", f"{ghost.urn}#A", "pass", T0, "r"),
        t, column(t, "ID"),
    ])  # fmt: skip
    writer.finish()

    assert writer.counts["merge_columns"] == 1  # T's column; GHOST's two are not in the graph
    assert writer.counts["dropped_columns"] == 2
    assert writer.counts["merge_flows"] == 0
    assert writer.counts["dropped_flows"] == 1
    assert writer.counts["dropped_checks"] == 1
    assert count(store, "MATCH (c:Column) RETURN count(c)") == 1
    lines = writer.warnings()
    assert lines[0] == (
        f"columns not written: 2, what they need is not in the graph, e.g. Asset {ghost.urn!r} "
        "(count_dropped_columns)"
    )
    assert f"Asset {ghost.urn!r}" in lines[1] and "(count_dropped_flows)" in lines[1]
    assert f"Asset or Column '{ghost.urn}#A'" in lines[2]


def test_write_batches_returns_the_rows_written(store: GraphStore) -> None:
    t = table("T")
    store.write_batches(
        "merge_tables",
        [{"urn": t.urn, "system": "snowflake", "name": "T", "seen": T0, "props": {}}],
        ("urn",),
    )
    rows = [
        {"urn": f"{u}#C{i}", "asset": u, "name": f"C{i}", "seen": T0}
        for i, u in enumerate([t.urn, "snowflake://acme/DB.S.NONE"] * 4)
    ]
    assert store.write_batches("merge_columns", rows, ("urn",)) == 4


def test_a_run_that_drops_rows_is_partial_and_says_what(store: GraphStore) -> None:
    ghost = table("GHOST")
    with harvest_run(store, "test", "drops") as (run, writer):
        writer.add_all([column(ghost, "ID"), table("T")])
        run.watermark = T0
    assert run.status == "partial"
    assert run.warnings == [
        f"columns not written: 1, what they need is not in the graph, e.g. Asset {ghost.urn!r} "
        "(count_dropped_columns)"
    ]
    stored = store.execute(
        "MATCH (h:HarvestRun {id: $id}) RETURN properties(h) AS h", {"id": run.id}, write=False
    ).records()[0]["h"]
    assert stored["status"] == "partial"
    assert stored["count_dropped_columns"] == 1
    assert stored["count_merge_tables"] == 1
    assert ghost.urn in stored["error"]
    assert stored.get("watermark") is None  # the next run reads it again


@pytest.mark.parametrize("fail", [False, True])
def test_a_failing_run_still_writes_what_waits(store: GraphStore, fail: bool) -> None:
    t = table("T")
    raises = pytest.raises(RuntimeError) if fail else nullcontext()
    with raises, harvest_run(store, "test", "late") as (run, writer):
        writer.add_all([column(t, "ID"), column(t, "NAME"), Flow(t.urn, t.urn + "2", T0)])
        writer.add(t)
        if fail:
            raise RuntimeError("source broke")
    assert count(store, "MATCH (:Column)-[:COLUMN_OF]->(:Asset) RETURN count(*)") == 2
    assert run.status == ("failed" if fail else "partial")
    assert run.counts["dropped_flows"] == 1
