"""S3 deletions stop lineage: a complete scan that leaves no object under a dataset that lineage
runs through, or no longer sees an object that lineage names directly, deletes it as of the
scan, and its lineage edges stop then (docs/history.md); a partial scan deletes nothing.
Lineage from Spark-shaped OpenLineage events (namespace `s3://bucket`); objects listed from
moto's real S3 server, or from S3 Inventory reports on it."""

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

from lineagegraph.graph.history import History
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.harvest.s3 import settle
from lineagegraph.harvest.s3.harvester import harvest_s3, harvest_s3_inventory, summary
from lineagegraph.harvest.s3.scan import ScanStats
from lineagegraph.model import Asset, Flow
from lineagegraph.pipeline import now_ms
from lineagegraph.questions import history, lineage

OUT = "postgres://db:5432/mart.public.daily"  # the job's output, outside S3
DOOMED = {f"gone/{i}.csv": (b"a,b\n", "STANDARD") for i in range(2)}
KEPT = {f"kept/{i:02}.csv": (b"a,b\n", "STANDARD") for i in range(20)}  # 2 of 22 is under 10 %
DIRECT = "gone/0.csv"  # an object the job reads itself


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


def asset(store: GraphStore, urn: str) -> dict[str, Any]:
    rows = store.execute("MATCH (d:Asset {urn: $u}) RETURN d AS d", {"u": urn}, write=False)
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
    """Both prefixes listed, then a Spark job that read `gone`, `kept` and the object DIRECT
    an hour ago; then `gone`'s objects are deleted from the bucket. Returns the harvester's
    settings."""
    put_many(moto, bucket, {**DOOMED, **KEPT})
    settings = s3_settings(moto_endpoint, page_size=5)
    assert harvest_s3(store, settings, bucket).status == "success"
    an_hour_ago = int(time.time() * 1000) - 3_600_000
    event = spark_event(bucket, an_hour_ago, ("gone", "kept", DIRECT))
    harvest_events(store, tmp_path / "ol.jsonl", event)
    assert upstream(store) == {f"s3://{bucket}/{p}" for p in ("gone", "kept", DIRECT)}
    for key in DOOMED:
        moto.delete_object(Bucket=bucket, Key=key)
    return settings


