"""The listener with emit=kafka: a local Spark job's RunEvents on a real Kafka-protocol broker
(Tansu, tests/services/tansu.py), read back with a plain confluent-kafka consumer, put in the
graph by `harvest kafka` and by serve's consumer; a broker that is down or refuses an event
leaves every event in the local file."""

from __future__ import annotations

import json
import logging
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from services.tansu import FAST_GROUP, create_topic

from lineagegraph.errors import ConfigError
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.kafka import harvest_kafka
from lineagegraph.harvest.kafka_settings import KafkaSettings
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.spark import SPARK_CONF_PREFIXES, install
from lineagegraph.spark.actions import AppInfo, DatasetRef, SparkAction
from lineagegraph.spark.kafka import KafkaSink, message_key
from lineagegraph.spark.threads import Counts

APP = "lineagegraph-tests"
SECRET = "s3cret-never-logged"


def consume(bootstrap: str, topic: str, count: int, timeout: float = 60) -> list[Any]:
    """The first `count` messages of `topic` (a group of its own, from the start)."""
    import time

    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **FAST_GROUP,
        }
    )
    consumer.subscribe([topic])
    messages: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(messages) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                messages.append(message)
    finally:
        consumer.close()
    assert len(messages) == count, f"{len(messages)} of {count} messages on {topic}"
    return messages


def flows(graph: GraphStore) -> set[tuple[str, str]]:
    rows = graph.execute("MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn", {}, write=False).rows
    return {(a, b) for a, b in rows}


def test_a_spark_job_with_emit_kafka_from_its_conf_lands_in_the_graph_through_the_topic(
    spark: Any,
    kafka_bootstrap: str,
    tmp_path: Path,
    graph: GraphStore,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG, logger="lineagegraph")
    topic = create_topic(kafka_bootstrap, f"spark-{uuid.uuid4().hex[:8]}", partitions=3)
    # the password from the driver's environment, merged with the conf's properties;
    # passed through to librdkafka, unused without SASL
    monkeypatch.setenv(
        "LINEAGEGRAPH_SPARK__KAFKA_PROPERTIES", json.dumps({"sasl.password": SECRET})
    )
    (prefix,) = SPARK_CONF_PREFIXES
    conf = {
        "spark.lineagegraph.emit": "kafka",
        "spark.lineagegraph.kafkaBootstrapServers": kafka_bootstrap,
        "spark.lineagegraph.kafkaTopic": topic,
        "spark.lineagegraph.openlineageDir": str(tmp_path / "openlineage"),
        f"{prefix}client.id": "spark-driver-7",
    }
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        handle = install(spark)  # every setting from the job's Spark conf
        try:
            spark.createDataFrame([(1, "ann"), (2, "bob")], ["id", "name"]).write.parquet(
                str(tmp_path / "people")
            )
            spark.read.parquet(str(tmp_path / "people")).select("name").write.parquet(
                str(tmp_path / "names")
            )
            assert handle.flush()
        finally:
            handle.stop()
    finally:
        for key in conf:
            spark.conf.unset(key)

    properties = handle.settings.spark.kafka_properties
    assert {k: v.get_secret_value() for k, v in properties.items()} == {
        "client.id": "spark-driver-7",
        "sasl.password": SECRET,
    }
    assert (handle.counts.get("events_sent"), handle.counts.get("events_unsent")) == (2, None)
    assert not list((tmp_path / "openlineage").glob("*"))  # all delivered: nothing kept
    messages = consume(kafka_bootstrap, topic, 2)
    events = [json.loads(m.value()) for m in messages]
    names = {e["job"]["name"] for e in events}
    assert names == {f"{APP}.file://{tmp_path}/people", f"{APP}.file://{tmp_path}/names"}
    assert {m.key().decode() for m in messages} == {f"run:spark/{name}" for name in names}

    kafka = KafkaSettings(
        bootstrap_servers=kafka_bootstrap, topics=[topic], group_id=f"g-{uuid.uuid4().hex[:8]}",
        client_config=dict(FAST_GROUP), idle_seconds=0.5,
    )  # fmt: skip
    run, report = harvest_kafka(graph, kafka, tmp_path)
    assert run.status == "success" and report.events.complete == 2
    assert (report.consumer.committed, report.consumer.dead_lettered) == (2, 0)
    assert flows(graph) == {(f"file://{tmp_path}/people", f"file://{tmp_path}/names")}
    assert SECRET not in caplog.text


