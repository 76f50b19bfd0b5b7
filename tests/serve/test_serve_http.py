"""`lineagegraph serve` over real HTTP: the openlineage-python client posts, a Marquez-style
script reads, bad requests get a JSON reason, and a kill -9 loses no acknowledged event."""

from __future__ import annotations

import gzip
import json
import signal
import socket
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner
from serve_fixtures import TOKEN, Server, client, run_event, wait_for

from lineagegraph.cli import cli
from lineagegraph.graph.store import open_store
from lineagegraph.pipeline import harvest_lock, lock_file
from lineagegraph.settings import GraphSettings


def assert_jobs_in_graph(server: Server, names: Iterable[str]) -> None:
    """Wait (up to 60 s) until every job `names` posted under namespace airflow is in the graph."""
    expected = {f"openlineage://airflow/{name}" for name in names}
    settings = GraphSettings(data_dir=server.data_dir)

    def missing() -> set[str]:
        with open_store(settings) as store:
            rows = store.read("serve_jobs", {"urns": sorted(expected)})
        return expected - {row["urn"] for row in rows}

    assert wait_for(lambda: not missing(), 60), sorted(missing())[:5]


def lineage(server: Server, node: str, depth: int = 20) -> dict[str, Any]:
    """What a script written for Marquez does."""
    r = requests.get(
        f"{server.url}/api/v1/lineage",
        params={"nodeId": node, "depth": depth},
        headers=server.headers,
        timeout=30,
    )
    r.raise_for_status()
    return r.json()


def edges(graph: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e["origin"], e["destination"]) for n in graph["graph"] for e in n["outEdges"]}


def test_client_events_are_read_back_the_marquez_way(server: Server) -> None:
    ol = client(server)
    sf = "snowflake://org-acct"
    ol.emit(
        run_event(
            "load", [("s3://raw", "sales/dt=2024-01-01")], [("snowflake://Org-Acct", "DB.S.ORDERS")]
        )
    )
    ol.emit(run_event("mart", [(sf, "DB.S.ORDERS")], [(sf, 'DB.S."Daily.Sales"')]))
    node = "dataset:snowflake://org-acct:DB.S.ORDERS"
    graph = wait_for(lambda: _with_nodes(lineage_or_empty(server, node), 5))
    ids = {n["id"]: n for n in graph["graph"]}
    assert set(ids) == {
        "dataset:s3://raw:sales",  # folded as `harvest openlineage` folds it
        "dataset:snowflake://org-acct:DB.S.ORDERS",
        'dataset:snowflake://org-acct:DB.S."Daily.Sales"',
        "job:airflow:load",
        "job:airflow:mart",
    }
    assert edges(graph) == {
        ("dataset:s3://raw:sales", "job:airflow:load"),
        ("job:airflow:load", "dataset:snowflake://org-acct:DB.S.ORDERS"),
        ("dataset:snowflake://org-acct:DB.S.ORDERS", "job:airflow:mart"),
        ("job:airflow:mart", 'dataset:snowflake://org-acct:DB.S."Daily.Sales"'),
    }
    orders = ids[node]
    assert orders["type"] == "DATASET"
    assert orders["data"]["id"] == {"namespace": "snowflake://org-acct", "name": "DB.S.ORDERS"}
    assert orders["data"]["urn"] == "snowflake://org-acct/DB.S.ORDERS"
    assert [e["origin"] for e in orders["inEdges"]] == ["job:airflow:load"]
    job = ids["job:airflow:mart"]["data"]
    assert job["inputs"] == [{"namespace": "snowflake://org-acct", "name": "DB.S.ORDERS"}]
    assert job["runs"] == 1
    # depth counts job levels, as in Marquez: one level from the job shows its datasets only
    small = lineage(server, "job:airflow:mart", depth=1)
    assert {n["id"] for n in small["graph"]} == {
        "job:airflow:mart",
        "dataset:snowflake://org-acct:DB.S.ORDERS",
        'dataset:snowflake://org-acct:DB.S."Daily.Sales"',
    }


def _with_nodes(graph: dict[str, Any], count: int) -> dict[str, Any] | None:
    return graph if len(graph["graph"]) == count else None


