"""The worker thread and the naming rules, without a JVM: a bounded queue, errors contained."""

from __future__ import annotations

import threading

import pytest

from lineagegraph import identity
from lineagegraph.spark.actions import (
    AppInfo,
    DatasetRef,
    Naming,
    SparkAction,
    dataset_ref,
    urn_to_openlineage,
)
from lineagegraph.spark.listener import Counts, Worker
from lineagegraph.spark.plan import Captured, Node, Relation, Write, redact_jdbc_url

APP = AppInfo("app", "local-1")


def captured(n: int, path: str = "/tmp/out") -> Captured:
    root = Node(
        "x.InsertIntoHadoopFsRelationCommand", {}, [Node("x.LocalRelation", {}, [], ())], ()
    )
    write = Write("InsertIntoHadoopFsRelationCommand", Relation("files", (path,)), "Append", ())
    return Captured("command", n, 1_000 + n, 1, root, {}, write)


class BlockingSink:
    def __init__(self) -> None:
        self.release = threading.Event()
        self.actions: list[SparkAction] = []

    def action(self, action: SparkAction) -> None:
        self.release.wait(10)
        self.actions.append(action)

    def failure(self, captured: Captured) -> None: ...
    def flush(self, timeout: float) -> bool:
        return True

    def close(self) -> None: ...


class BrokenSink(BlockingSink):
    def action(self, action: SparkAction) -> None:
        raise RuntimeError("sink down")


def test_a_full_queue_drops_and_counts_instead_of_waiting() -> None:
    sink = BlockingSink()
    counts = Counts()
    worker = Worker(APP, Naming(), [sink], queue_size=2, counts=counts)
    for n in range(6):  # one in the sink, two queued, the rest dropped at once
        worker.offer(captured(n, f"/tmp/out{n}"))
    sink.release.set()
    assert worker.flush(10)
    worker.stop(10)
    dropped = counts.snapshot()["actions_dropped"]
    assert dropped >= 3 and len(sink.actions) + dropped == 6


def test_a_failing_sink_is_logged_and_the_worker_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    counts = Counts()
    worker = Worker(APP, Naming(), [BrokenSink()], queue_size=10, counts=counts)
    worker.offer(captured(1))
    worker.offer(captured(2, "/tmp/other"))
    assert worker.flush(10)
    worker.stop(10)
    assert counts.snapshot()["worker_errors"] == 2
    assert "lineage worker failed on one action" in caplog.text


def test_a_nested_command_is_recorded_once() -> None:
    sink = BlockingSink()
    sink.release.set()
    counts = Counts()
    worker = Worker(APP, Naming(), [sink], queue_size=10, counts=counts)
    inner, outer = captured(2), captured(1)  # the outer started first and ends last
    outer.start_ms = inner.start_ms - 5
    worker.offer(inner)
    worker.offer(outer)
    later = captured(3)
    later.start_ms = inner.start_ms + 100  # the same output written again: a new run
    worker.offer(later)
    assert worker.flush(10)
    worker.stop(10)
    assert [a.execution_id for a in sink.actions] == [2, 3]
    assert counts.snapshot()["actions_nested"] == 1


@pytest.mark.parametrize(
    "urn",
    [
        "file:///tmp/out",
        "s3://b/sales/orders",
        "s3://b",
        "snowflake://acct/DB.S.T",
        "derby://memory:db/PEOPLE",
        "spark://spark_catalog/db.t",
        "postgres://h:5432/shop.public.o",
    ],
)
def test_emitted_openlineage_names_map_back_to_the_same_urn(urn: str) -> None:
    assert identity.openlineage_urn(*urn_to_openlineage(urn)) == urn


def test_snowflake_and_jdbc_options_name_tables() -> None:
    options = (
        ("dbtable", "orders"),
        ("sfdatabase", "analytics"),
        ("sfschema", '"Raw"'),
        ("sfurl", "myorg-acct.snowflakecomputing.com"),
    )
    ref = dataset_ref(Relation("snowflake", options=options), Naming())
    assert ref == DatasetRef("snowflake://myorg-acct/ANALYTICS.Raw.ORDERS", "Table")
    query = Relation("snowflake", options=(("query", "select 1"), ("sfurl", "a.x")))
    assert dataset_ref(query, Naming()) is None  # a query names no table
    jdbc = Relation(
        "jdbc", options=(("dbtable", "public.orders"), ("url", "jdbc:postgresql://db:5432/shop"))
    )
    assert dataset_ref(jdbc, Naming()) == DatasetRef(
        "postgresql://db:5432/shop.public.orders", "Table"
    )
    assert redact_jdbc_url("jdbc:mysql://u:pw@h/db;password=x") == "jdbc:mysql://h/db"
