"""S3 deletions stop lineage: a complete scan that leaves no object under a dataset that lineage
runs through deletes it as of the scan, and its lineage edges stop then (docs/history.md); a
partial scan deletes nothing. Lineage from Spark-shaped OpenLineage events (namespace
`s3://bucket`); objects listed from moto's real S3 server, or from S3 Inventory reports on it."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient
from s3_fixtures import (
    Fault,
    FaultProxy,
    InventoryRow,
    deleted,
    is_listing,
    put_many,
    run_of,
    s3_settings,
    write_inventory,
)

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.harvest.s3 import settle
from lineagegraph.harvest.s3.harvester import harvest_s3, harvest_s3_inventory
from lineagegraph.harvest.s3.scan import ScanStats
from lineagegraph.questions import lineage

OUT = "postgres://db:5432/mart.public.daily"  # the job's output, outside S3
DOOMED = {f"gone/{i}.csv": (b"a,b\n", "STANDARD") for i in range(2)}
KEPT = {f"kept/{i:02}.csv": (b"a,b\n", "STANDARD") for i in range(20)}  # 2 of 22 is under 10 %


def iso(at: int) -> str:
    return datetime.fromtimestamp(at / 1000, UTC).isoformat(timespec="milliseconds")


def spark_event(bucket: str, at: int, inputs: tuple[str, ...]) -> dict[str, Any]:
    """A Spark job's COMPLETE event reading `inputs` (S3 prefixes) into OUT, column x of each."""
    ins = [{"namespace": f"s3://{bucket}", "name": name} for name in inputs]
    fields = {"x": {"inputFields": [{**i, "field": "x"} for i in ins]}}
    return {
        "eventType": "COMPLETE", "eventTime": iso(at),
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark",
        "run": {"runId": f"run-{at}"}, "job": {"namespace": "spark", "name": "daily"},
        "inputs": ins,
        "outputs": [{"namespace": "postgres://db:5432", "name": "mart.public.daily",
                     "facets": {"columnLineage": {"fields": fields}}}],
    }  # fmt: skip


def harvest_events(store: GraphStore, path: Path, *events: dict[str, Any]) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    run, report = harvest_openlineage(store, path, full=True)
    assert run.status == "success" and report.complete == len(events), report.problems


def upstream(store: GraphStore, as_of: int | None = None) -> set[str]:
    return {r.urn for r in lineage.traverse(store, OUT, "upstream", as_of=as_of)}


def dataset(store: GraphStore, urn: str) -> dict[str, Any]:
    rows = store.execute("MATCH (d:Dataset {urn: $u}) RETURN d AS d", {"u": urn}, write=False)
    return rows.records()[0]["d"]  # type: ignore[no-any-return]


def edges(store: GraphStore, urn: str) -> dict[str, Any]:
    """The retirement of every lineage edge touching `urn` or its columns, by kind."""
    rows = store.execute(
        "MATCH (d:Asset {urn: $u})-[e:FLOWS_TO|READS_FROM|WRITES_TO]-() "
        "RETURN type(e) AS kind, e.retired_at AS retired_at "
        "UNION ALL MATCH (d:Asset {urn: $u})<-[:COLUMN_OF]-(:Column)-[e:FEEDS]-() "
        "RETURN type(e) AS kind, e.retired_at AS retired_at",
        {"u": urn},
        write=False,
    ).records()
    return {r["kind"]: r["retired_at"] for r in rows}


