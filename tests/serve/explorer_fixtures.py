"""A `lineagegraph serve` over a store harvested from OpenLineage events (three systems, three
jobs, a failing quality check) plus S3 objects for the orphan report: the explorer's tests."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_fixtures import Server

from lineagegraph.graph.store import open_store
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.settings import GraphSettings
from lineagegraph.values.pricing import GB

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))
from lake import DAY, Lake

SF = "snowflake://acme"
RAW = "s3://raw/orders"
ORDERS = f"{SF}/DB.S.ORDERS"
DAILY = f"{SF}/DB.S.DAILY_SALES"
EXPORT = "s3://exports/daily"
OLD = "s3://exports/old"  # deleted: drawn only on request


IMG = "<img src=x onerror=alert(1)>"  # a column name that must show as text
CTRL = "tab\there\x1f"  # and one with control characters


def _event(
    job: str,
    inputs: list[dict[str, Any]],
    outputs: list[tuple[str, str]],
    at: str,
    facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {"eventType": "COMPLETE", "eventTime": at, "run": {"runId": f"run-{job}-{at}"},
            "job": {"namespace": "airflow", "name": job}, "producer": "tests",
            "inputs": inputs,
            "outputs": [{"namespace": ns, "name": name, "facets": facets or {}}
                        for ns, name in outputs]}  # fmt: skip


def _lineage(namespace: str, name: str, **fields: str) -> dict[str, Any]:
    """Output facets: a columnLineage facet, each field fed by one field of namespace/name."""
    return {
        "columnLineage": {
            "fields": {
                field: {"inputFields": [{"namespace": namespace, "name": name, "field": source}]}
                for field, source in fields.items()
            }
        }
    }


# Column lineage along the chain (field <- source field), as each job's output facet gives it:
# raw.amount, raw.ts -> ORDERS.AMOUNT, ORDERED_AT -> DAILY_SALES.TOTAL, DAY; ORDERS.<IMG> ->
# DAILY_SALES.NOTE; DAILY_SALES.TOTAL, DAY -> exports/daily total, day; TOTAL -> exports/old.
# ORDERS also has a column without lineage (CTRL) from its schema facet.
LOAD_FACETS = _lineage("s3://raw", "orders", AMOUNT="amount", ORDERED_AT="ts") | {
    "schema": {
        "fields": [{"name": n, "type": "string"} for n in ("AMOUNT", "ORDERED_AT", IMG, CTRL)]
    },
}
MART_FACETS = _lineage(SF, "DB.S.ORDERS", TOTAL="AMOUNT", DAY="ORDERED_AT", NOTE=IMG)
EXPORT_FACETS = _lineage(SF, "DB.S.DAILY_SALES", total="TOTAL", day="DAY")


def events() -> list[dict[str, Any]]:
    """raw (S3) -> load -> ORDERS -> mart -> DAILY_SALES -> export -> exports (S3), and an
    archive job writing OLD (deleted later); the mart's run asserts on ORDERS, and one
    assertion (on a column) fails. Every job's output has column lineage."""
    checks = {
        "dataQualityAssertions": {
            "assertions": [
                {"assertion": "not_null", "column": "AMOUNT", "success": False},
                {"assertion": "row_count", "success": True},
            ]
        }
    }
    raw = [{"namespace": "s3://raw", "name": "orders"}]
    daily = [{"namespace": SF, "name": "DB.S.DAILY_SALES"}]
    return [
        _event("load", raw, [(SF, "DB.S.ORDERS")], "2024-05-01T10:00:00Z", LOAD_FACETS),
        _event("load", raw, [(SF, "DB.S.ORDERS")], "2024-05-02T10:00:00Z", LOAD_FACETS),
        _event("mart", [{"namespace": SF, "name": "DB.S.ORDERS", "inputFacets": checks}],
               [(SF, "DB.S.DAILY_SALES")], "2024-05-02T11:00:00Z", MART_FACETS),
        _event("export", daily, [("s3://exports", "daily")], "2024-05-02T12:00:00Z",
               EXPORT_FACETS),
        _event("archive", daily, [("s3://exports", "old")], "2024-05-02T12:00:00Z",
               _lineage(SF, "DB.S.DAILY_SALES", total="TOTAL")),
    ]  # fmt: skip


def s3_objects(lake: Lake) -> None:
    """Four objects in two buckets; only the mart is read (yesterday), so with the default
    90-day lookback three are orphaned, the biggest (3 GiB) in bucket `other`."""
    lake.obj("lake", "raw/orders/part-0.csv", size=2 * GB)
    lake.obj("lake", "raw/events/x.json", size=GB, storage_class="GLACIER")
    lake.obj("lake", "marts/sales/part-0.parquet", size=GB)
    lake.obj("other", "x/y.csv", size=3 * GB)
    lake.read(lake.dataset("s3a://lake/marts/"), at=int(time.time() * 1000) - DAY)
    lake.write()


@pytest.fixture
def explorer_server(tmp_path: Path) -> Iterator[Server]:
    data_dir = tmp_path / "store"
    source = tmp_path / "events.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events()), encoding="utf-8")
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.init_schema()
        _, report = harvest_openlineage(store, source, full=True)
        lake = Lake(store)
        lake.delete(OLD, at=int(time.time() * 1000))
        s3_objects(lake)
    assert not report.problems, report.problems
    with Server(data_dir).running() as server:
        yield server