def test_a_dataset_a_complete_scan_empties_is_deleted_and_its_lineage_stops(
    store: GraphStore, moto: BaseClient, bucket: str, lake, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    gone, kept = f"s3://{bucket}/gone", f"s3://{bucket}/kept"
    report = harvest_s3(store, lake, bucket)
    at = run_of(store, report.run_id)["watermark"]  # the scan's start
    assert report.status == "success" and report.soft_deleted == 2  # DIRECT's drop is one
    assert run_of(store, report.run_id)["count_datasets_deleted"] == 1
    assert run_of(store, report.run_id)["count_files_deleted"] == 1
    assert "2 soft-deleted (lineage stopped: 1 of them, 1 datasets)," in summary(report)

    assert asset(store, gone)["deleted_at"] == at and asset(store, gone)["deleted"] == [at]
    assert edges(store, gone) == {"FLOWS_TO": at, "READS_FROM": at, "FEEDS": at}
    assert upstream(store) == {kept}  # now
    assert upstream(store, as_of=at - 1) == {gone, kept, f"{gone}/0.csv"}  # before the deletion
    assert upstream(store, as_of=at) == {kept}
    # the prefix with objects left is untouched
    assert asset(store, kept).get("deleted_at") is None
    assert set(edges(store, kept).values()) == {None}
    assert {k for k, v in deleted(store, bucket).items() if v is not None} == set(DOOMED)

    again = harvest_s3(store, lake, bucket)  # nothing more to delete: nothing changes
    assert again.status == "success" and not run_of(store, again.run_id).get(
        "count_datasets_deleted"
    )
    assert asset(store, gone)["deleted"] == [at] and edges(store, gone)["FLOWS_TO"] == at

    # objects again: the dataset is back (as a recreated Snowflake table is), and its lineage
    # comes back when a run produces it again
    put_many(moto, bucket, {"gone/2.csv": (b"new", "STANDARD")})
    back = run_of(store, harvest_s3(store, lake, bucket).run_id)["watermark"]
    restored = asset(store, gone)
    assert restored.get("deleted_at") is None and len(restored["restored"]) == 1
    assert restored["restored"][0] >= back  # when a page of that scan saw it
    assert upstream(store) == {kept}
    harvest_events(store, tmp_path / "later.jsonl", spark_event(bucket, back + 1, ("gone", "kept")))
    assert upstream(store) == {gone, kept}
    assert upstream(store, as_of=back) == {kept}  # the gap stays in the history


def test_an_object_lineage_names_is_deleted_with_its_lineage_and_back_when_listed_again(
    store: GraphStore, moto: BaseClient, bucket: str, lake, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    direct = f"s3://{bucket}/{DIRECT}"
    at = run_of(store, harvest_s3(store, lake, bucket).run_id)["watermark"]
    assert asset(store, direct)["deleted_at"] == at and asset(store, direct)["deleted"] == [at]
    assert edges(store, direct) == {"FLOWS_TO": at, "READS_FROM": at, "FEEDS": at}
    told = {(e.at, e.what) for e in history.timeline(store, direct).events}
    assert {(at, "deleted"), (at, "stopped: read by"), (at, "stopped: flows to")} <= told

    put_many(moto, bucket, {DIRECT: (b"a,b\n", "STANDARD")})  # the object is back
    back = run_of(store, harvest_s3(store, lake, bucket).run_id)["watermark"]
    restored = asset(store, direct)
    assert restored.get("deleted_at") is None and restored["deleted"] == [at]
    assert len(restored["restored"]) == 1 and restored["restored"][0] >= back
    assert direct not in upstream(store)  # no run read it since
    harvest_events(store, tmp_path / "later.jsonl", spark_event(bucket, back + 1, ("kept", DIRECT)))
    assert upstream(store) == {f"s3://{bucket}/kept", direct}
    assert direct not in upstream(store, as_of=back)  # the gap stays in the history
    assert asset(store, direct)["deleted"] == [at]


def test_an_object_soft_deleted_before_it_had_lineage_keeps_that_deletion_when_dropped(
    store: GraphStore, moto: BaseClient, bucket: str, moto_endpoint: str, tmp_path: Path
) -> None:
    key = "kept/03.csv"
    urn = f"s3://{bucket}/{key}"
    settings = s3_settings(moto_endpoint, page_size=5)
    put_many(moto, bucket, KEPT)
    harvest_s3(store, settings, bucket)
    moto.delete_object(Bucket=bucket, Key=key)
    first = harvest_s3(store, settings, bucket)  # a plain soft delete: no lineage yet
    t1 = run_of(store, first.run_id)["watermark"]
    assert first.soft_deleted == 1 and not run_of(store, first.run_id).get("count_files_deleted")
    put_many(moto, bucket, {key: KEPT[key]})
    harvest_s3(store, settings, bucket)
    back = asset(store, urn)["restored"]
    assert asset(store, urn)["deleted"] == [t1] and len(back) == 1
    harvest_events(store, tmp_path / "ol.jsonl", spark_event(bucket, back[0] + 1, (key,)))
    assert upstream(store) == {urn}
    harvest_s3(store, settings, bucket)  # seen again: its return is still the first time
    moto.delete_object(Bucket=bucket, Key=key)
    last = harvest_s3(store, settings, bucket)
    t3 = run_of(store, last.run_id)["watermark"]
    assert last.soft_deleted == 1 and run_of(store, last.run_id)["count_files_deleted"] == 1

    gone = asset(store, urn)
    assert (gone["deleted"], gone["restored"], gone["deleted_at"]) == ([t1, t3], back, t3)
    assert edges(store, urn)["READS_FROM"] == t3
    assert upstream(store) == set() and upstream(store, as_of=t3 - 1) == {urn}
    told = [
        (e.at, e.what)
        for e in history.timeline(store, urn).events
        if (e.subject, e.other) == (urn, None)
    ]
    assert [w for _, w in told] == ["first seen", "deleted", "back", "deleted"]
    assert [t for t, _ in told][1:] == [t1, back[0], t3]
    assert (t3, "stopped: read by") in {(e.at, e.what) for e in history.timeline(store, urn).events}


def test_lineage_without_a_job_on_an_object_stops_when_a_scan_no_longer_sees_it(
    store: GraphStore, moto: BaseClient, bucket: str, moto_endpoint: str
) -> None:
    """A FLOWS_TO without a transformation (no READS_FROM beside it, no run to drift against):
    only the object's deletion stops it."""
    put_many(moto, bucket, KEPT)
    settings = s3_settings(moto_endpoint, page_size=5)
    harvest_s3(store, settings, bucket)
    obj = f"s3://{bucket}/kept/03.csv"
    items = [
        Asset(OUT, "Table", "postgres", "mart.public.daily", now_ms()),
        Flow(obj, OUT, now_ms()),
    ]
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()
    history = History()
    history.take(items)
    history.write(store)
    assert upstream(store) == {obj}
    moto.delete_object(Bucket=bucket, Key="kept/03.csv")
    report = harvest_s3(store, settings, bucket)
    at = run_of(store, report.run_id)["watermark"]
    assert report.soft_deleted == 1 and run_of(store, report.run_id)["count_files_deleted"] == 1
    assert edges(store, obj) == {"FLOWS_TO": at} and asset(store, obj)["deleted_at"] == at
    assert upstream(store) == set() and upstream(store, as_of=at - 1) == {obj}


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
    for urn in (gone, f"s3://{bucket}/{DIRECT}"):
        assert asset(store, urn)["deleted_at"] == at and asset(store, urn)["deleted"] == [at]
        assert edges(store, urn) == {"FLOWS_TO": at, "READS_FROM": at, "FEEDS": at}


def _nothing_stopped(store: GraphStore, bucket: str) -> None:
    gone, direct = f"s3://{bucket}/gone", f"s3://{bucket}/{DIRECT}"
    for urn in (gone, direct):
        assert asset(store, urn).get("deleted_at") is None
        assert set(edges(store, urn).values()) == {None}
    assert upstream(store) == {gone, f"s3://{bucket}/kept", direct}
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
    _nothing_stopped(store, bucket)


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
    assert asset(store, gone)["deleted_at"] == t0 + day  # the report's time
    assert edges(store, gone) == {"FLOWS_TO": t0 + day, "READS_FROM": t0 + day, "FEEDS": t0 + day}
    assert upstream(store) == {f"s3://{bucket}/kept"}
    assert upstream(store, as_of=t0 + day - 1) == {gone, f"s3://{bucket}/kept"}
