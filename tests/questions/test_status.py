"""status: counts, coverage and freshness computed in the graph."""

from __future__ import annotations

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Flow, PartOf
from lineagegraph.pipeline import harvest_run
from lineagegraph.questions.status import HOUR_MS, graph_status

T0 = 1_700_000_000_000


def test_counts_coverage_and_freshness(store: GraphStore) -> None:
    writer = GraphWriter(store)
    writer.add_all([
        Asset("s3://b/read", "Dataset", "s3", "read", T0),
        Asset("s3://b/unread", "Dataset", "s3", "unread", T0),
        Asset("s3://b/read/1.csv", "File", "s3", "1.csv", T0),
        Asset("s3://b/read/2.csv", "File", "s3", "2.csv", T0),
        Asset("s3://b/unread/3.csv", "File", "s3", "3.csv", T0),
        PartOf("s3://b/read/1.csv", "s3://b/read"),
        PartOf("s3://b/read/2.csv", "s3://b/read"),
        PartOf("s3://b/unread/3.csv", "s3://b/unread"),
        Asset("snowflake://a/D.S.T", "Table", "snowflake", "T", T0),
        Asset("snowflake://a/D.S.GONE", "Table", "snowflake", "GONE", T0),
        Flow("s3://b/read", "snowflake://a/D.S.T", T0),
    ])  # fmt: skip
    writer.flush()
    store.execute("MATCH (t:Table {name: 'GONE'}) SET t.deleted_at = $t", {"t": T0}, write=True)
    with harvest_run(store, "s3", "b") as (run, _):
        run.watermark = T0
    now = store.read("status_freshness")[0]["last_success"]

    fresh = graph_status(store, now + 2 * HOUR_MS, max_age_hours=3, runs=5)
    assert {(a["kind"], a["system"]): (a["assets"], a["deleted"]) for a in fresh.assets} == {
        ("Dataset", "s3"): (2, 0),
        ("File", "s3"): (3, 0),
        ("Table", "snowflake"): (1, 1),
    }
    assert {c["kind"]: (c["assets"], c["with_lineage"], c["share"]) for c in fresh.coverage} == {
        "Dataset": (2, 1, 0.5),
        "Table": (1, 1, 1.0),
        "File": (3, 2, 0.6667),
    }
    by_system = {c["system"]: (c["assets"], c["with_lineage"], c["share"])
                 for c in fresh.coverage_by_system}  # fmt: skip
    assert by_system == {"s3": (2, 1, 0.5), "snowflake": (1, 1, 1.0)}  # files are not counted
    assert [(f["system"], f["scope"], f["age_hours"], f["stale"]) for f in fresh.freshness] == [
        ("s3", "b", 2.0, False)
    ]
    assert [(r["system"], r["status"], r["watermark"]) for r in fresh.runs] == [
        ("s3", "success", T0)
    ]

    stale = graph_status(store, now + 4 * HOUR_MS, max_age_hours=3, runs=5)
    assert stale.freshness[0]["stale"] is True


def test_a_failed_run_keeps_the_previous_watermark(store: GraphStore) -> None:
    from lineagegraph.pipeline import last_watermark

    with harvest_run(store, "snowflake", "acct") as (run, _):
        run.watermark = T0
    try:
        with harvest_run(store, "snowflake", "acct") as (run, writer):
            writer.add(Asset("snowflake://a/D.S.X", "Table", "snowflake", "X", T0))
            run.watermark = T0 + 1000
            raise RuntimeError("connection dropped")
    except RuntimeError:
        pass
    assert last_watermark(store, "snowflake", "acct") == T0
    failed = store.execute(
        "MATCH (h:HarvestRun {status: 'failed'}) RETURN h.error, h.watermark, h.count_merge_tables",
        write=False,
    ).rows
    assert failed == [["RuntimeError: connection dropped", None, 1]]
    # what was harvested before the failure is kept (idempotent), only the watermark is not
    assert store.execute("MATCH (t:Table) RETURN t.urn", write=False).rows == [
        ["snowflake://a/D.S.X"]
    ]
