"""Sending the listener's OpenLineage RunEvents to a Kafka topic (emit=kafka) without ever
making the Spark job wait.

librdkafka (confluent-kafka's Producer) queues each event and sends it on threads of its own;
`produce` never blocks. A thread of ours serves the delivery reports. Each event is keyed the
way openlineage-python's KafkaTransport keys it (`run:{namespace}/{name}` of the root parent
job, else the parent job, else the job), so a run's events land in one partition, in order;
the producer is idempotent, so retries do not reorder them either.

A broker that does not take an event is retried by librdkafka for `[spark] send_seconds`; then
the brokers count as down for `retry_seconds` and events go straight to the local file, as the
HTTP sender does. An error retrying will not change (no such topic, not authorised, too large)
keeps the event in FILE.rejected. Nothing is dropped: FILE is the one emit=openlineage writes
without a destination (`harvest openlineage` reads it).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from functools import partial
from typing import Any

from lineagegraph.errors import ConfigError
from lineagegraph.settings import Settings, redact
from lineagegraph.spark.actions import AppInfo, RunEventSink
from lineagegraph.spark.settings import SparkSettings
from lineagegraph.spark.spool_files import Unsent, spool_file_name
from lineagegraph.spark.threads import Counts

log = logging.getLogger("lineagegraph.spark")
_POLL_SECONDS = 0.2  # how often delivery reports are served
_CLOSE_SECONDS = 5.0  # what close() still waits for the brokers before keeping the rest


def message_key(event: dict[str, Any]) -> str | None:
    """`run:{namespace}/{name}` of the job whose events must stay in order: the root parent
    job, else the parent job, else the event's job (openlineage-python's KafkaTransport)."""
    facets = _object(_object(event.get("run")).get("facets"))
    parent = _object(facets.get("parent"))
    for job in (_object(parent.get("root")).get("job"), parent.get("job"), event.get("job")):
        if isinstance(job, dict) and job.get("namespace") and job.get("name"):
            return f"run:{job['namespace']}/{job['name']}"
    return None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def producer_config(spark: SparkSettings) -> dict[str, Any]:
    """librdkafka's settings: ours, then `kafka_properties` as given (they win)."""
    assert spark.kafka_bootstrap_servers is not None
    return {
        "bootstrap.servers": spark.kafka_bootstrap_servers,
        "client.id": "lineagegraph-spark",
        "enable.idempotence": True,  # retries keep a partition's order, and write once
        "message.timeout.ms": int(spark.send_seconds * 1000),
        "queue.buffering.max.messages": spark.queue_size,
        "logger": logging.getLogger("lineagegraph.spark.kafka"),
        **{name: value.get_secret_value() for name, value in spark.kafka_properties.items()},
    }


class KafkaSink(RunEventSink):
    """Hands each RunEvent to a librdkafka producer; keeps what the brokers do not take."""

    def __init__(self, settings: Settings, app: AppInfo, counts: Counts) -> None:
        try:
            from confluent_kafka import KafkaError, KafkaException, Producer
        except ImportError:
            raise ConfigError(
                "[spark] emit is 'kafka' but confluent-kafka is not installed "
                "(pip install 'lineagegraph[kafka]')"
            ) from None
        spark = settings.spark
        super().__init__(app, spark.openlineage_namespace)
        self.counts = counts
        self.topic = spark.kafka_topic
        self.retry_seconds = spark.retry_seconds
        self._secrets = [v.get_secret_value() for v in spark.kafka_properties.values()]
        servers = self._redact(spark.kafka_bootstrap_servers or "")
        self.where = f"Kafka topic {self.topic!r} at {servers}"
        self.unsent = Unsent(
            spark.openlineage_dir / spool_file_name(app), counts, self.where, self._redact
        )
        try:
            self.producer = Producer(producer_config(spark))
        except (KafkaException, ValueError, TypeError) as exc:
            raise ConfigError(
                f"[spark] kafka_properties: librdkafka refuses them ({self._redact(str(exc))})"
            ) from None
        self._kafka_error = KafkaError
        self._down_until = 0.0
        self._pending = 0  # produced, delivery report not handled yet
        self._idle = threading.Condition()
        self._closing = threading.Event()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="lineagegraph-kafka", daemon=True)
        self._thread.start()

    def offer(self, event: dict[str, Any]) -> None:
        if self._closing.is_set() or time.monotonic() < self._down_until:
            self.unsent.keep(event, "the Kafka brokers were unreachable")
            return
        value = json.dumps(event, separators=(",", ":")).encode()
        with self._idle:
            self._pending += 1
        try:
            self.producer.produce(
                self.topic,
                value=value,
                key=message_key(event),
                on_delivery=partial(self._delivered, event),
            )
        except BufferError:  # the brokers are slower than the job: keep it, never wait
            self._done()
            self.unsent.keep(event, "the producer's queue is full")
        except Exception as exc:  # KafkaException: too large, unknown topic known already
            self._done()
            self.unsent.reject(event, str(exc))

    def _delivered(self, event: dict[str, Any], error: Any, message: Any) -> None:
        """A delivery report (on the poll thread): sent, or kept locally with why."""
        try:
            if error is None:
                self.counts.add("events_sent")
            elif self._unreachable(error):
                self._went_down(str(error.str()))
                self.unsent.keep(event, error.str())
            else:
                self.unsent.reject(event, error.str())
        except Exception:
            log.exception("handling a Kafka delivery report failed")
        finally:
            self._done()

    def _unreachable(self, error: Any) -> bool:
        """Whether sending again later may work (timed out, brokers down, purged on close)."""
        kafka = self._kafka_error
        later = {kafka._MSG_TIMED_OUT, kafka._TRANSPORT, kafka._ALL_BROKERS_DOWN}
        later |= {kafka._PURGE_QUEUE, kafka._PURGE_INFLIGHT, kafka._TIMED_OUT}
        return bool(error.code() in later or error.retriable())

    def _went_down(self, problem: str) -> None:
        purged = self._closing.is_set()
        if not purged and time.monotonic() >= self._down_until:
            log.warning(
                "%s unreachable (%s); keeping events in %s, trying again in %.0f s",
                self.where,
                self._redact(problem),
                self.unsent.path,
                self.retry_seconds,
            )
        if not purged:
            self._down_until = time.monotonic() + self.retry_seconds

    def _done(self) -> None:
        with self._idle:
            self._pending -= 1
            if self._pending == 0:
                self._idle.notify_all()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                self.producer.poll(_POLL_SECONDS)
            except Exception:
                log.exception("serving Kafka delivery reports failed; going on")

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def flush(self, timeout: float) -> bool:
        """Wait until every event handed over is delivered or kept; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self) -> None:
        """Stop sending: what the brokers have not taken within a few seconds is purged from
        the producer and kept in the local file (it may have arrived too: ingestion of the
        same event twice changes nothing)."""
        self._closing.set()
        if self.producer.flush(_CLOSE_SECONDS):
            self.producer.purge()
        self.producer.flush(_CLOSE_SECONDS)  # serves the purged events' reports
        self._stopped.set()
        self._thread.join(_POLL_SECONDS + 5)
