"""OpenLineage tags facets sent by openlineage-python's real client and file transport: a
dataset's tags and a column's (the facet's `field`) become classifications (source
openlineage), the newest statement wins in any arrival order, and the graph written through the
RunReducer is the one written event by event."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openlineage_fixtures import event_by_event
from snowflake_fixtures import dump_graph

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.openlineage import (
    harvest_openlineage,
)

ORDERS = "postgres://db:5432/shop.public.orders"
CUSTOMERS = "file:///data/mart/customers"


def emit(path: Path) -> None:
    """Three runs, the middle one sent last: its tags are older than the third run's."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import (
        InputDataset,
        Job,
        OutputDataset,
        Run,
        RunEvent,
        RunState,
    )
    from openlineage.client.facet_v2 import tags_dataset as tg
    from openlineage.client.transport.file import FileConfig, FileTransport

    client = OpenLineageClient(
        transport=FileTransport(FileConfig(log_file_path=str(path), append=True))
    )

    def run(day: int, level: str, tags: list[Any]) -> RunEvent:
        source = tg.TagsDatasetFacet(
            tags=[tg.TagsDatasetFacetFields("pii", "email", "CONFIG", "E-Mail ✉"), *tags]
        )
        output = tg.TagsDatasetFacet(
            tags=[tg.TagsDatasetFacetFields("classification", level, "USER")]
        )
        return RunEvent(
            eventType=RunState.COMPLETE,
            eventTime=datetime(2024, 3, day, 6, 0, tzinfo=UTC).isoformat(),
            run=Run(runId=f"0191d9a4-0000-7000-8000-00000000000{day}"),
            job=Job(namespace="airflow", name="mart.customers"),
            producer="https://github.com/lineagegraph/tests",
            inputs=[
                InputDataset("postgres://db:5432", "shop.public.orders", facets={"tags": source})
            ],
            outputs=[OutputDataset("file", "/data/mart/customers", facets={"tags": output})],
        )

    client.emit(run(1, "internal", []))
    client.emit(run(3, "confidential", [tg.TagsDatasetFacetFields("owner", "", None)]))
    client.emit(run(2, "public", []))


def tags(store: GraphStore) -> list[list[Any]]:
    return store.execute(
        "MATCH (g:Tag)-[:TAGS]->(t) RETURN t.urn, g.source, g.key, g.value, g.by, g.reason,"
        " g.at, g.first_seen ORDER BY t.urn, g.key",
        write=False,
    ).rows


def test_dataset_and_column_tags_become_classifications(store: GraphStore, tmp_path: Path) -> None:
    emit(tmp_path / "events.jsonl")
    run, report = harvest_openlineage(store, tmp_path / "events.jsonl")
    assert run.status == "success" and not report.problems
    day = {d: int(datetime(2024, 3, d, 6, tzinfo=UTC).timestamp() * 1000) for d in (1, 2, 3)}
    run3 = "0191d9a4-0000-7000-8000-000000000003"
    assert tags(store) == [
        [CUSTOMERS, "openlineage", "classification", "confidential", run3,
         "OpenLineage tags facet (USER)", day[3], day[1]],
        [ORDERS, "openlineage", "owner", None, run3, "OpenLineage tags facet", day[3], day[3]],
        [ORDERS + "#E-Mail ✉", "openlineage", "pii", "email", run3,
         "OpenLineage tags facet (CONFIG)", day[3], day[1]],
    ]  # fmt: skip
    assert run.counts["facets_ignored"] == 0  # the tags facet is read, not skipped


def test_reduced_tags_equal_event_by_event(store: GraphStore, tmp_path: Path) -> None:
    emit(tmp_path / "events.jsonl")
    event_by_event(store, tmp_path / "events.jsonl")
    once = dump_graph(store)
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    harvest_openlineage(store, tmp_path / "events.jsonl")
    assert dump_graph(store) == once


def test_a_broken_tags_facet_is_reported_and_the_event_kept(
    store: GraphStore, tmp_path: Path
) -> None:
    event = (
        '{"eventType": "COMPLETE", "eventTime": "2024-03-01T06:00:00Z", "producer": "p",'
        ' "run": {"runId": "r1"}, "job": {"namespace": "n", "name": "j"}, "inputs": [],'
        ' "outputs": [{"namespace": "file", "name": "/o", "facets": {"tags": {"tags": [{"value":'
        ' "x"}]}}}, {"namespace": "file", "name": "/p", "facets": {"tags": {"tags": [{"key":'
        ' "pii", "value": "x", "field": "a#b"}]}}}]}'
    )
    (tmp_path / "e.jsonl").write_text(event + "\n")
    _, report = harvest_openlineage(store, tmp_path / "e.jsonl")
    assert any("facet tags skipped: tags must be [{key, value" in p for p in report.problems)
    assert any("facet tags skipped" in p and "'#'" in p for p in report.problems)
    assert tags(store) == []
    assert store.execute("MATCH (a:Asset) RETURN count(a)", write=False).rows == [[2]]
