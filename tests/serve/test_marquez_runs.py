"""Marquez's runs, event listing and job column lineage on a real `serve` over loopback, fed by
openlineage-python: a job's runs with their states and times, a run by id, the RunEvents
ingested (paged, by event time, before/after), each answer checked against Marquez's own
schemas (marquez_schemas.yml, from its spec/openapi.yml); then the event log's bounds, and the
last run of a source that keeps no :Run, on the embedded store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from serve_fixtures import Server, client, wait_for

from lineagegraph.errors import StoreError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.openlineage import OpenLineageReport, read_events
from lineagegraph.model import Transformation
from lineagegraph.serve import eventlog, runs
from lineagegraph.serve.eventlog import EventLog

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
RUN_A, RUN_B, RUN_C = (str(uuid.UUID(int=i)) for i in (0xA, 0xB, 0xC))
RAW, LAKE = ("s3://raw", "sales/amounts"), ("s3://lake", "orders")
SCHEMAS = yaml.safe_load((Path(__file__).parent / "marquez_schemas.yml").read_text())


def marquez_schema(name: str) -> dict[str, Any]:
    """Marquez's schema `name`, its properties also taking null where it does not require them
    (Marquez itself answers null for an empty Optional: its spec's own examples show it)."""

    def nullable(schema: Any) -> Any:
        if isinstance(schema, list):
            return [nullable(s) for s in schema]
        if not isinstance(schema, dict):
            return schema
        out = {k: nullable(v) for k, v in schema.items()}
        required = set(schema.get("required", []))
        if isinstance(out.get("properties"), dict):
            out["properties"] = {
                k: v if k in required else {"anyOf": [v, {"type": "null"}]}
                for k, v in out["properties"].items()
            }
        return out

    return {**nullable(SCHEMAS), "$ref": f"#/components/schemas/{name}"}


def check(name: str, value: Any) -> None:
    jsonschema.validate(value, marquez_schema(name), format_checker=jsonschema.FormatChecker())
    if name == "Run":  # anyOf IncompleteRun or an object of other fields: the first, then
        check("IncompleteRun", value)
    for run in value.get("runs", []) if name == "RunList" else []:
        check("Run", run)


def event(kind: str, run_id: str, seconds: int, *, outputs: bool = False) -> Any:
    """A RunEvent of the job airflow/load built with openlineage-python's own classes; the
    COMPLETE one says load writes lake/orders.amount from raw's amt."""
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent
    from openlineage.client.event_v2 import RunState as State
    from openlineage.client.facet_v2 import column_lineage_dataset as cl
    from openlineage.client.facet_v2 import schema_dataset

    inputs, written = [], []
    if outputs:
        inputs = [InputDataset(namespace=RAW[0], name=RAW[1])]
        feeds = cl.Fields(inputFields=[cl.InputField(namespace=RAW[0], name=RAW[1], field="amt")])
        facets = {
            "columnLineage": cl.ColumnLineageDatasetFacet(fields={"amount": feeds}),
            "schema": schema_dataset.SchemaDatasetFacet(
                fields=[schema_dataset.SchemaDatasetFacetFields(name="amount", type="DECIMAL")]
            ),
        }
        written = [OutputDataset(namespace=LAKE[0], name=LAKE[1], facets=facets)]
    return RunEvent(
        eventType=State[kind],
        eventTime=(T0 + timedelta(seconds=seconds)).isoformat(),
        run=Run(runId=run_id),
        job=Job(namespace="airflow", name="load"),
        producer="https://example.com/lineagegraph-tests",
        inputs=inputs,
        outputs=written,
    )


# Sent out of time order; (run, eventType, seconds after T0).
SENT = [("C", "START", 120), ("A", "START", 0), ("B", "START", 60), ("A", "COMPLETE", 5),
        ("B", "FAIL", 62)]  # fmt: skip
IDS = {"A": RUN_A, "B": RUN_B, "C": RUN_C}


@pytest.fixture(scope="module")
def runs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("runs") / "store")
    server.start()
    ol = client(server)
    for name, kind, seconds in SENT:
        ol.emit(event(kind, IDS[name], seconds, outputs=kind == "COMPLETE"))
    assert wait_for(lambda: server.get("/api/v1/events/lineage").json()["totalCount"] == 5)
    yield server
    server.kill(signal.SIGTERM)


def iso(seconds: int) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def test_a_jobs_runs_with_states_and_times(runs_server: Server) -> None:
    page = runs_server.get("/api/v1/namespaces/airflow/jobs/load/runs").json()
    check("RunList", page)
    assert page["totalCount"] == 3
    got = [
        (r["id"], r["state"], r["startedAt"], r["endedAt"], r["durationMs"]) for r in page["runs"]
    ]
    assert got == [
        (RUN_C, "RUNNING", iso(120), None, None),  # newest start first, as Marquez
        (RUN_B, "FAILED", iso(60), iso(62), 2000),
        (RUN_A, "COMPLETED", iso(0), iso(5), 5000),
    ]
    for run in page["runs"]:
        check("Run", run)
        assert run["job"] == {"namespace": "airflow", "name": "load"}
        assert runs_server.get(f"/api/v1/jobs/runs/{run['id']}").json() == run
    second = runs_server.get("/api/v1/namespaces/airflow/jobs/load/runs", limit=1, offset=1)
    assert second.json() == {"totalCount": 3, "runs": [page["runs"][1]]}
    past = runs_server.get("/api/v1/namespaces/airflow/jobs/load/runs", offset=3).json()
    assert past == {"totalCount": 3, "runs": []}


