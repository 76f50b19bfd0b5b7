"""The listener posting its OpenLineage RunEvents to a real `lineagegraph serve` subprocess,
read back the way a script written for Marquez reads it (requests, `GET /api/v1/lineage`)."""

from __future__ import annotations

import json
import logging
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.settings import Settings
from lineagegraph.spark import install
from lineagegraph.spark.actions import AppInfo, DatasetRef, SparkAction
from lineagegraph.spark.http import HttpSink
from lineagegraph.spark.threads import Counts

# The serve tests' fixtures start `lineagegraph serve` as a subprocess; they live beside them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
from serve_fixtures import TOKEN, Server

APP = "lineagegraph-tests"
WRONG_TOKEN = "wr0ng-t0ken-never-logged"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("serve") / "store")
    s.start()
    yield s
    s.kill(signal.SIGTERM)  # a clean stop: serve stops its embedded store server too


def lineage_of(server: Server, node_id: str, job: str, timeout: float = 30) -> dict[str, Any]:
    """Marquez's lineage graph of `node_id` once `job` and its outputs are in it (serve ingests
    every 0.5 s, and a job's reads can be in the graph a statement before its writes)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = requests.get(
            f"{server.url}/api/v1/lineage",
            params={"nodeId": node_id, "depth": 5},
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
        if answer.status_code == 200:
            nodes = {n["id"]: n for n in answer.json()["graph"]}
            if job in nodes and nodes[job]["outEdges"]:
                return nodes
        assert time.monotonic() < deadline, f"{job} not in the lineage of {node_id}: {answer.text}"
        time.sleep(0.25)


def write_people(spark: Any, path: Path) -> None:
    spark.createDataFrame([(1, "ann"), (2, "bob")], ["id", "name"]).write.parquet(str(path))


def settings_to(
    settings_for: Any, root: Path, embedded_dir: Path, url: str, token: str, **more: Any
) -> Settings:
    return settings_for(
        root, embedded_dir, emit="openlineage", openlineage_url=url, openlineage_token=token, **more
    )


def test_a_spark_job_reads_back_from_serve_as_input_job_output(
    spark: Any,
    server: Server,
    tmp_path: Path,
    embedded_dir: Path,
    settings_for: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="lineagegraph")
    handle = install(
        spark, settings=settings_to(settings_for, tmp_path, embedded_dir, server.url, TOKEN)
    )
    try:
        write_people(spark, tmp_path / "people")
        spark.read.parquet(str(tmp_path / "people")).select("name").write.parquet(
            str(tmp_path / "names")
        )
        assert handle.flush()
    finally:
        handle.stop()

    counts = handle.counts  # a plain dict: a count never made is absent
    assert (
        counts.get("events_sent"),
        counts.get("events_rejected"),
        counts.get("events_unsent"),
        counts.get("events_retried"),
    ) == (2, None, None, None)
    assert not list((tmp_path / "openlineage").glob("*"))  # all delivered: nothing kept locally
    source, target = f"dataset:file:{tmp_path}/people", f"dataset:file:{tmp_path}/names"
    job = f"job:spark:{APP}.file://{tmp_path}/names"
    nodes = lineage_of(server, source, job)
    assert {e["destination"] for e in nodes[source]["outEdges"]} == {job}
    assert [e["destination"] for e in nodes[job]["outEdges"]] == [target]
    assert [e["origin"] for e in nodes[target]["inEdges"]] == [job]
    assert nodes[job]["type"] == "JOB" and nodes[target]["type"] == "DATASET"
    assert TOKEN not in caplog.text and TOKEN not in server.log()


def test_a_wrong_token_is_counted_and_kept_and_the_job_goes_on(
    spark: Any,
    server: Server,
    tmp_path: Path,
    embedded_dir: Path,
    settings_for: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="lineagegraph")
    handle = install(
        spark, settings=settings_to(settings_for, tmp_path, embedded_dir, server.url, WRONG_TOKEN)
    )
    try:
        write_people(spark, tmp_path / "people")
        assert handle.flush()
    finally:
        handle.stop()

    assert spark.read.parquet(str(tmp_path / "people")).count() == 2  # the job's write is there
    counts = handle.counts
    assert (
        counts.get("events_rejected"),
        counts.get("events_sent"),
        counts.get("events_retried"),
    ) == (1, None, None)
    refused = [r.getMessage() for r in caplog.records if "refused an event" in r.getMessage()]
    assert len(refused) == 1 and "HTTP 401" in refused[0] and "Bearer" in refused[0]
    [kept] = list((tmp_path / "openlineage").glob("*.jsonl.rejected"))
    assert json.loads(kept.read_text())["outputs"][0]["name"] == str(tmp_path / "people")
    assert WRONG_TOKEN not in caplog.text and WRONG_TOKEN not in server.log()


def test_a_url_without_emit_openlineage_is_said_not_ignored(
    spark: Any,
    tmp_path: Path,
    embedded_dir: Path,
    settings_for: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = settings_for(tmp_path, embedded_dir, openlineage_url="http://127.0.0.1:9")
    install(spark, settings=settings).stop()
    assert "openlineage_url is set but emit is 'graph': no event is posted there" in caplog.text


def action(root: Path, n: int) -> SparkAction:
    """The lineage of one action as the worker hands it to its sinks: in{n} -> out{n}."""
    return SparkAction(
        app="late",
        app_id="local-7",
        user=None,
        func="command",
        execution_id=n,
        at=1_760_000_000_000 + n,
        duration_ms=5,
        command="InsertIntoHadoopFsRelationCommand",
        mode="Append",
        output=DatasetRef(f"file://{root}/out{n}", "Dataset"),
        inputs=[DatasetRef(f"file://{root}/in{n}", "Dataset")],
    )


def test_events_wait_for_a_server_that_starts_late(
    tmp_path: Path, embedded_dir: Path, settings_for: Any
) -> None:
    late = Server(tmp_path / "store")  # its port is chosen; nothing listens there yet
    settings = settings_to(settings_for, tmp_path, embedded_dir, late.url, TOKEN)
    (tmp_path / "openlineage").mkdir()
    counts = Counts()
    sink = HttpSink(settings, AppInfo("late", "local-7"), counts)
    for n in range(3):
        sink.action(action(tmp_path, n))
    time.sleep(1.0)
    assert counts.snapshot()["events_sent"] == 0 and counts.snapshot()["events_retried"] >= 2
    late.start()
    try:
        assert sink.flush(60)
        sink.close()
        assert counts.snapshot()["events_sent"] == 3 and counts.snapshot()["events_unsent"] == 0
        for n in range(3):
            job = f"job:spark:late.file://{tmp_path}/out{n}"
            lineage_of(late, f"dataset:file:{tmp_path}/in{n}", job)
    finally:
        late.kill(signal.SIGTERM)


def test_an_endpoint_that_stays_down_leaves_every_event_in_the_local_file(
    tmp_path: Path,
    embedded_dir: Path,
    settings_for: Any,
    unused_port: int,
    graph: GraphStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="lineagegraph")
    settings = settings_to(
        settings_for,
        tmp_path,
        embedded_dir,
        f"http://127.0.0.1:{unused_port}",
        TOKEN,
        send_seconds=0.5,
        queue_size=2,
    )
    (tmp_path / "openlineage").mkdir()  # install() makes it; this test builds the sink alone
    counts = Counts()
    sink = HttpSink(settings, AppInfo("down", "local-8"), counts)
    for n in range(6):  # more than the queue holds: the overflow is kept at once, not dropped
        sink.action(action(tmp_path, n))
    assert sink.flush(30)
    sink.close()

    [kept] = list((tmp_path / "openlineage").glob("*.jsonl"))
    outputs = sorted(json.loads(line)["outputs"][0]["name"] for line in kept.open())
    assert outputs == [f"{tmp_path}/out{n}" for n in range(6)]
    assert counts.snapshot()["events_unsent"] == 6 and counts.snapshot()["events_sent"] == 0
    assert "unreachable" in caplog.text and TOKEN not in caplog.text
    run, report = harvest_openlineage(graph, tmp_path / "openlineage")  # as the docs say
    assert run.status == "success" and report.complete == 6
    flows = graph.execute("MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn", {}, write=False).rows
    assert sorted(map(tuple, flows)) == [
        (f"file://{tmp_path}/in{n}", f"file://{tmp_path}/out{n}") for n in range(6)
    ]


def test_an_event_not_even_the_local_file_takes_is_counted_lost_and_said(
    tmp_path: Path,
    embedded_dir: Path,
    settings_for: Any,
    unused_port: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = settings_to(
        settings_for,
        tmp_path,
        embedded_dir,
        f"http://127.0.0.1:{unused_port}",
        TOKEN,
        send_seconds=0.2,
    )
    counts = Counts()  # openlineage_dir was never made (or was removed mid-job)
    sink = HttpSink(settings, AppInfo("gone", "local-9"), counts)
    for n in range(2):
        sink.action(action(tmp_path, n))
    assert sink.flush(30)  # the sender survived the first loss and handled the second
    sink.close()
    assert counts.snapshot()["events_lost"] == 2 and counts.snapshot()["events_unsent"] == 0
    assert "cannot keep an OpenLineage event in" in caplog.text and "it is lost" in caplog.text
