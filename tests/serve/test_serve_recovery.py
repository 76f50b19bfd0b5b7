"""serve keeps going when the store does not (issue 21, items 2 and 4): a store whose server
died is started again and the spool ingested; an event the store refuses is set aside in the
dead-letter file instead of blocking every event behind it."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import requests
from serve_fixtures import Server, run_event, wait_for

from lineagegraph.errors import QueryError, StoreError
from lineagegraph.serve.spool import Ingester, Spool


def event(job: str, dataset: str = "in") -> str:
    from openlineage.client.serde import Serde

    return Serde.to_json(run_event(job, [("s3://b", dataset)], [("s3://b", f"{job}-out")]))


def in_graph(server: Server, job: str) -> bool:
    """Asked over HTTP: opening the store here would start its server for serve."""
    r = requests.get(
        f"{server.url}/api/v1/lineage",
        params={"nodeId": f"job:airflow:{job}"},
        headers=server.headers,
        timeout=30,
    )
    return r.status_code == 200


def metric(server: Server, name: str) -> float:
    for line in server.get("/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "_total "):
            return float(line.split()[1])
    raise AssertionError(f"{name} is not in /metrics")


def test_a_killed_store_server_is_started_again_and_the_spool_ingested(server: Server) -> None:
    assert server.post(event("before")).status_code == 201
    assert wait_for(lambda: in_graph(server, "before"))
    pid = int((server.data_dir / "server.pid").read_text())
    os.kill(pid, signal.SIGKILL)
    # Accepted while the store is down: the spool does not need it.
    assert server.post(event("while-down")).status_code == 201
    assert wait_for(lambda: in_graph(server, "while-down")), server.log()[-3000:]
    health = server.get("/healthz").json()
    assert health["status"] == "ok" and health["store_restarts"] >= 1, health
    assert metric(server, "lineagegraph_store_restarts") >= 1
    assert metric(server, "lineagegraph_store_up") == 1
    new_pid = int((server.data_dir / "server.pid").read_text())
    assert new_pid != pid and Path(f"/proc/{new_pid}").exists()
    assert "starting it again" in server.log()
    assert "Traceback" not in server.log()


def test_an_event_the_store_refuses_is_set_aside_and_the_rest_ingested(server: Server) -> None:
    # A NUL in a dataset name fails in FalkorDB 4.16's query parser; should the store learn to
    # take it, the event is simply ingested: either way it must never block the others.
    assert server.post(event("poisoned", dataset="bad\x00name")).status_code == 201
    for n in range(3):
        assert server.post(event(f"fine{n}")).status_code == 201
    assert wait_for(lambda: all(in_graph(server, f"fine{n}") for n in range(3))), server.log()
    health = server.get("/healthz").json()
    assert health["status"] == "ok" and health["ingest_error"] is None, health
    assert health["events_waiting"] == 0
    dead = server.data_dir / "serve-spool" / "dead-letter.jsonl"
    if health["events_dead_lettered"]:
        assert health["dead_letter_file"] == str(dead)
        (record,) = [json.loads(line) for line in dead.read_text().splitlines()]
        assert "bad\\u0000name" in record["event"] and record["reason"]
        assert metric(server, "lineagegraph_events_dead_lettered") == 1
    else:
        assert in_graph(server, "poisoned")
    assert not list((server.data_dir / "serve-spool" / "ingesting").iterdir())


def test_one_refused_event_among_ten_thousand_is_found_by_halving(tmp_path: Path) -> None:
    """A failure this test controls: the store refuses the one event marked "poison"."""
    spool = Spool(tmp_path)
    lines = [json.dumps({"n": n, "poison": n == 6_001}) for n in range(10_003)]
    spool.append("".join(f"{line}\n" for line in lines).encode(), len(lines))
    ingested: list[str] = []
    tries = 0

    def ingest(directory: Path) -> int:
        nonlocal tries
        tries += 1
        batch = [x for p in sorted(directory.glob("*.jsonl")) for x in p.read_text().splitlines()]
        if any('"poison": true' in line for line in batch):
            raise QueryError("the embedded store rejected the query: poison")
        ingested.extend(batch)
        return len(batch)

    ingester = Ingester(spool, ingest, every_seconds=60, batch_events=100_000)
    ingester.drain()
    assert ingester.last_error is None
    assert ingester.ingested == 10_002 and sorted(ingested) == sorted(lines[:6_001] + lines[6_002:])
    assert tries < 60  # halving: about 2 log2(10,003) harvests, not one per event
    (record,) = [json.loads(x) for x in ingester.dead_letter_path.read_text().splitlines()]
    assert record["event"] == lines[6_001] and "poison" in record["reason"]
    assert ingester.dead_letters == 1
    assert not list(spool.ingesting.iterdir())
    spool.close()


def test_an_unreachable_store_is_not_split_but_started_again_with_backoff(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append(b'{"a":1}\n{"a":2}\n', 2)
    up = False
    revives: list[float] = []

    def ingest(directory: Path) -> int:
        if not up:
            raise StoreError("lost the embedded store: Connection closed by server")
        return 2

    def revive() -> None:
        revives.append(time.monotonic())
        if len(revives) < 3:
            raise StoreError("the embedded FalkorDB server exited at start")

    ingester = Ingester(
        spool, ingest, every_seconds=60, batch_events=10, alive=lambda: up, revive=revive
    )
    ingester.drain()  # the store is found down ...
    assert ingester.last_error and len(revives) == 1
    ingester.drain()  # ... and not tried again before its backoff
    assert len(revives) == 1
    wait_for(lambda: (ingester.drain(), len(revives) == 2)[1], 5)
    assert len(revives) == 2 and revives[1] - revives[0] >= 0.5
    up = True
    ingester.drain()  # answers again (someone else started it): no revive needed
    assert ingester.last_error is None and ingester.ingested == 2 and ingester.dead_letters == 0
    assert ingester.revive_failures == 2 and not ingester.dead_letter_path.exists()
    spool.close()