def action(root: Path, app: str, n: int, output: str) -> SparkAction:
    """The lineage of one action as the worker hands it to its sinks: in{n} -> output."""
    return SparkAction(
        app=app,
        app_id="local-7",
        user=None,
        func="command",
        execution_id=n,
        at=1_760_000_000_000 + n,
        duration_ms=5,
        command="InsertIntoHadoopFsRelationCommand",
        mode="Append",
        output=DatasetRef(f"file://{root}/{output}", "Dataset"),
        inputs=[DatasetRef(f"file://{root}/in{n}", "Dataset")],
    )


def kafka_sink(settings_for: Any, root: Path, embedded_dir: Path, **spark: Any) -> KafkaSink:
    settings = settings_for(root, embedded_dir, emit="kafka", **spark)
    (root / "openlineage").mkdir(exist_ok=True)  # install() makes it; these build the sink alone
    return KafkaSink(settings, AppInfo("direct", "local-7"), Counts())


def test_a_jobs_events_keep_their_order_in_one_partition(
    kafka_bootstrap: str, tmp_path: Path, embedded_dir: Path, settings_for: Any
) -> None:
    topic = create_topic(kafka_bootstrap, f"order-{uuid.uuid4().hex[:8]}", partitions=3)
    sink = kafka_sink(
        settings_for,
        tmp_path,
        embedded_dir,
        kafka_bootstrap_servers=kafka_bootstrap,
        kafka_topic=topic,
    )
    outputs = ["a", "b", "c", "d"]
    for n in range(24):  # six runs of each of four jobs, interleaved
        sink.action(action(tmp_path, "direct", n, outputs[n % 4]))
    assert sink.flush(60)
    sink.close()
    assert sink.counts.snapshot()["events_sent"] == 24

    by_key: dict[str, list[Any]] = {}
    for message in consume(kafka_bootstrap, topic, 24):
        by_key.setdefault(message.key().decode(), []).append(message)
    assert len(by_key) == 4
    for key, messages in by_key.items():
        assert len({m.partition() for m in messages}) == 1, key
        starts = [json.loads(m.value())["run"]["facets"]["nominalTime"] for m in messages]
        assert starts == sorted(starts, key=lambda f: f["nominalStartTime"]), key


def test_brokers_that_stay_down_leave_every_event_in_the_local_file(
    tmp_path: Path,
    embedded_dir: Path,
    settings_for: Any,
    unused_port: int,
    graph: GraphStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="lineagegraph")
    sink = kafka_sink(
        settings_for,
        tmp_path,
        embedded_dir,
        kafka_bootstrap_servers=f"127.0.0.1:{unused_port}",
        send_seconds=1,
        kafka_properties={"sasl.password": SECRET},
    )
    for n in range(3):  # handed over at once: librdkafka retries them until send_seconds
        sink.action(action(tmp_path, "down", n, f"out{n}"))
    assert sink.flush(30)
    for n in range(3, 5):  # the brokers count as down now: straight to the file
        sink.action(action(tmp_path, "down", n, f"out{n}"))
    assert sink.flush(5)
    sink.close()

    counts = sink.counts.snapshot()
    assert (counts["events_unsent"], counts["events_sent"], counts["events_lost"]) == (5, 0, 0)
    assert caplog.text.count("unreachable") == 1 and SECRET not in caplog.text
    run, report = harvest_openlineage(graph, tmp_path / "openlineage")  # as the docs say
    assert run.status == "success" and report.complete == 5
    assert flows(graph) == {
        (f"file://{tmp_path}/in{n}", f"file://{tmp_path}/out{n}") for n in range(5)
    }


def test_an_event_the_broker_refuses_is_kept_aside_and_the_next_is_sent(
    kafka_bootstrap: str, tmp_path: Path, embedded_dir: Path, settings_for: Any
) -> None:
    topic = create_topic(kafka_bootstrap, f"big-{uuid.uuid4().hex[:8]}")
    sink = kafka_sink(
        settings_for,
        tmp_path,
        embedded_dir,
        kafka_bootstrap_servers=kafka_bootstrap,
        kafka_topic=topic,
        kafka_properties={"message.max.bytes": "2000"},
    )
    big = action(tmp_path, "big", 0, "out0")
    big.inputs = [DatasetRef(f"file://{tmp_path}/in-{i:04d}", "Dataset") for i in range(100)]
    sink.action(big)
    sink.action(action(tmp_path, "big", 1, "out1"))
    assert sink.flush(30)
    sink.close()

    counts = sink.counts.snapshot()
    assert (counts["events_rejected"], counts["events_sent"]) == (1, 1)
    [kept] = list((tmp_path / "openlineage").glob("*.jsonl.rejected"))
    assert len(json.loads(kept.read_text())["inputs"]) == 100
    [message] = consume(kafka_bootstrap, topic, 1)
    assert json.loads(message.value())["outputs"][0]["name"] == f"{tmp_path}/out1"


