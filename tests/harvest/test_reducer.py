"""The one RunReducer, fed by OpenLineage (the Snowflake side: test_snowflake_rows): the graph
it writes equals the one written event by event, in arrival order, also when events come out of
time order and windows split a job's runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openlineage_fixtures import event_by_event
from snowflake_fixtures import dump_graph

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest import openlineage
from lineagegraph.harvest.openlineage import (
    harvest_openlineage,
)

DATA = Path(__file__).parent / "data" / "openlineage"


def event(day: int, hour: int, job: str, inputs: list[str], output: str, **facets: Any) -> str:
    return json.dumps({
        "eventType": "COMPLETE", "eventTime": f"2024-03-{day:02d}T{hour:02d}:00:00Z",
        "producer": "https://example.com/etl", "run": {"runId": f"{job}-{day}-{hour}"},
        "job": {"namespace": "etl", "name": job},
        "inputs": [{"namespace": "s3://lake", "name": name} for name in inputs],
        "outputs": [{"namespace": "s3://lake", "name": output, "facets": facets}],
    })  # fmt: skip


def schema(*names: str) -> dict[str, Any]:
    return {"schema": {"fields": [{"name": n, "type": "string"} for n in names]}}


def lineage(column: str, source: str, field: str, *masked: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"namespace": "s3://lake", "name": source, "field": field}
    if masked:
        entry["transformations"] = [
            {
                "type": "DIRECT",
                "subtype": "TRANSFORMATION",
                "description": f"{f}(x)",
                "masking": True,
            }
            for f in masked
        ]
    return {"columnLineage": {"fields": {column: {"inputFields": [entry]}}}}


def out_of_order_events(path: Path) -> None:
    """A job's runs out of time order and repeated at the same time, a dataset whose props and
    columns change between runs, a job reading its own output."""
    lines = [
        event(3, 6, "daily", ["raw/orders", "raw/customers"], "mart/daily",
              **schema("id", "total"), **lineage("total", "raw/orders", "amount")),
        event(1, 6, "daily", ["raw/orders"], "mart/daily", **schema("id")),
        event(2, 6, "daily", ["raw/orders"], "mart/daily",
              **lineage("total", "raw/orders", "price")),
        event(3, 6, "daily", ["raw/orders"], "mart/daily"),  # the same time again
        event(4, 1, "merge", ["mart/daily"], "mart/daily"),  # reads what it writes
        event(2, 7, "export", ["mart/daily"], "export/daily",
              symlinks={"identifiers": [{"namespace": "file", "name": "x", "type": "TABLE"}]}),
        event(5, 7, "export", ["mart/daily"], "export/daily",
              symlinks={"identifiers": [{"namespace": "file", "name": "y", "type": "TABLE"}]}),
        event(1, 1, "export", ["mart/daily"], "export/daily"),
        # masked, then plain, then masked by another function out of order
        event(2, 1, "mask", ["raw/customers"], "mart/masked",
              **lineage("hash", "raw/customers", "email", "SHA2")),
        event(3, 1, "mask", ["raw/customers"], "mart/masked",
              **lineage("hash", "raw/customers", "email")),
        event(1, 1, "mask", ["raw/customers"], "mart/masked",
              **lineage("hash", "raw/customers", "email", "MD5")),
        event(1, 2, "count", ["raw/customers"], "mart/counted",
              **lineage("n", "raw/customers", "email", "COUNT")),
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("window", [1, 3, 1000])
@pytest.mark.parametrize("source", ["out-of-order", "spark-agent"])
def test_reduced_events_write_the_same_graph(
    store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int, source: str
) -> None:
    path = tmp_path / "events.jsonl"
    if source == "out-of-order":
        out_of_order_events(path)
    else:
        path.write_bytes((DATA / "spark_agent.jsonl").read_bytes())
    monkeypatch.setattr(openlineage, "WINDOW_EVENTS", window)
    # Out of time order, when edges stopped depends on how the runs were windowed: a run older
    # than one already written stops nothing (docs/history.md); in time order it is exact.
    exact = source != "out-of-order" or window == 1
    event_by_event(store, path)
    once = dump_graph(store, history=exact)
    event_by_event(store, path)
    twice = dump_graph(store, history=exact)
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    harvest_openlineage(store, path, full=True)
    assert dump_graph(store, history=exact) == once
    harvest_openlineage(store, path, full=True)
    assert dump_graph(store, history=exact) == twice
    if source == "out-of-order":
        runs = store.execute(
            "MATCH (t:Transformation) RETURN t.name, t.runs ORDER BY t.name", write=False
        ).rows
        # a run older than the newest one seen before it does not count, as event by event
        assert runs == [["count", 1], ["daily", 1], ["export", 2], ["mask", 2], ["merge", 1]]
        feeds = store.execute(
            "MATCH (a)-[e:FEEDS]->(b) WHERE a.urn ENDS WITH '#email' RETURN b.urn, e.masked_by,"
            " e.plain ORDER BY b.urn",
            write=False,
        ).rows
        assert feeds == [
            ["s3://lake/mart/counted#n", ["COUNT"], False],
            ["s3://lake/mart/masked#hash", ["SHA2", "MD5"], True],
        ]
