"""`harvest kafka` on a real broker (Tansu): openlineage-python's own Kafka transport in,
the graph and a Marquez-compatible read out; bad messages to the dead letter."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kafka_helpers import LAKE, env, event, flows, kafka_settings, produce, rows, unique
from services.tansu import FAST_GROUP, create_topic

from lineagegraph.cli import cli
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.harvest.kafka import group_lag, harvest_kafka
from lineagegraph.identity import NO_FOLD_RULES
from lineagegraph.serve import marquez
from lineagegraph.settings import GraphSettings

confluent_kafka = pytest.importorskip(
    "confluent_kafka", reason="confluent-kafka is not installed (pip install 'lineagegraph[kafka]')"
)


def emit_run_with_the_client(bootstrap: str, topic: str) -> None:
    """A pipeline's events through openlineage-python's KafkaTransport: a load that reads a
    Kafka topic (START with inputs only, RUNNING, COMPLETE), a publish that fails, and an
    export whose only event names outputs only."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent
    from openlineage.client.event_v2 import RunState as S
    from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

    config = KafkaConfig.from_dict({"config": {"bootstrap.servers": bootstrap}, "topic": topic})
    client = OpenLineageClient(transport=KafkaTransport(config))
    topic_in = InputDataset(namespace=f"kafka://{bootstrap}", name="orders-stream")
    raw = OutputDataset(namespace=LAKE, name="raw/orders")
    raw_in = InputDataset(namespace=LAKE, name="raw/orders")

    def emit(state: S, job: str, run: str, at: str, ins: list[Any], outs: list[Any]) -> None:
        client.emit(
            RunEvent(
                eventType=state,
                eventTime=f"2026-05-01T10:{at}Z",
                run=Run(runId=run),
                job=Job(namespace="etl", name=job),
                producer="tests",
                inputs=ins,
                outputs=outs,
            )
        )

    load, publish, export = (f"0196f6a2-0000-7000-8000-00000000000{n}" for n in (1, 2, 3))
    emit(S.START, "load_orders", load, "00:00", [topic_in], [])
    emit(S.RUNNING, "load_orders", load, "00:30", [topic_in], [])
    emit(S.COMPLETE, "load_orders", load, "01:00", [topic_in], [raw])
    emit(S.START, "publish", publish, "02:00", [raw_in], [])
    emit(S.FAIL, "publish", publish, "03:00", [], [])
    emit(S.COMPLETE, "export", export, "04:00", [], [OutputDataset(namespace=LAKE, name="out/x")])
    client.transport.close()


