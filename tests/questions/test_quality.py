"""Check results on the graph (cypher/merge_checks.cypher) and an asset's quality."""

from __future__ import annotations

from typing import get_args

import pytest

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import RANK, Asset, CheckResult, CheckStatus, Column, Item
from lineagegraph.questions.quality import asset_quality, checks_of, quality_counts, worst

T0 = 1_700_000_000_000
ORDERS = "snowflake://acme/RAW.PUBLIC.ORDERS"
SALES = "snowflake://acme/MARTS.PUBLIC.SALES"


def _write(store: GraphStore, items: list[Item]) -> None:
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()


def _check(
    status: CheckStatus,
    at: int,
    *,
    urn: str = "test.orders.unique_id",
    target: str = ORDERS + "#ID",
    failures: int | None = None,
    run_id: str = "r",
) -> CheckResult:
    return CheckResult(urn, "dbt", "unique_id", target, status, at, run_id, failures)


def _stored(store: GraphStore, urn: str = "test.orders.unique_id") -> dict[str, object]:
    rows = store.execute(
        "MATCH (c:Check {urn: $u})-[:CHECKS]->(t) RETURN c.status AS status, c.at AS at, "
        "c.failures AS failures, c.run_id AS run_id, c.system AS system, t.urn AS target",
        {"u": urn},
        write=False,
    ).records()
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture
def orders(store: GraphStore) -> GraphStore:
    _write(store, [
        Asset(ORDERS, "Table", "snowflake", "ORDERS", T0),
        Asset(SALES, "Table", "snowflake", "SALES", T0),
        Column(ORDERS + "#ID", ORDERS, "ID", T0),
    ])  # fmt: skip
    return store


def test_a_check_node_per_urn_on_its_column(orders: GraphStore) -> None:
    _write(orders, [_check("fail", T0, failures=3, run_id="run-1")])
    assert _stored(orders) == {
        "status": "fail",
        "at": T0,
        "failures": 3,
        "run_id": "run-1",
        "system": "dbt",
        "target": ORDERS + "#ID",
    }
    _write(orders, [_check("pass", T0 + 10, failures=0, run_id="run-2")])
    assert _stored(orders)["status"] == "pass"
    assert _stored(orders)["run_id"] == "run-2"
    count = orders.execute("MATCH (c:Check) RETURN count(c) AS n", write=False).records()
    assert count == [{"n": 1}]


def test_an_older_result_never_overwrites_a_newer_one(orders: GraphStore) -> None:
    _write(orders, [_check("pass", T0 + 10, failures=0, run_id="new")])
    _write(orders, [_check("fail", T0, failures=7, run_id="old")])
    assert _stored(orders) == {
        "status": "pass",
        "at": T0 + 10,
        "failures": 0,
        "run_id": "new",
        "system": "dbt",
        "target": ORDERS + "#ID",
    }


def test_older_and_newer_in_one_batch_in_either_order(orders: GraphStore) -> None:
    old, new = _check("fail", T0, run_id="old"), _check("pass", T0 + 1, run_id="new")
    _write(orders, [new, old])
    assert _stored(orders)["run_id"] == "new"
    _write(orders, [old, new])
    assert _stored(orders)["run_id"] == "new"


@pytest.mark.parametrize("order", ["pass first", "fail first"])
def test_the_same_timestamp_twice(orders: GraphStore, order: str) -> None:
    """A replay changes nothing; two different results at one time keep the worse, whichever
    came first, so the graph does not depend on the order files are read in."""
    passed, failed = _check("pass", T0, run_id="a"), _check("fail", T0, failures=2, run_id="b")
    first, second = (passed, failed) if order == "pass first" else (failed, passed)
    _write(orders, [first])
    _write(orders, [first])  # the same result again: nothing changes
    assert _stored(orders)["run_id"] == first.run_id
    _write(orders, [second])
    assert _stored(orders) == {
        "status": "fail",
        "at": T0,
        "failures": 2,
        "run_id": "b",
        "system": "dbt",
        "target": ORDERS + "#ID",
    }


def test_same_time_and_status_more_failures_wins(orders: GraphStore) -> None:
    _write(orders, [_check("fail", T0, failures=5, run_id="five")])
    _write(orders, [_check("fail", T0, failures=1, run_id="one")])
    assert _stored(orders)["run_id"] == "five"


def test_a_check_whose_target_is_missing_is_left_out(orders: GraphStore) -> None:
    _write(orders, [_check("fail", T0, target=ORDERS + "#NOPE")])
    count = orders.execute("MATCH (c:Check) RETURN count(c) AS n", write=False).records()
    assert count == [{"n": 0}]


def test_quality_is_the_worst_of_the_asset_and_its_columns(orders: GraphStore) -> None:
    assert asset_quality(orders, [ORDERS]) == {ORDERS: "unknown"}  # no check in the graph yet
    _write(orders, [
        _check("pass", T0, urn="orders.not_empty", target=ORDERS),
        _check("warn", T0, urn="orders.id.unique"),
        _check("skipped", T0, urn="sales.fresh", target=SALES),
    ])  # fmt: skip
    assert asset_quality(orders, [ORDERS, SALES]) == {ORDERS: "warn", SALES: "unknown"}
    by_urn = {c.urn: c for c in checks_of(orders, [ORDERS])}
    assert by_urn["orders.id.unique"].target == ORDERS + "#ID"
    assert by_urn["orders.id.unique"].asset == ORDERS
    assert by_urn["orders.not_empty"].target == ORDERS
    assert quality_counts(orders) == {"unknown": 1, "pass": 0, "warn": 1, "error": 0, "fail": 0}

    _write(orders, [_check("error", T0 + 1, urn="sales.fresh", target=SALES)])
    assert asset_quality(orders, [SALES]) == {SALES: "error"}
    orders.execute("MATCH (a:Asset {urn: $u}) SET a.deleted_at = 1", {"u": SALES}, write=True)
    assert quality_counts(orders)["error"] == 0  # deleted assets are not counted


def test_statuses_are_ranked_best_to_worst() -> None:
    assert set(RANK) == set(get_args(CheckStatus))
    assert sorted(RANK, key=RANK.__getitem__) == ["skipped", "pass", "warn", "error", "fail"]
    assert worst(["pass", "fail", "error"]) == "fail"
    assert worst(["skipped", "skipped"]) == "unknown"
