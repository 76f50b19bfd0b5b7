"""OpenLineage dataQualityAssertions facets into :Check nodes, from events written by
openlineage-python's own client and file transport (what Great Expectations and dbt's
OpenLineage integration emit)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.quality import asset_quality

ORDERS = "snowflake://acme/RAW.PUBLIC.ORDERS"
SALES = "snowflake://acme/MARTS.PUBLIC.SALES"


def emit_validations(path: Path, runs: list[tuple[int, dict[str, bool]]]) -> None:
    """One validation job run per (day, {assertion: success}) through the real client: the
    assertions on RAW.PUBLIC.ORDERS (ID not_null and unique, a row count on the table, and a
    warn-only freshness check), in the input facet where the spec puts them."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import (
        InputDataset,
        Job,
        OutputDataset,
        Run,
        RunEvent,
        RunState,
    )
    from openlineage.client.facet_v2 import data_quality_assertions_dataset as dq
    from openlineage.client.transport.file import FileConfig, FileTransport

    client = OpenLineageClient(
        transport=FileTransport(FileConfig(log_file_path=str(path), append=True))
    )
    for day, success in runs:
        facet = dq.DataQualityAssertionsDatasetFacet(assertions=[
            dq.Assertion("not_null", success["not_null"], column="ID"),
            dq.Assertion("unique", success["unique"], column="ID", severity="error",
                         name="orders_id_unique"),
            dq.Assertion("row_count", success["row_count"]),
            dq.Assertion("freshness", success["freshness"], severity="warn"),
        ])  # fmt: skip
        run_id = f"0191d9a4-0000-7000-8000-00000000000{day}"
        for state in (RunState.START, RunState.COMPLETE):
            client.emit(RunEvent(
                eventType=state,
                eventTime=datetime(2024, 3, day, 6, 0, tzinfo=UTC).isoformat(),
                run=Run(runId=run_id),
                job=Job(namespace="great_expectations", name="orders_suite"),
                producer="https://github.com/lineagegraph/tests",
                inputs=[InputDataset("snowflake://acme", "RAW.PUBLIC.ORDERS",
                                     inputFacets={"dataQualityAssertions": facet})],
                outputs=[OutputDataset("snowflake://acme", "MARTS.PUBLIC.SALES")],
            ))  # fmt: skip


def checks(store: GraphStore) -> dict[str, tuple[str, str, str, int]]:
    rows = store.execute(
        "MATCH (c:Check)-[:CHECKS]->(t) RETURN c.urn, c.name, c.status, t.urn, c.at, c.run_id",
        write=False,
    ).rows
    return {urn: (name, status, target, run[-1:]) for urn, name, status, target, _, run in rows}


ALL_PASS = {"not_null": True, "unique": True, "row_count": True, "freshness": True}


def test_assertions_become_checks_on_the_dataset_and_its_columns(
    store: GraphStore, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    emit_validations(events, [(1, ALL_PASS), (2, ALL_PASS | {"unique": False, "freshness": False})])
    run, report = harvest_openlineage(store, events)
    assert report.problems == [] and run.error is None
    assert checks(store) == {
        f"{ORDERS}#ID::not_null": ("not_null", "pass", f"{ORDERS}#ID", "2"),
        f"{ORDERS}#ID::orders_id_unique": ("orders_id_unique", "fail", f"{ORDERS}#ID", "2"),
        f"{ORDERS}::row_count": ("row_count", "pass", ORDERS, "2"),
        f"{ORDERS}::freshness": ("freshness", "warn", ORDERS, "2"),
    }
    assert run.counts["merge_checks"] == 4  # the window kept each check's latest result
    assert asset_quality(store, [ORDERS, SALES]) == {ORDERS: "fail", SALES: "unknown"}


def test_an_older_validation_read_later_changes_nothing(store: GraphStore, tmp_path: Path) -> None:
    newer, older = tmp_path / "newer.jsonl", tmp_path / "older.jsonl"
    emit_validations(newer, [(5, ALL_PASS)])
    emit_validations(older, [(4, ALL_PASS | {"not_null": False})])
    harvest_openlineage(store, newer)
    harvest_openlineage(store, older)
    assert {status for _, status, _, _ in checks(store).values()} == {"pass"}
    assert {run for _, _, _, run in checks(store).values()} == {"5"}


def test_a_broken_facet_is_reported_and_the_event_kept(store: GraphStore, tmp_path: Path) -> None:
    event: dict[str, Any] = {
        "eventType": "COMPLETE", "eventTime": "2024-03-01T06:00:00Z",
        "run": {"runId": "r1"}, "job": {"namespace": "ge", "name": "suite"},
        "inputs": [{"namespace": "snowflake://acme", "name": "RAW.PUBLIC.ORDERS",
                    "facets": {"dataQualityAssertions": {"assertions": [{"success": "yes"}]}}}],
        "outputs": [{"namespace": "snowflake://acme", "name": "MARTS.PUBLIC.SALES"}],
    }  # fmt: skip
    legacy = json.loads(json.dumps(event))  # the facet among `facets`, as older producers do
    legacy["inputs"][0]["facets"]["dataQualityAssertions"] = {
        "assertions": [{"assertion": "not_null", "success": False, "column": "ID"}]
    }
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(event) + "\n" + json.dumps(legacy) + "\n")
    _, report = harvest_openlineage(store, path)
    assert report.problems == [
        f"{path}:1 inputs[0]: facet dataQualityAssertions skipped: "
        "assertions must be [{assertion, success, column?, severity?, name?}]"
    ]
    assert report.complete == 2
    assert checks(store) == {f"{ORDERS}#ID::not_null": ("not_null", "fail", f"{ORDERS}#ID", "1")}
    flows = store.execute("MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn", write=False).rows
    assert flows == [[ORDERS, SALES]]