@pytest.fixture
def lake(store: GraphStore, moto: BaseClient, bucket: str, moto_endpoint: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A Spark job that read `gone` and `kept` an hour ago, both listed; then `gone`'s objects
    are deleted from the bucket. Returns the harvester's settings."""
    put_many(moto, bucket, {**DOOMED, **KEPT})
    an_hour_ago = int(time.time() * 1000) - 3_600_000
    harvest_events(store, tmp_path / "ol.jsonl", spark_event(bucket, an_hour_ago, ("gone", "kept")))
    settings = s3_settings(moto_endpoint, page_size=5)
    assert harvest_s3(store, settings, bucket).status == "success"
    assert upstream(store) == {f"s3://{bucket}/gone", f"s3://{bucket}/kept"}
    for key in DOOMED:
        moto.delete_object(Bucket=bucket, Key=key)
    return settings


def test_a_dataset_a_complete_scan_empties_is_deleted_and_its_lineage_stops(
    store: GraphStore, moto: BaseClient, bucket: str, lake, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    gone, kept = f"s3://{bucket}/gone", f"s3://{bucket}/kept"
    report = harvest_s3(store, lake, bucket)
    at = run_of(store, report.run_id)["watermark"]  # the scan's start
    assert report.status == "success" and report.soft_deleted == 2
    assert run_of(store, report.run_id)["count_datasets_deleted"] == 1

    assert dataset(store, gone)["deleted_at"] == at and dataset(store, gone)["deleted"] == [at]
    assert edges(store, gone) == {"FLOWS_TO": at, "READS_FROM": at, "FEEDS": at}
    assert upstream(store) == {kept}  # now
    assert upstream(store, as_of=at - 1) == {gone, kept}  # before the deletion
    assert upstream(store, as_of=at) == {kept}
    # the prefix with objects left is untouched
    assert dataset(store, kept).get("deleted_at") is None
    assert set(edges(store, kept).values()) == {None}
    assert {k for k, v in deleted(store, bucket).items() if v is not None} == set(DOOMED)

    again = harvest_s3(store, lake, bucket)  # nothing more to delete: nothing changes
    assert again.status == "success" and not run_of(store, again.run_id).get(
        "count_datasets_deleted"
    )
    assert dataset(store, gone)["deleted"] == [at] and edges(store, gone)["FLOWS_TO"] == at

    # objects again: the dataset is back (as a recreated Snowflake table is), and its lineage
    # comes back when a run produces it again
    put_many(moto, bucket, {"gone/2.csv": (b"new", "STANDARD")})
    back = run_of(store, harvest_s3(store, lake, bucket).run_id)["watermark"]
    restored = dataset(store, gone)
    assert restored.get("deleted_at") is None and len(restored["restored"]) == 1
    assert restored["restored"][0] >= back  # when a page of that scan saw it
    assert upstream(store) == {kept}
    harvest_events(store, tmp_path / "later.jsonl", spark_event(bucket, back + 1, ("gone", "kept")))
    assert upstream(store) == {gone, kept}
    assert upstream(store, as_of=back) == {kept}  # the gap stays in the history


def test_a_harvest_killed_before_stopping_the_lineage_is_finished_by_the_next(
    store: GraphStore, bucket: str, lake, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    def killed(*_: object) -> None:
        raise KeyboardInterrupt("killed while deleting the emptied datasets")

    monkeypatch.setattr(settle, "delete_assets", killed)
    with pytest.raises(KeyboardInterrupt):
        harvest_s3(store, lake, bucket)
    monkeypatch.undo()
    report = harvest_s3(store, lake, bucket)
    at = run_of(store, report.run_id)["watermark"]
    assert report.status == "success" and report.soft_deleted == 2
    gone = f"s3://{bucket}/gone"
    assert dataset(store, gone)["deleted_at"] == at
    assert edges(store, gone) == {"FLOWS_TO": at, "READS_FROM": at, "FEEDS": at}


def _nothing_stopped(store: GraphStore, bucket: str) -> None:
    gone = f"s3://{bucket}/gone"
    assert dataset(store, gone).get("deleted_at") is None
    assert set(edges(store, gone).values()) == {None}
    assert upstream(store) == {gone, f"s3://{bucket}/kept"}
    assert set(deleted(store, bucket).values()) == {None}


def test_an_interrupted_scan_deletes_no_dataset_and_stops_no_lineage(
    store: GraphStore, moto: BaseClient, bucket: str, lake
) -> None:  # type: ignore[no-untyped-def]
    def ctrl_c(stats: ScanStats) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        harvest_s3(store, lake, bucket, progress=ctrl_c)
    _nothing_stopped(store, bucket)


def test_a_failed_listing_deletes_no_dataset_and_stops_no_lineage(
    store: GraphStore, moto: BaseClient, bucket: str, lake, fault_proxy: FaultProxy
) -> None:  # type: ignore[no-untyped-def]
    fault_proxy.add(Fault(is_listing(continued=True), 500, "InternalError", "We broke"))
    settings = s3_settings(fault_proxy.endpoint, page_size=5, retry_attempts=1)
    report = harvest_s3(store, settings, bucket, allow_mass_delete=True)
    assert report.status == "partial" and report.stats.objects == 5  # the first page only
    _nothing_stopped(store, bucket)


def test_a_refused_mass_delete_stops_no_lineage(
    store: GraphStore, moto: BaseClient, bucket: str, lake
) -> None:  # type: ignore[no-untyped-def]
    for key in list(KEPT)[:5]:  # 7 of 22 objects gone: over the 10 % guard
        moto.delete_object(Bucket=bucket, Key=key)
    report = harvest_s3(store, lake, bucket)
    assert report.status == "partial" and report.soft_deleted == 0
    assert set(edges(store, f"s3://{bucket}/gone").values()) == {None}
    assert dataset(store, f"s3://{bucket}/gone").get("deleted_at") is None


def test_an_inventory_report_without_a_datasets_objects_deletes_it_as_of_the_report(
    store: GraphStore, moto: BaseClient, bucket: str, moto_endpoint: str, tmp_path: Path
) -> None:
    day, t0 = 86_400_000, 1_717_200_000_000  # 2024-06-01
    harvest_events(store, tmp_path / "ol.jsonl", spark_event(bucket, t0 - day, ("gone", "kept")))
    settings = s3_settings(moto_endpoint)
    kept = [InventoryRow(key) for key in KEPT]
    rows = [*kept, *(InventoryRow(key) for key in DOOMED)]
    harvest_s3_inventory(store, settings, write_inventory(moto, bucket, [rows], created=t0))
    newer = write_inventory(moto, bucket, [kept], created=t0 + day)
    report = harvest_s3_inventory(store, settings, newer)

    gone = f"s3://{bucket}/gone"
    assert report.status == "success" and report.soft_deleted == 2
    assert dataset(store, gone)["deleted_at"] == t0 + day  # the report's time
    assert edges(store, gone) == {"FLOWS_TO": t0 + day, "READS_FROM": t0 + day, "FEEDS": t0 + day}
    assert upstream(store) == {f"s3://{bucket}/kept"}
    assert upstream(store, as_of=t0 + day - 1) == {gone, f"s3://{bucket}/kept"}