def test_unknown_jobs_and_runs_are_404(runs_server: Server) -> None:
    assert runs_server.get("/api/v1/namespaces/airflow/jobs/nope/runs").status_code == 404
    missing = runs_server.get(f"/api/v1/jobs/runs/{uuid.uuid4()}")
    assert missing.status_code == 404 and "no run" in missing.json()["reason"]
    bad = runs_server.get("/api/v1/namespaces/airflow/jobs/load/runs", limit=0)
    assert bad.status_code == 400


def test_the_ingested_events_by_event_time(runs_server: Server) -> None:
    newest = runs_server.get("/api/v1/events/lineage").json()
    check("LineageEventList", newest)
    by_time = sorted(SENT, key=lambda s: s[2])
    expected = [(IDS[name], kind) for name, kind, _ in by_time]
    got = [(e["run"]["runId"], e["eventType"]) for e in newest["events"]]
    assert got == expected[::-1] and newest["totalCount"] == 5
    complete = next(e for e in newest["events"] if e["eventType"] == "COMPLETE")
    assert complete["outputs"][0]["facets"]["columnLineage"]["fields"]["amount"]  # as sent
    oldest = runs_server.get("/api/v1/events/lineage", sortDirection="asc", limit=2, offset=1)
    assert oldest.json()["totalCount"] == 5
    assert [(e["run"]["runId"], e["eventType"]) for e in oldest.json()["events"]] == expected[1:3]
    # Marquez's window: after <= eventTime < before
    window = runs_server.get("/api/v1/events/lineage", after=iso(60), before=iso(120)).json()
    assert [e["eventType"] for e in window["events"]] == ["FAIL", "START"]
    assert window["totalCount"] == 2
    for params in ({"sortDirection": "up"}, {"before": "yesterday"}, {"limit": 1001}):
        assert runs_server.get("/api/v1/events/lineage", **params).status_code == 400


def test_column_lineage_from_a_job(runs_server: Server) -> None:
    graph = runs_server.get("/api/v1/column-lineage", nodeId="job:airflow:load").json()["graph"]
    ids = {n["id"]: n for n in graph}
    amount, amt = f"datasetField:{LAKE[0]}:{LAKE[1]}:amount", f"datasetField:{RAW[0]}:{RAW[1]}:amt"
    assert set(ids) == {amount, amt}
    assert ids[amount]["inEdges"] == [{"origin": amount, "destination": amt}]
    assert [f["field"] for f in ids[amount]["data"]["inputFields"]] == ["amt"]
    unknown = runs_server.get("/api/v1/column-lineage", nodeId="job:airflow:nope")
    assert unknown.status_code == 404


def test_events_stay_listed_across_a_restart(runs_server: Server) -> None:
    before = runs_server.get("/api/v1/events/lineage").json()
    runs_server.kill(signal.SIGTERM)
    runs_server.start()
    assert runs_server.get("/api/v1/events/lineage").json() == before


# --- the event log's bounds and the runs of other sources, on the embedded store ------------


def segment(directory: Path, events: list[dict[str, Any]]) -> Path:
    directory.mkdir(exist_ok=True)
    path = directory / f"{uuid.uuid4().hex}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return directory


def raw_event(n: int, **extra: Any) -> dict[str, Any]:
    return {"eventType": "COMPLETE", "eventTime": iso(n), "run": {"runId": str(uuid.UUID(int=n))},
            "job": {"namespace": "j", "name": "x"}, "producer": "tests", **extra}  # fmt: skip


def record(log: EventLog, directory: Path) -> int:
    """What the ingester does with a batch: the harvester's reading of each event, recorded."""
    with log.recording() as recorder:
        for path in sorted(directory.glob("*.jsonl")):
            for located in read_events(path, OpenLineageReport()):
                recorder(located, None)
    return recorder.added


def listed(log: EventLog, direction: eventlog.Direction = "asc") -> list[Any]:
    page = json.loads(log.page(2**62, -(2**62), direction, 100, 0))  # before, after
    assert page["totalCount"] == len(page["events"])
    return page["events"]