def test_events_of_the_openlineage_kafka_transport_reach_the_graph(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = create_topic(kafka_bootstrap, unique("ol"), partitions=3)
    group = unique("g")
    emit_run_with_the_client(kafka_bootstrap, topic)
    data_dir = tmp_path / "graph"
    args = ["--data-dir", str(data_dir), "harvest", "kafka"]
    result = CliRunner().invoke(cli, args, env=env(kafka_bootstrap, topic, group))
    assert result.exit_code == 0, result.output
    assert "6 messages, 6 committed, 0 dead-lettered" in result.output
    assert "6 events (2 complete, 1 failed runs, 3 other)" in result.output
    assert all(f"{topic}[{p}]: lag 0" in result.output for p in range(3)), result.output

    stream = f"kafka://{kafka_bootstrap}/orders-stream"  # a topic is a dataset, on its urn
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        assert flows(store) == {(stream, f"{LAKE}/raw/orders")}
        # the failed publish: its run's state is kept, and it counts no lineage run
        assert rows(store, "MATCH (t:Transformation) RETURN t.name, t.runs ORDER BY t.name") == [
            ["export", 1], ["load_orders", 1], ["publish", 0]
        ]  # fmt: skip
        [[status, consumed, committed]] = rows(
            store,
            "MATCH (r:HarvestRun {system: 'kafka'}) "
            "RETURN r.status, r.count_messages_consumed, r.count_messages_committed",
        )
        assert (status, consumed, committed) == ("success", 6, 6)
        node = marquez.resolve(store, "job:etl:load_orders", NO_FOLD_RULES)
        graph = marquez.lineage_graph(store, node, 2, NO_FOLD_RULES)["graph"]
        ids = {n["id"] for n in graph}
        assert {"job:etl:load_orders", f"dataset:kafka://{kafka_bootstrap}:orders-stream",
                f"dataset:{LAKE}:raw/orders"} <= ids  # fmt: skip
        export = marquez.resolve(store, "job:etl:export", NO_FOLD_RULES)
        graph = marquez.lineage_graph(store, export, 1, NO_FOLD_RULES)["graph"]
        assert f"dataset:{LAKE}:out/x" in {n["id"] for n in graph}  # outputs only: kept

    again = CliRunner().invoke(cli, args, env=env(kafka_bootstrap, topic, group))
    assert again.exit_code == 0, again.output
    assert "0 messages, 0 committed" in again.output  # the offsets were committed

    status = CliRunner().invoke(
        cli, ["--data-dir", str(data_dir), "status"], env=env(kafka_bootstrap, topic, group)
    )
    assert status.exit_code == 0, status.output
    assert "kafka lag now (0 messages to read)" in status.output
    status = CliRunner().invoke(
        cli,
        ["--data-dir", str(data_dir), "status", "--format", "json"],
        env=env(kafka_bootstrap, topic, group),
    )
    kafka = json.loads(status.stdout)["kafka"]
    [last] = kafka["harvests"]  # the newest harvest of the group: the second, which read none
    assert (last["status"], last["consumed"], last["lag"]) == ("success", 0, 0)
    assert sorted(p["partition"] for p in kafka["lag"]) == [0, 1, 2]
    assert sum(p["committed"] or 0 for p in kafka["lag"]) == 6
    assert all(p["lag"] == 0 for p in kafka["lag"]) and kafka["unreachable"] is None


def test_a_bad_message_goes_to_the_dead_letter_and_its_partition_moves_on(
    kafka_bootstrap: str, store: GraphStore, tmp_path: Path
) -> None:
    """One partition: each poison message sits between good events; all the good ones are
    written, the bad ones are in the dead-letter topic with where they came from and why."""
    topic = create_topic(kafka_bootstrap, unique("poison"))
    letters = create_topic(kafka_bootstrap, unique("dead"))
    nested = ("[" * 100_000 + "]" * 100_000).encode()
    nul = event("nul\x00job", "r-nul", "2026-05-01T10:00:00Z", ["raw/a\x00b"], ["out/nul"])
    good = [event(f"j{n}", f"r{n}", "2026-05-01T10:00:00Z", [f"raw/{n}"], [f"out/{n}"])
            for n in range(4)]  # fmt: skip
    poison: list[tuple[bytes | None, str]] = [
        (b"{not json", "malformed JSON"),
        (nested, "nested too deep"),
        (json.dumps({"eventType": "DONE", "job": 1}).encode(), "not an OpenLineage event"),
        (b"\xff\xfe", "not UTF-8"),
        (None, "an empty message"),
    ]
    messages: list[tuple[str | None, bytes | None]] = [("k", json.dumps(good[0]).encode())]
    for n, (value, _) in enumerate(poison):
        messages += [("k", value), ("k", json.dumps(good[(n % 3) + 1]).encode())]
    messages.append(("k", json.dumps(nul).encode()))
    produce(kafka_bootstrap, topic, messages)

    settings = kafka_settings(kafka_bootstrap, topic, unique("g"), dead_letter_topic=letters)
    run, report = harvest_kafka(store, settings, tmp_path, exclusive=False)
    assert report.consumer.consumed == len(messages) == report.consumer.committed
    assert report.consumer.dead_lettered == len(poison)
    assert report.consumer.total_lag == 0
    assert run.counts["messages_dead_lettered"] == len(poison)
    expected = {(f"{LAKE}/raw/{n}", f"{LAKE}/out/{n}") for n in range(4)}
    # A NUL is data the graph holds (as from files): that event is taken, not dead-lettered.
    assert flows(store) == expected | {(f"{LAKE}/raw/a\x00b", f"{LAKE}/out/nul")}

    reader = confluent_kafka.Consumer({
        "bootstrap.servers": kafka_bootstrap, "group.id": unique("dlq"),
        "auto.offset.reset": "earliest", **FAST_GROUP,
    })  # fmt: skip
    reader.subscribe([letters])
    got: list[Any] = []
    for _ in range(100):
        got += [m for m in reader.consume(10, timeout=0.5) if m.error() is None]
        if len(got) == len(poison):
            break
    reader.close()
    assert [m.value() for m in got] == [value for value, _ in poison]
    for message, (_, reason) in zip(got, poison, strict=True):
        headers = {k: v.decode() for k, v in message.headers()}
        assert headers["lineagegraph.topic"] == topic
        assert headers["lineagegraph.partition"] == "0"
        assert reason in headers["lineagegraph.reason"], headers
    offsets = [int(dict(m.headers())["lineagegraph.offset"]) for m in got]
    assert offsets == [1, 3, 5, 7, 9]

    # (Tansu 0.6 reports a partition's end as its last batch's first offset + 1, so the end
    # is not compared: the committed offset is the count of messages produced.)
    lag = group_lag(settings)
    assert [(p.partition, p.committed, p.lag) for p in lag] == [(0, 12, 0)]


def test_without_a_dead_letter_topic_bad_messages_go_to_a_file(
    kafka_bootstrap: str, store: GraphStore, tmp_path: Path
) -> None:
    topic = create_topic(kafka_bootstrap, unique("file"))
    ok = event("j", "r", "2026-05-01T10:00:00Z", ["raw/in"], ["out/done"])
    produce(kafka_bootstrap, topic, [("a", b"\x00garbage\xff"), ("b", json.dumps(ok).encode())])
    settings = kafka_settings(kafka_bootstrap, topic, unique("g"))
    _, report = harvest_kafka(store, settings, tmp_path, exclusive=False)
    assert report.dead_letter == str(tmp_path / "kafka-dead-letter.jsonl")
    [line] = (tmp_path / "kafka-dead-letter.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["topic"] == topic and (record["partition"], record["offset"]) == (0, 0)
    assert record["key"] == "a" and "not UTF-8" in record["reason"]
    assert base64.b64decode(record["value_base64"]) == b"\x00garbage\xff"  # as they were
    assert (tmp_path / "kafka-dead-letter.jsonl").stat().st_mode & 0o777 == 0o600
    assert flows(store) == {(f"{LAKE}/raw/in", f"{LAKE}/out/done")}