def lineage_or_empty(server: Server, node: str) -> dict[str, Any]:
    r = server.get("/api/v1/lineage", nodeId=node)
    return r.json() if r.status_code == 200 else {"graph": []}


def test_the_async_transport_lands_every_event_in_the_graph(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """openlineage-python's AsyncHttpTransport, configured from the environment as the docs say:
    many requests in flight at once (sharing the server's group commit), api key, gzip; START
    before COMPLETE for half of the runs."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import RunState
    from openlineage.client.transport.async_http import AsyncHttpTransport

    for key, value in {
        "OPENLINEAGE_URL": server.url,
        "OPENLINEAGE_API_KEY": server.token,
        "OPENLINEAGE__TRANSPORT__TYPE": "async_http",
        "OPENLINEAGE__TRANSPORT__MAX_CONCURRENT_REQUESTS": "32",
        "OPENLINEAGE__TRANSPORT__COMPRESSION": "gzip",
        "OPENLINEAGE__TRANSPORT__RETRY": '{"total": 0}',
    }.items():
        monkeypatch.setenv(key, str(value))
    transport = OpenLineageClient().transport
    assert isinstance(transport, AsyncHttpTransport)
    assert transport.config.max_concurrent_requests == 32
    assert transport.config.compression is not None and transport.config.compression.value == "gzip"
    names = [f"async-{n}" for n in range(200)]
    sent = 0
    for n, name in enumerate(names):
        event = run_event(name, [("s3://in", f"src/{n % 7}")], [("s3://out", name)])
        if n % 2:
            start = run_event(name, [], [])
            start.eventType, start.run = RunState.START, event.run
            transport.emit(start)
            sent += 1
        transport.emit(event)
        sent += 1
    assert transport.close(timeout=60)
    assert transport.get_stats() == {"pending": 0, "success": sent, "failed": 0}
    assert server.get("/healthz").json()["events_accepted"] == sent
    assert_jobs_in_graph(server, names)


def test_a_batch_is_taken_whole_and_counted_once(server: Server) -> None:
    events = [_json(i) for i in range(3)]
    r = server.post(gzip.compress(json.dumps(events).encode()), **{"Content-Encoding": "gzip"})
    assert r.status_code == 201, r.text
    assert r.json() == {"accepted": 3}
    for i in range(3):
        node = f"dataset:s3://b:out{i}"
        answer = wait_for(lambda node=node: _with_nodes(lineage_or_empty(server, node), 3))
        assert {n["id"] for n in answer["graph"]} == {
            f"dataset:s3://b:in{i}",
            f"job:airflow:j{i}",
            f"dataset:s3://b:out{i}",
        }
    broken = [_json(7), {"eventType": "COMPLETE"}]
    r = server.post(json.dumps(broken))
    assert r.status_code == 400
    assert r.json()["reason"] == "event [1]: the event has no 'eventTime' (str)"
    time.sleep(1.5)  # two ingest rounds: the good event of the refused batch never arrives
    assert server.get("/api/v1/lineage", nodeId="dataset:s3://b:out7").status_code == 404


def test_a_large_batch_is_checked_off_the_event_loop_the_same_way(server: Server) -> None:
    events = [_json(100 + i) for i in range(300)]
    body = json.dumps(events)
    assert len(body) > 64 * 2**10  # over what is checked on the event loop itself
    broken = [*events[:250], {"eventType": "COMPLETE"}, *events[250:]]
    r = server.post(json.dumps(broken))
    assert r.status_code == 400
    assert r.json()["reason"] == "event [250]: the event has no 'eventTime' (str)"
    r = server.post(body)
    assert r.status_code == 201, r.text
    assert r.json() == {"accepted": 300}
    health = wait_for(lambda: (h := server.get("/healthz").json())["events_ingested"] == 300 and h)
    assert health["events_accepted"] == 300 and health["events_rejected"] == 1
    assert lineage_or_empty(server, "dataset:s3://b:out399")["graph"]


def _json(i: int) -> dict[str, Any]:
    from openlineage.client.serde import Serde

    event = run_event(f"j{i}", [("s3://b", f"in{i}")], [("s3://b", f"out{i}")])
    return json.loads(Serde.to_json(event))


def test_bad_requests_get_a_json_reason_never_a_500(server: Server) -> None:
    good = json.dumps(_json(1))
    plain, naive = _json(1), _json(1)
    plain["inputs"][0]["namespace"] = "plain namespace"  # neither a URI nor a platform name
    naive["eventTime"] = "2024-01-01T00:00:00"
    long = _json(1)
    long["inputs"][0]["name"] = "x" * 5000  # the store's index would never find it again
    cases: list[tuple[bytes | str, dict[str, str], int, str]] = [
        ("{not json", {}, 400, "body is not JSON: malformed JSON"),
        ("[]", {}, 400, "the batch is an empty array"),
        ('{"eventType": "DONE", "eventTime": "2024-01-01T00:00:00Z"}', {}, 400,
         "event: eventType 'DONE' is not one of"),
        (json.dumps(plain), {}, 400, "namespace 'plain namespace' is neither a URI"),
        (json.dumps(naive), {}, 400, "event: eventTime '2024-01-01T00:00:00' has no time zone"),
        (json.dumps(long), {}, 400, "over the store's 4,096-byte limit for a key"),
        (b"\x1f\x8b\x08broken", {"Content-Encoding": "gzip"}, 400, "body is not valid gzip"),
        (good, {"Content-Encoding": "br"}, 415, "Content-Encoding 'br' is not supported"),
        (good, {"Content-Type": "text/plain"}, 415, "Content-Type must be application/json"),
        (gzip.compress(b" " * (17 * 2**20)), {"Content-Encoding": "gzip"}, 413,
         "body is over 16,777,216 bytes once decompressed"),
        (good, {"Authorization": "Bearer wrong"}, 401, "Authorization: Bearer <token>"),
        (good, {"Host": "evil.example:5000"}, 421, "Host 'evil.example' is not this server"),
    ]  # fmt: skip
    for body, headers, status, reason in cases:
        r = server.post(body, **headers)
        assert r.status_code == status, (reason, r.text)
        answer = r.json()
        assert reason in answer["reason"], answer
        assert TOKEN not in r.text and "wrong" not in r.text
    assert TOKEN not in server.log()
    r = requests.post(
        f"{server.url}/api/v1/lineage",
        data=b"x" * (17 * 2**20),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert r.status_code == 413 and r.json()["reason"] == "body is over 16,777,216 bytes"
    assert server.get("/api/v1/lineage").json()["reason"].startswith("the nodeId query parameter")
    assert server.get("/api/v1/lineage", nodeId="table:x:y").status_code == 400
    assert server.get("/api/v1/lineage", nodeId="dataset:s3://b:x", depth="deep").status_code == 400
    assert server.get("/nowhere").json() == {"error": "Not Found", "reason": "Not Found"}
    assert (
        requests.delete(
            f"{server.url}/api/v1/lineage", headers=server.headers, timeout=5
        ).status_code
        == 405
    )
    assert (
        requests.get(f"{server.url}/api/v1/lineage?nodeId=dataset:s3://b:x", timeout=5).status_code
        == 401
    )
    health = requests.get(f"{server.url}/healthz", timeout=5).json()
    assert health["status"] == "ok" and health["events_accepted"] == 0
    assert "access-control-allow-origin" not in {k.lower() for k in r.headers}
    spec = requests.get(f"{server.url}/openapi.json", timeout=5).json()
    assert set(spec["paths"]["/api/v1/lineage"]) == {"get", "post"}


def test_open_reads_let_gets_through_and_writes_still_need_the_token(tmp_path: Path) -> None:
    server = Server(tmp_path / "store", extra_env={"LINEAGEGRAPH_SERVE__OPEN_READS": "true"})
    server.start()
    try:
        url = f"{server.url}/api/v1/lineage"
        read = requests.get(url, params={"nodeId": "dataset:s3://b:x"}, timeout=10)
        assert read.status_code == 404  # answered: no token asked for
        write = requests.post(
            url, data=json.dumps(_json(1)), timeout=10, headers={"Content-Type": "application/json"}
        )
        assert write.status_code == 401
    finally:
        server.kill(signal.SIGTERM)
    assert "lineagegraph serve: stopped" in server.log()


def test_a_non_loopback_bind_needs_a_token(tmp_path: Path) -> None:
    env = {"LINEAGEGRAPH_GRAPH__DATA_DIR": str(tmp_path / "store")}
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"], env=env)
    assert result.exit_code == 2
    assert "host '0.0.0.0' is not a loopback address: set a token" in result.output
    assert not (tmp_path / "store").exists()  # refused before anything was opened


def test_a_port_in_use_is_a_clear_error_that_opens_nothing(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {"LINEAGEGRAPH_GRAPH__DATA_DIR": str(tmp_path / "store")}
        result = CliRunner().invoke(cli, ["serve", "--port", str(port)], env=env)
    assert result.exit_code == 2
    assert f"error: cannot listen on 127.0.0.1:{port}: Address already in use" in result.output
    assert not (tmp_path / "store").exists()


def test_no_acknowledged_event_is_lost_to_kill_9(server: Server) -> None:
    acknowledged: list[str] = []
    stop = threading.Event()

    def stream(worker: int) -> None:
        ol = client(server, gzip=False)
        n = 0
        while not stop.is_set():
            name = f"w{worker}-{n}"
            try:
                ol.emit(run_event(name, [("s3://in", f"src/{worker}")], [("s3://out", name)]))
            except Exception:
                return  # the server is gone: this event was never acknowledged
            acknowledged.append(name)
            n += 1

    workers = [threading.Thread(target=stream, args=(w,)) for w in range(4)]
    for w in workers:
        w.start()
    wait_for(lambda: len(acknowledged) >= 300, 60)
    server.kill(signal.SIGKILL)
    stop.set()
    for w in workers:
        w.join()
    assert len(acknowledged) >= 300
    spool = server.data_dir / "serve-spool"
    left = [p for p in spool.rglob("*.jsonl") if p.stat().st_size]
    assert left, "the kill came after everything was ingested: nothing was tested"
    server.start()
    assert_jobs_in_graph(server, acknowledged)
    ingesting = server.data_dir / "serve-spool" / "ingesting"
    assert wait_for(lambda: not any(ingesting.iterdir()), 30)  # deleted once the batch is in
    health = server.get("/healthz").json()
    assert health["ingest_error"] is None


def test_listings_search_and_the_cli_questions_over_http(server: Server) -> None:
    ol = client(server)
    sf = "snowflake://org-acct"
    ol.emit(run_event("load", [("s3://raw", "sales")], [(sf, "DB.S.ORDERS")]))
    ol.emit(run_event("mart", [(sf, "DB.S.ORDERS")], [(sf, "DB.S.DAILY")]))
    ends = {"from": "s3://raw/sales", "to": f"{sf}/DB.S.DAILY"}
    path = wait_for(lambda: (r := server.get("/api/v1/path", **ends)).ok and r.json()["paths"])

    names = [n["name"] for n in server.get("/api/v1/namespaces").json()["namespaces"]]
    assert names == ["airflow", "s3://raw", sf]
    found = server.get("/api/v1/search", q="orders").json()
    assert found["totalCount"] == 1
    assert found["results"][0]["nodeId"] == f"dataset:{sf}:DB.S.ORDERS"
    jobs = server.get("/api/v1/search", q="airflow/", filter="JOB").json()["results"]
    assert [r["nodeId"] for r in jobs] == ["job:airflow:load", "job:airflow:mart"]

    up = server.get("/api/v1/upstream", name=f"{sf}/DB.S.DAILY").json()
    assert up["start"]["urn"] == f"{sf}/DB.S.DAILY"
    assert [(a["urn"], a["distance"]) for a in up["assets"]] == [
        (f"{sf}/DB.S.ORDERS", 1),
        ("s3://raw/sales", 2),
    ]
    down = server.get("/api/v1/downstream", name="s3://raw/sales", depth=1).json()
    assert [a["urn"] for a in down["assets"]] == [f"{sf}/DB.S.ORDERS"]
    impact = server.get("/api/v1/impact", name="s3://raw/sales").json()
    assert {t["urn"] for t in impact["transformations"]} == {
        "openlineage://airflow/load",
        "openlineage://airflow/mart",
    }
    [only] = path
    assert [a["urn"] for a in only["assets"]] == [
        "s3://raw/sales",
        f"{sf}/DB.S.ORDERS",
        f"{sf}/DB.S.DAILY",
    ]

    missing = server.get("/api/v1/upstream", name="s3://raw/sale")
    assert missing.status_code == 404
    assert "s3://raw/sales" in missing.json()["suggestions"]
    assert server.get("/api/v1/upstream", name="s3://raw/sales", depth=0).status_code == 400
    for route, params in (
        ("upstream", {"name": "s3://raw/sales"}),
        ("impact", {"name": "s3://raw/sales"}),
        ("path", ends),
    ):
        odd = server.get(f"/api/v1/{route}", **params, include_deleted="maybe")
        assert odd.status_code == 400, (route, odd.text)
        assert odd.json()["reason"] == "include_deleted must be true or false (got 'maybe')"
    assert server.get("/api/v1/search").json()["reason"] == "the q query parameter is required"
    assert server.get("/api/v1/search", q="x", filter="RUN").status_code == 400


def test_ingestion_runs_beside_a_cli_harvest(server: Server) -> None:
    # The CLI's harvests hold the store's harvest lock; the server ingests without it (as the
    # Spark listener does), so neither waits for nor fails on the other.
    with harvest_lock(lock_file(str(server.data_dir))):
        client(server).emit(run_event("beside", [("s3://b", "in")], [("s3://b", "out")]))
        answer = wait_for(lambda: _with_nodes(lineage_or_empty(server, "dataset:s3://b:out"), 3))
    assert {n["id"] for n in answer["graph"]} == {
        "dataset:s3://b:in",
        "job:airflow:beside",
        "dataset:s3://b:out",
    }
    assert server.get("/healthz").json()["ingest_error"] is None


def test_lineage_as_of_a_time_over_http(server: Server) -> None:
    """`asOf` on the Marquez route and `as_of` on the CLI's: a job that read a and b, then
    only a; the graph before the change still has b (docs/history.md)."""
    for day, inputs in ((1, ["a", "b"]), (2, ["a"])):
        body = {"eventType": "COMPLETE", "eventTime": f"2024-03-0{day}T00:00:00Z",
                "producer": "tests", "run": {"runId": f"r{day}"},
                "job": {"namespace": "etl", "name": "daily"},
                "inputs": [{"namespace": "s3://lake", "name": n} for n in inputs],
                "outputs": [{"namespace": "s3://lake", "name": "o"}]}  # fmt: skip
        assert server.post(json.dumps(body)).status_code == 201

    def datasets(**params: str) -> set[str]:
        answer = server.get("/api/v1/lineage", nodeId="dataset:s3://lake:o", **params)
        assert answer.status_code == 200, answer.text
        return {n["id"] for n in answer.json()["graph"] if n["type"] == "DATASET"}

    wait_for(lambda: server.get("/api/v1/upstream", name="s3://lake/o").ok)
    wait_for(lambda: datasets(asOf="2024-03-02") == {"dataset:s3://lake:a", "dataset:s3://lake:o"})
    assert datasets() == {"dataset:s3://lake:a", "dataset:s3://lake:o"}
    assert datasets(asOf="2024-03-01T12:00:00Z") == {
        "dataset:s3://lake:a", "dataset:s3://lake:b", "dataset:s3://lake:o"
    }  # fmt: skip
    up = server.get("/api/v1/upstream", name="s3://lake/o", as_of=str(1709251200000)).json()
    assert up["as_of"] == 1709251200000
    assert {a["urn"] for a in up["assets"]} == {"s3://lake/a", "s3://lake/b"}
    bad = server.get("/api/v1/lineage", nodeId="dataset:s3://lake:o", asOf="tuesday")
    assert bad.status_code == 400
    assert "asOf: not a time: 'tuesday'" in bad.json()["reason"]