def test_the_event_log_keeps_the_newest_and_each_event_once(tmp_path: Path) -> None:
    nan = raw_event(7)
    nan["run"]["facets"] = {"x": float("nan")}  # Python's JSON reader takes it: serve does
    dataset_event = {"eventTime": iso(9), "dataset": {"namespace": "s3://b", "name": "x"},
                     "producer": "tests"}  # fmt: skip
    batch = segment(tmp_path / "a", [raw_event(n) for n in range(5)] + [dataset_event, nan])
    log = EventLog(tmp_path / "events.sqlite", keep=3, keep_days=0)
    assert record(log, batch) == 6  # RunEvents only, as Marquez lists
    kept = listed(log)
    assert [e["eventTime"] for e in kept] == [iso(3), iso(4), iso(7)]
    assert kept[-1]["run"]["facets"] == {"x": None}  # JSON has no NaN: answered as null
    again = EventLog(tmp_path / "again.sqlite", keep=100, keep_days=0)
    assert record(again, batch) == 6
    assert record(again, batch) == 0  # the same batch again (a crash before its files went)
    assert len(listed(again, "desc")) == 6
    assert record(EventLog(tmp_path / "off.sqlite", keep=0, keep_days=0), batch) == 0


def test_the_event_log_forgets_events_received_too_long_ago(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = EventLog(tmp_path / "events.sqlite", keep=100, keep_days=2)
    now = 1_700_000_000.0
    monkeypatch.setattr(eventlog.time, "time", lambda: now)
    record(log, segment(tmp_path / "old", [raw_event(1)]))
    now += 3 * 86_400
    record(log, segment(tmp_path / "new", [raw_event(2)]))
    assert [e["eventTime"] for e in listed(log)] == [iso(2)]


def test_the_last_run_of_a_source_without_run_states(store: GraphStore) -> None:
    writer = GraphWriter(store)
    at = int(T0.timestamp() * 1000)
    job = "spark://etl/s3://lake/orders"
    writer.add(Transformation(job, "spark", "etl: orders", "app-20240501-0007", at))
    writer.flush()
    page = runs.run_list(store, job, 10, 0)
    [last] = page["runs"]
    check("Run", {**last, "id": RUN_A})  # Marquez's ids are UUIDs; a Spark app's is not
    assert page["totalCount"] == 1
    assert (last["id"], last["state"], last["startedAt"]) == (
        "app-20240501-0007",
        "COMPLETED",
        iso(0),
    )
    assert runs.run(store, "app-20240501-0007") == last
    assert runs.run_list(store, job, 10, 1) == {"totalCount": 1, "runs": []}


def test_a_damaged_event_log_is_moved_aside_and_the_new_one_is_the_owners_only(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "store"
    spool = data_dir / "serve-spool"
    spool.mkdir(parents=True)
    damaged = spool / "events.sqlite"
    damaged.write_bytes(b"not a database, " * 512)
    (spool / "events.sqlite-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\0" * 60)  # a stale WAL
    with Server(data_dir).running() as server:
        ol = client(server)
        ol.emit(event("START", RUN_A, 0))
        assert wait_for(lambda: server.get("/api/v1/events/lineage").json()["totalCount"] == 1)
        warning = next(line for line in server.log().splitlines() if "cannot be read" in line)
        assert str(damaged) in warning and "moved aside" in warning
        [aside] = spool.glob("events.sqlite.corrupt-*[0-9]")
        assert aside.read_bytes().startswith(b"not a database")
        assert (spool / f"{aside.name}-wal").exists()  # never replayed into the new log
        modes = {p.name: p.stat().st_mode & 0o777 for p in spool.glob("events.sqlite*")}
        assert set(modes.values()) == {0o600} and len(modes) >= 3, modes  # aside ones too
        if os.geteuid() == 0:  # root reads anything: ask as another user
            with tempfile.TemporaryDirectory() as open_dir:
                os.chmod(open_dir, 0o755)
                os.link(damaged, Path(open_dir) / "events.sqlite")  # the same file, its mode
                other = subprocess.run(
                    ["cat", f"{open_dir}/events.sqlite"], user="nobody", capture_output=True
                )
            assert other.returncode != 0 and b"Permission denied" in other.stderr
        assert server.get("/healthz").json()["status"] == "ok"


def test_an_event_log_left_readable_by_others_is_made_the_owners_only(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    EventLog(path, keep=10, keep_days=0)
    path.chmod(0o644)  # as an earlier serve left it
    EventLog(path, keep=10, keep_days=0)
    assert path.stat().st_mode & 0o777 == 0o600


def test_an_event_log_that_cannot_be_opened_never_stops_serve(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    path.mkdir()  # not even a file: moved aside like a corrupt one
    log = EventLog(path, keep=10, keep_days=0)
    assert record(log, segment(tmp_path / "a", [raw_event(1)])) == 1
    assert [p.name.split("-")[0] for p in tmp_path.glob("events.sqlite.corrupt-*")] == [
        "events.sqlite.corrupt"
    ]
    nowhere = tmp_path / "a-file" / "events.sqlite"
    nowhere.parent.write_text("")  # no log can be made here: serve runs without one
    off = EventLog(nowhere, keep=10, keep_days=0)
    assert record(off, segment(tmp_path / "b", [raw_event(2)])) == 0
    with pytest.raises(StoreError, match="cannot be created"):
        off.page(2**62, 0, "asc", 10, 0)