def test_settings_librdkafka_refuses_fail_at_install_without_their_secrets(
    spark: Any, tmp_path: Path, embedded_dir: Path, settings_for: Any
) -> None:
    bad = settings_for(
        tmp_path,
        embedded_dir,
        emit="kafka",
        kafka_bootstrap_servers="127.0.0.1:9",
        kafka_properties={"sasl.passwrod": SECRET},
    )
    with pytest.raises(ConfigError, match=r"sasl\.passwrod") as raised:
        install(spark, settings=bad)
    assert SECRET not in str(raised.value)
    unset = settings_for(tmp_path, embedded_dir, emit="kafka")
    with pytest.raises(ConfigError, match="kafka_bootstrap_servers is not set"):
        install(spark, settings=unset)


@pytest.mark.parametrize(
    ("facets", "key"),
    [
        ({}, "run:spark/app.job"),
        ({"parent": {"job": {"namespace": "air", "name": "dag.task"}}}, "run:air/dag.task"),
        (
            {
                "parent": {
                    "job": {"namespace": "air", "name": "dag.task"},
                    "root": {"job": {"namespace": "air", "name": "dag"}},
                }
            },
            "run:air/dag",
        ),
    ],
)
def test_the_message_key_is_the_root_parent_job_like_openlineages_kafka_transport(
    facets: dict[str, Any], key: str
) -> None:
    event = {
        "run": {"runId": "r", "facets": facets},
        "job": {"namespace": "spark", "name": "app.job"},
    }
    assert message_key(event) == key


def test_a_spark_jobs_events_reach_serve_through_its_kafka_consumer(
    spark: Any, kafka_bootstrap: str, tmp_path: Path, embedded_dir: Path, settings_for: Any
) -> None:
    """The whole way: the listener (emit=kafka) -> the topic -> serve's consumer -> the graph,
    read back as a Marquez client reads it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
    from serve_fixtures import Server, wait_for
    from test_http_sink import lineage_of

    topic = create_topic(kafka_bootstrap, f"chain-{uuid.uuid4().hex[:8]}")
    server = Server(
        tmp_path / "store",
        extra_env={
            "LINEAGEGRAPH_KAFKA__BOOTSTRAP_SERVERS": kafka_bootstrap,
            "LINEAGEGRAPH_KAFKA__TOPICS": json.dumps([topic]),
            "LINEAGEGRAPH_KAFKA__GROUP_ID": f"serve-{uuid.uuid4().hex[:8]}",
            "LINEAGEGRAPH_KAFKA__CLIENT_CONFIG": json.dumps(FAST_GROUP),
        },
    )
    settings = settings_for(
        tmp_path,
        embedded_dir,
        emit="kafka",
        kafka_bootstrap_servers=kafka_bootstrap,
        kafka_topic=topic,
    )
    with server.running():
        handle = install(spark, settings=settings)
        try:
            spark.createDataFrame([(1, "ann")], ["id", "name"]).write.parquet(
                str(tmp_path / "people")
            )
            spark.read.parquet(str(tmp_path / "people")).write.parquet(str(tmp_path / "copy"))
            assert handle.flush()
        finally:
            handle.stop()
        assert handle.counts.get("events_sent") == 2
        source, job = f"dataset:file:{tmp_path}/people", f"job:spark:{APP}.file://{tmp_path}/copy"

        def written() -> dict[str, Any] | None:  # the job shows before its output edge lands
            nodes = lineage_of(server, source, job, timeout=90)
            return nodes if nodes[job]["outEdges"] else None

        nodes = wait_for(written, 30)
        assert nodes, f"{job} has no output in serve's graph"
        assert [e["destination"] for e in nodes[job]["outEdges"]] == [
            f"dataset:file:{tmp_path}/copy"
        ]
