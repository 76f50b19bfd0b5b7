"""What the Kafka tests share: names, producers, events, [kafka] settings on the test broker."""

from __future__ import annotations

import json
import uuid
from typing import Any

from services.tansu import FAST_GROUP

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.kafka_settings import KafkaSettings

LAKE = "s3://lake"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def kafka_settings(bootstrap: str, topic: str, group: str, **more: Any) -> KafkaSettings:
    """[kafka] for the test broker, with the fast group timings."""
    return KafkaSettings(
        **{
            "bootstrap_servers": bootstrap,
            "topics": [topic],
            "group_id": group,
            "client_config": dict(FAST_GROUP),
            "idle_seconds": 0.5,
            **more,
        }
    )


def env(bootstrap: str, topic: str, group: str, **more: Any) -> dict[str, str]:
    """The same [kafka] as LINEAGEGRAPH_KAFKA__* variables, for the CLI."""
    out = {
        "LINEAGEGRAPH_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "LINEAGEGRAPH_KAFKA__TOPICS": json.dumps([topic]),
        "LINEAGEGRAPH_KAFKA__GROUP_ID": group,
        "LINEAGEGRAPH_KAFKA__CLIENT_CONFIG": json.dumps(FAST_GROUP),
        "LINEAGEGRAPH_KAFKA__IDLE_SECONDS": "0.5",
    }
    out.update({f"LINEAGEGRAPH_KAFKA__{k.upper()}": str(v) for k, v in more.items()})
    return out


def event(
    job: str, run: str, at: str, inputs: list[str], outputs: list[str], kind: str = "COMPLETE"
) -> dict[str, Any]:
    """A RunEvent reading and writing datasets of the lake."""

    def sets(names: list[str]) -> list[dict[str, str]]:
        return [{"namespace": LAKE, "name": name} for name in names]

    return {"eventType": kind, "eventTime": at, "run": {"runId": run},
            "job": {"namespace": "tests", "name": job}, "producer": "tests",
            "inputs": sets(inputs), "outputs": sets(outputs)}  # fmt: skip


def produce(bootstrap: str, topic: str, messages: list[tuple[str | None, bytes | None]]) -> None:
    """Messages (key, value) in order, all acknowledged before it returns."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for n, (key, value) in enumerate(messages):
        producer.produce(topic, key=key, value=value)
        if n % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def rows(store: GraphStore, cypher: str, **params: Any) -> list[list[Any]]:
    return store.execute(cypher, params, write=False).rows


def flows(store: GraphStore) -> set[tuple[str, str]]:
    return {(a, b) for a, b in rows(store, "MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn")}
