"""A `lineagegraph serve` over a store harvested from OpenLineage events (three systems, three
jobs, a failing quality check) plus S3 objects for the orphan report: the explorer's tests."""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_fixtures import Server

from lineagegraph.graph.store import open_store
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.reports.pricing import GB
from lineagegraph.settings import GraphSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))
from lake import DAY, Lake

SF = "snowflake://acme"
RAW = "s3://raw/orders"
ORDERS = f"{SF}/DB.S.ORDERS"
DAILY = f"{SF}/DB.S.DAILY_SALES"
EXPORT = "s3://exports/daily"
OLD = "s3://exports/old"  # deleted: drawn only on request


def _event(job: str, inputs: list[dict[str, Any]], outputs: list[tuple[str, str]],
           at: str) -> dict[str, Any]:  # fmt: skip
    return {"eventType": "COMPLETE", "eventTime": at, "run": {"runId": f"run-{job}-{at}"},
            "job": {"namespace": "airflow", "name": job}, "producer": "tests",
            "inputs": inputs,
            "outputs": [{"namespace": ns, "name": name} for ns, name in outputs]}  # fmt: skip


def events() -> list[dict[str, Any]]:
    """raw (S3) -> load -> ORDERS -> mart -> DAILY_SALES -> export -> exports (S3), and an
    archive job writing OLD (deleted later); the mart's run asserts on ORDERS, and one
    assertion (on a column) fails."""
    checks = {"dataQualityAssertions": {"assertions": [
        {"assertion": "not_null", "column": "AMOUNT", "success": False},
        {"assertion": "row_count", "success": True},
    ]}}  # fmt: skip
    raw = [{"namespace": "s3://raw", "name": "orders"}]
    return [
        _event("load", raw, [(SF, "DB.S.ORDERS")], "2024-05-01T10:00:00Z"),
        _event("load", raw, [(SF, "DB.S.ORDERS")], "2024-05-02T10:00:00Z"),
        _event("mart", [{"namespace": SF, "name": "DB.S.ORDERS", "inputFacets": checks}],
               [(SF, "DB.S.DAILY_SALES")], "2024-05-02T11:00:00Z"),
        _event("export", [{"namespace": SF, "name": "DB.S.DAILY_SALES"}],
               [("s3://exports", "daily")], "2024-05-02T12:00:00Z"),
        _event("archive", [{"namespace": SF, "name": "DB.S.DAILY_SALES"}],
               [("s3://exports", "old")], "2024-05-02T12:00:00Z"),
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
    server = Server(data_dir)
    server.start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill(signal.SIGTERM)
