"""`lineagegraph serve` with [kafka] settings consumes the topics for good: a real serve
process over loopback, a real Kafka-protocol broker (Tansu), openlineage-python's own
KafkaTransport emitting a run's events, read back the way a Marquez client reads them."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from serve_fixtures import Server, wait_for
from services.tansu import FAST_GROUP, create_topic
from test_serve_disk_full import fill, small_disk  # noqa: F401  (a fixture, found by name)

SECRET = "kafka-s3cret-never-shown"


def serve_env(bootstrap: str, topic: str, group: str) -> dict[str, str]:
    return {
        "LINEAGEGRAPH_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "LINEAGEGRAPH_KAFKA__TOPICS": json.dumps([topic]),
        "LINEAGEGRAPH_KAFKA__GROUP_ID": group,
        "LINEAGEGRAPH_KAFKA__CLIENT_CONFIG": json.dumps(FAST_GROUP),
        # passed through to librdkafka, unused without SASL: it must show nowhere
        "LINEAGEGRAPH_KAFKA__CLIENT_SECRETS": json.dumps({"sasl.password": SECRET}),
        "LINEAGEGRAPH_KAFKA__BATCH_EVENTS": "2",  # several batches, several commits
    }


def emit_run(bootstrap: str, topic: str, job: str, source: str, target: str) -> str:
    """START, RUNNING and COMPLETE of one run, through openlineage-python's KafkaTransport
    (one message each, keyed by the job); the run id."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent
    from openlineage.client.event_v2 import RunState as State
    from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

    transport = KafkaTransport(
        KafkaConfig.from_dict(
            {"config": {"bootstrap.servers": bootstrap}, "topic": topic, "flush": True}
        )
    )
    client = OpenLineageClient(transport=transport)
    run_id = str(uuid.uuid4())
    start = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
    for n, state in enumerate((State.START, State.RUNNING, State.COMPLETE)):
        client.emit(
            RunEvent(
                eventType=state,
                eventTime=(start + timedelta(minutes=n)).isoformat(),
                run=Run(runId=run_id),
                job=Job(namespace="airflow", name=job),
                producer="https://example.com/lineagegraph-tests",
                inputs=[InputDataset(namespace="s3://lake", name=source)],
                outputs=[OutputDataset(namespace="s3://lake", name=target)],
            )
        )
    transport.close()
    return run_id


def produce(bootstrap: str, topic: str, key: str, value: bytes) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, key=key, value=value)
    assert producer.flush(30) == 0


