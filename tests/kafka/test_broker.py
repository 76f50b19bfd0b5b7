"""The test broker itself (Tansu over the Kafka protocol, confluent-kafka as the client):
what the Kafka tests rely on, checked on its own so a broker fault is not read as ours."""

from __future__ import annotations

import uuid

import pytest
from services.tansu import FAST_GROUP, create_topic

confluent_kafka = pytest.importorskip(
    "confluent_kafka", reason="confluent-kafka is not installed (pip install 'lineagegraph[kafka]')"
)


def test_produce_consume_commit_and_resume(kafka_bootstrap: str) -> None:
    topic = create_topic(kafka_bootstrap, f"broker-{uuid.uuid4().hex[:8]}", partitions=3)
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka_bootstrap})
    for n in range(300):
        producer.produce(topic, key=f"k{n % 7}", value=f"v{n}".encode())
    assert producer.flush(30) == 0

    group = f"g-{uuid.uuid4().hex[:8]}"
    config = {
        "bootstrap.servers": kafka_bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        **FAST_GROUP,
    }

    def read(count: int) -> list[str]:
        consumer = confluent_kafka.Consumer(config)
        consumer.subscribe([topic])
        values: list[str] = []
        idle = 0  # polls with nothing new once `count` arrived: proves no more comes
        try:
            for _ in range(300):
                batch = consumer.consume(500, timeout=0.5)
                for message in batch:
                    assert message.error() is None, message.error()
                    values.append(message.value().decode())
                if len(values) >= count and consumer.assignment():
                    idle = 0 if batch else idle + 1
                    if idle == 4:
                        break
            if values:
                consumer.commit(asynchronous=False)
            committed = consumer.committed(
                [confluent_kafka.TopicPartition(topic, p) for p in range(3)], timeout=10
            )
        finally:
            consumer.close()
        assert sum(max(tp.offset, 0) for tp in committed) == 300
        return values

    first = read(300)
    assert sorted(first) == sorted(f"v{n}" for n in range(300))
    assert read(0) == []  # the group's committed offsets: nothing is read twice