def committed(bootstrap: str, topic: str, group: str, partitions: int) -> int:
    """The group's committed offsets over the topic's partitions, summed (messages done)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        offsets = consumer.committed(
            [TopicPartition(topic, p) for p in range(partitions)], timeout=10
        )
    finally:
        consumer.close()
    return sum(max(tp.offset, 0) for tp in offsets)


def metric(text: str, name: str) -> dict[str, float]:
    """Each series of `name` in an exposition: its labels as written -> its value."""
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}(\{{[^}}]*\}})? (\S+)", line)
        if match:
            found[match.group(1) or ""] = float(match.group(2))
    return found


def test_serve_consumes_a_runs_events_from_kafka_and_shows_the_consumer(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = create_topic(kafka_bootstrap, f"ol-{uuid.uuid4().hex[:8]}", partitions=3)
    group = f"serve-{uuid.uuid4().hex[:8]}"
    job, source, target = "daily.orders", "raw/orders", "clean/orders é"  # names are data
    run_id = emit_run(kafka_bootstrap, topic, job, source, target)
    produce(kafka_bootstrap, topic, f"run:airflow/{job}", b"{not json")  # after the run's own

    server = Server(tmp_path / "store", extra_env=serve_env(kafka_bootstrap, topic, group))
    with server.running():
        node = f"dataset:s3://lake:{source}"

        def marquez() -> dict[str, Any] | None:
            answer = server.get("/api/v1/lineage", nodeId=node, depth=5)
            nodes = {n["id"]: n for n in answer.json().get("graph", [])}
            written = nodes.get(f"job:airflow:{job}", {}).get("outEdges")  # the last to land
            return nodes if written else None

        nodes = wait_for(marquez, 90)
        assert nodes, f"the run never reached the graph: {server.log()[-3000:]}"
        assert [e["destination"] for e in nodes[node]["outEdges"]] == [f"job:airflow:{job}"]
        assert [e["destination"] for e in nodes[f"job:airflow:{job}"]["outEdges"]] == [
            f"dataset:s3://lake:{target}"
        ]
        answer = server.get(f"/api/v1/namespaces/airflow/jobs/{job}").json()
        assert (answer["runs"], answer["lastRunId"]) == (1, run_id)

        def health() -> dict[str, Any] | None:
            body = server.get("/healthz").json()
            kafka = body.get("kafka", {})
            return body if kafka.get("messages_committed") == 4 else None

        body = wait_for(health, 30)
        assert body, server.get("/healthz").text
        kafka = body["kafka"]
        assert body["status"] == "ok" and kafka["status"] == "ok"
        assert (kafka["group"], kafka["topics"], kafka["partitions"]) == (group, topic, 3)
        assert (kafka["messages_consumed"], kafka["messages_dead_lettered"]) == (4, 1)
        assert (kafka["events_accepted"], kafka["failures"], kafka["error"]) == (3, 0, None)
        [letter] = (tmp_path / "store" / "kafka-dead-letter.jsonl").read_text().splitlines()
        assert json.loads(letter)["value"] == "{not json" and kafka["dead_letter"].endswith(
            "kafka-dead-letter.jsonl"
        )

        def lag_settled() -> str | None:
            text = server.get("/metrics").text
            lag = metric(text, "lineagegraph_kafka_consumer_lag")
            return text if len(lag) == 3 and set(lag.values()) == {0.0} else None

        text = wait_for(lag_settled, 30)
        assert text, server.get("/metrics").text
        lag = metric(text, "lineagegraph_kafka_consumer_lag")
        assert sorted(lag) == [f'{{partition="{p}",topic="{topic}"}}' for p in range(3)]
        assert metric(text, "lineagegraph_kafka_messages_consumed_total") == {"": 4.0}
        assert metric(text, "lineagegraph_kafka_messages_committed_total") == {"": 4.0}
        assert metric(text, "lineagegraph_kafka_messages_dead_lettered_total") == {"": 1.0}
        assert metric(text, "lineagegraph_kafka_consumer_up") == {"": 1.0}
        assert metric(text, "lineagegraph_kafka_consumer_lag_sum") == {"": 0.0}
    assert committed(kafka_bootstrap, topic, group, 3) == 4  # every message, once
    assert SECRET not in server.log()


def test_a_serve_killed_and_started_again_reads_on_and_counts_each_run_once(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """A serve killed with -9 while consuming, started again: it reads on from the offsets
    committed (what it read but had not committed is read again) and every run is in the
    graph once."""
    topic = create_topic(kafka_bootstrap, f"ol-{uuid.uuid4().hex[:8]}", partitions=1)
    group = f"serve-{uuid.uuid4().hex[:8]}"
    server = Server(tmp_path / "store", extra_env=serve_env(kafka_bootstrap, topic, group))
    for n in range(3):
        emit_run(kafka_bootstrap, topic, f"job{n}", f"in{n}", f"out{n}")
    with server.running():
        ok = wait_for(lambda: server.get("/healthz").json()["kafka"]["messages_committed"] >= 3)
        assert ok, server.log()[-3000:]
        server.kill(signal.SIGKILL)  # some of the 9 may be spooled but not committed yet
    for n in range(3, 5):
        emit_run(kafka_bootstrap, topic, f"job{n}", f"in{n}", f"out{n}")
    with server.running():
        assert wait_for(lambda: committed(kafka_bootstrap, topic, group, 1) == 15, 90)

        def all_runs() -> list[int] | None:
            if server.get("/healthz").json()["events_waiting"]:
                return None
            found = []
            for n in range(5):
                answer = server.get(f"/api/v1/namespaces/airflow/jobs/job{n}")
                if answer.status_code != 200 or not answer.json()["runs"]:
                    return None
                found.append(answer.json()["runs"])
            return found

        runs = wait_for(all_runs, 90)
        assert runs, server.log()[-3000:]
        assert runs == [1] * 5


@pytest.mark.parametrize(
    ("kafka", "says"),
    [
        ({"TOPICS": "[]"}, r"error: \[kafka\] bootstrap_servers is set but no topics"),
        (
            {"TOPICS": '["t"]', "CLIENT_SECRETS": json.dumps({"sasl.passwrod": SECRET})},
            r"error: \[kafka\] client_config: librdkafka refuses it "
            r'\(No such configuration property: "sasl.passwrod"\)',
        ),
    ],
    ids=["no topics", "a property librdkafka does not know"],
)
def test_kafka_settings_serve_cannot_use_stop_it_at_start_saying_why(
    tmp_path: Path, kafka: dict[str, str], says: str
) -> None:
    env = {"LINEAGEGRAPH_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:9"}
    env.update({f"LINEAGEGRAPH_KAFKA__{k}": v for k, v in kafka.items()})
    server = Server(tmp_path / "store", extra_env=env)
    with pytest.raises(RuntimeError, match="serve exited 2") as raised:
        server.start()
    assert re.search(says, str(raised.value)), raised.value
    assert SECRET not in server.log()


def test_a_full_disk_commits_nothing_and_the_consumer_catches_up_once_freed(
    kafka_bootstrap: str,
    small_disk: Path,  # noqa: F811  (the fixture imported above)
) -> None:
    """The spool cannot take the run's events: no offset is committed, /healthz says why;
    with space again a new consumer reads them from the committed offsets into the graph."""
    topic = create_topic(kafka_bootstrap, f"ol-{uuid.uuid4().hex[:8]}", partitions=1)
    group = f"serve-{uuid.uuid4().hex[:8]}"
    server = Server(small_disk / "store", extra_env=serve_env(kafka_bootstrap, topic, group))
    try:
        server.start()
        filler = fill(small_disk)
        run_id = emit_run(kafka_bootstrap, topic, "on.full.disk", "in", "out")

        def failing() -> dict[str, Any] | None:
            kafka = server.get("/healthz").json()["kafka"]
            return kafka if kafka["failures"] else None

        kafka = wait_for(failing, 60)
        assert kafka, server.get("/healthz").text
        assert kafka["status"] == "degraded" and "disk full" in kafka["error"], kafka
        assert kafka["messages_committed"] == 0
        assert committed(kafka_bootstrap, topic, group, 1) == 0

        filler.unlink()

        def caught_up() -> dict[str, Any] | None:
            """The job once its run is counted: the START may be ingested a batch before."""
            job = server.get("/api/v1/namespaces/airflow/jobs/on.full.disk")
            return job.json() if job.status_code == 200 and job.json()["runs"] else None

        job = wait_for(caught_up, 120)
        assert job, server.log()[-3000:]
        assert (job["runs"], job["lastRunId"]) == (1, run_id)
        assert wait_for(lambda: committed(kafka_bootstrap, topic, group, 1) == 3, 30)
        assert wait_for(lambda: server.get("/healthz").json()["kafka"]["status"] == "ok", 30)
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill(signal.SIGTERM)
        with contextlib.suppress(OSError, ValueError):  # never leave a server on the tmpfs
            os.kill(int((small_disk / "store" / "server.pid").read_text()), signal.SIGKILL)


def test_brokers_that_never_answer_make_healthz_degraded_and_say_why(tmp_path: Path) -> None:
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Server(
        tmp_path / "store",
        extra_env={
            **serve_env(f"127.0.0.1:{port}", "openlineage", "nobody"),
            "LINEAGEGRAPH_KAFKA__JOIN_TIMEOUT_SECONDS": "1",
        },
    )
    with server.running():
        body = wait_for(lambda: (b := server.get("/healthz").json())["status"] != "ok" and b, 30)
        assert body, server.get("/healthz").text
        kafka = body["kafka"]
        assert (body["status"], kafka["status"], kafka["partitions"]) == ("degraded", "degraded", 0)
        assert kafka["error"].startswith(f"no partition of openlineage from 127.0.0.1:{port}")
        text = server.get("/metrics").text
        assert metric(text, "lineagegraph_kafka_consumer_up") == {"": 0.0}
        event = {
            "eventType": "COMPLETE", "eventTime": "2026-12-02T09:00:00Z", "producer": "tests",
            "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "airflow", "name": "j"},
            "inputs": [], "outputs": [],
        }  # fmt: skip
        assert server.post(json.dumps(event)).status_code == 201  # the endpoint goes on
    assert SECRET not in server.log()
