"""OpenLineage events from Kafka topics into the graph: at least once, one graph, never stuck.

`EventConsumer` is the consumer loop, shared by `harvest kafka` (until caught up, then exit)
and anything that runs it for good: it reads a batch, hands the events to a sink that returns
once they are durably stored (the graph for `harvest kafka`), and only then commits their
offsets. While the sink works the consumer reads the next batch, then pauses the partitions
and keeps polling, so memory stays at two batches and a slow store never costs it its group
membership (librdkafka leaves the group when poll is not called for max.poll.interval.ms).
When a rebalance takes partitions away mid-batch, the batch is finished and committed first.
A replay after a crash writes what is there already: ingestion is idempotent (a job's runs
count only runs newer than its last), so a message read twice changes nothing.

A message that is no event (not UTF-8 or JSON, nested too deep, no OpenLineage event) goes to
the dead letter (a topic, or a JSON-lines file), is counted and committed like the others: one
bad message never blocks its partition. Every event type is taken, as from files: COMPLETE
events are lineage, the others are counted and their quality assertions kept.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lineagegraph import identity
from lineagegraph.errors import ConfigError, HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.base import HarvestReport, Progress, Tick
from lineagegraph.harvest.kafka_settings import KafkaSettings
from lineagegraph.harvest.openlineage import (
    EventMapper,
    Located,
    OpenLineageReport,
    Sighting,
    _event_pieces,
    _write_window,
)
from lineagegraph.harvest.openlineage_settings import OpenLineageSettings
from lineagegraph.identity import FoldRules
from lineagegraph.jsonlines import BadText, parse_json
from lineagegraph.pipeline import HarvestRun, harvest_run
from lineagegraph.settings import Settings

if TYPE_CHECKING:
    from confluent_kafka import Consumer, Message, TopicPartition

log = logging.getLogger(__name__)
SYSTEM = "kafka"
POLL_SECONDS = 0.2  # one poll while a batch is written, or while waiting for messages
DEAD_LETTER_FILE = "kafka-dead-letter.jsonl"
# librdkafka buffers up to 64 MiB per partition by default: this bounds the consumer's memory
# to a few times a batch whatever the backlog (a user's client_config may set it otherwise).
QUEUED_KBYTES = 16 * 1024

Partition = tuple[str, int]


def client() -> Any:
    """The confluent_kafka module, or a ConfigError saying how to install it."""
    try:
        import confluent_kafka
    except ImportError:
        raise ConfigError(
            "reading Kafka needs confluent-kafka: pip install 'lineagegraph[kafka]'"
        ) from None
    return confluent_kafka


def check_config(settings: KafkaSettings) -> None:
    """A ConfigError naming what [kafka] lacks to consume, before anything starts."""
    if not settings.bootstrap_servers:
        raise ConfigError("no [kafka] bootstrap_servers (LINEAGEGRAPH_KAFKA__BOOTSTRAP_SERVERS)")
    if not settings.subscription():
        raise ConfigError("no [kafka] topics or topic_pattern (LINEAGEGRAPH_KAFKA__TOPICS)")


def client_config(settings: KafkaSettings) -> dict[str, Any]:
    """The librdkafka properties every client of [kafka] shares (brokers, security)."""
    check_config(settings)
    return {
        "bootstrap.servers": settings.bootstrap_servers,
        "client.id": "lineagegraph",
        "logger": logging.getLogger("lineagegraph.kafka.client"),
        **settings.client_config,
        **{name: secret.get_secret_value() for name, secret in settings.client_secrets.items()},
    }


def consumer_config(settings: KafkaSettings) -> dict[str, Any]:
    """The consumer's properties: offsets are stored and committed by us only, after the
    events are stored; partition ends are reported (how `harvest kafka` knows it caught up)."""
    return {
        "queued.max.messages.kbytes": QUEUED_KBYTES,
        **client_config(settings),
        "group.id": settings.group_id,
        "auto.offset.reset": settings.auto_offset_reset,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
    }


# --- the dead letter -----------------------------------------------------------------------


@dataclass(frozen=True)
class BadMessage:
    """A message that is no event, and why."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    reason: str

    def record(self) -> dict[str, Any]:
        """Its dead-letter line: the value as text when it is UTF-8, else base64."""
        out: dict[str, Any] = {
            "topic": self.topic, "partition": self.partition, "offset": self.offset,
            "reason": self.reason,
        }  # fmt: skip
        for name, raw in (("key", self.key), ("value", self.value)):
            try:
                out[name] = None if raw is None else raw.decode("utf-8")
            except UnicodeDecodeError:
                out[f"{name}_base64"] = base64.b64encode(raw).decode("ascii")  # type: ignore[arg-type]
        return out


class DeadLetter(Protocol):
    """Keeps bad messages durably: `put` returns once they are stored."""

    where: str

    def put(self, messages: list[BadMessage]) -> None: ...


@dataclass
class DeadLetterFile:
    """Bad messages appended to a JSON-lines file (0600: messages may hold anything), fsynced."""

    path: Path

    @property
    def where(self) -> str:
        return str(self.path)

    def put(self, messages: list[BadMessage]) -> None:
        if not messages:
            return
        text = "".join(json.dumps(m.record(), ensure_ascii=False) + "\n" for m in messages)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, text.encode("utf-8", "surrogateescape"))
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise HarvestError(
                f"cannot write the Kafka dead-letter file {str(self.path)!r}: {exc.strerror}"
            ) from None


class DeadLetterTopic:
    """Bad messages produced to a topic, key and value as they were, with headers saying
    where they came from and why; `put` waits until the brokers have them."""

    def __init__(self, settings: KafkaSettings, topic: str) -> None:
        self.where = f"topic {topic!r}"
        self.topic = topic
        self.producer = client().Producer({**client_config(settings), "acks": "all"})

    def put(self, messages: list[BadMessage]) -> None:
        failed: list[str] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                failed.append(str(err))

        for m in messages:
            headers = [
                ("lineagegraph.topic", m.topic.encode()),
                ("lineagegraph.partition", str(m.partition).encode()),
                ("lineagegraph.offset", str(m.offset).encode()),
                ("lineagegraph.reason", m.reason.encode("utf-8", "replace")),
            ]
            self.producer.produce(
                self.topic, value=m.value, key=m.key, headers=headers, on_delivery=delivered
            )
        left = self.producer.flush(60)
        if left or failed:
            reason = failed[0] if failed else f"{left} messages not delivered within 60 s"
            raise HarvestError(f"cannot write to the Kafka dead-letter {self.where}: {reason}")


def dead_letter(settings: KafkaSettings, data_dir: Path) -> DeadLetter:
    """Where [kafka] sends bad messages: its topic, else its file (default in `data_dir`)."""
    if settings.dead_letter_topic:
        return DeadLetterTopic(settings, settings.dead_letter_topic)
    return DeadLetterFile(settings.dead_letter_file or data_dir / DEAD_LETTER_FILE)


# --- the consumer --------------------------------------------------------------------------


class Sink(Protocol):
    """Stores events durably; returns those it refuses as no event, each with the reason.
    `events` is parsed as it is iterated (once): a batch is never held as parsed JSON."""

    def __call__(self, events: Iterable[Located]) -> list[tuple[Located, str]]: ...


@dataclass
class PartitionLag:
    """How far a group is behind in one partition, when last measured."""

    topic: str
    partition: int
    committed: int | None  # the next offset the group reads; None when it committed none
    end: int  # the partition's high watermark
    lag: int  # messages after `committed` (from the start when None)

    def line(self) -> str:
        return f"{self.topic}[{self.partition}]: lag {self.lag:,}"


@dataclass
class ConsumerCounts:
    """What a consumer did, for reports, `status` and metrics."""

    consumed: int = 0  # messages read
    dead_lettered: int = 0
    committed: int = 0  # messages whose offsets are committed
    rebalances: int = 0
    lag: list[PartitionLag] = field(default_factory=list)

    @property
    def total_lag(self) -> int:
        return sum(p.lag for p in self.lag)


@dataclass
class _Batch:
    """Messages handed to the sink, and the offsets to commit once they are stored."""

    offsets: dict[Partition, int]  # the next offset to read, per partition
    sizes: dict[Partition, int]  # messages per partition
    future: Future[None] | None = None
    committed: set[Partition] = field(default_factory=set)


class EventConsumer:
    """One member of [kafka] group_id reading OpenLineage events into a sink.

    `run(until_caught_up=True)` returns when every assigned partition is at its end (a cron
    harvest); with `stop` (a threading.Event) it runs until that is set. `counts` is updated
    as it goes and may be read from another thread."""

    def __init__(
        self,
        settings: KafkaSettings,
        sink: Sink,
        letters: DeadLetter,
        *,
        extra_config: dict[str, Any] | None = None,
    ) -> None:
        check_config(settings)
        self.settings = settings
        self.sink = sink
        self.letters = letters
        self.counts = ConsumerCounts()
        self._config = {**consumer_config(settings), **(extra_config or {})}
        self._consumer: Consumer | None = None
        self._pending: list[Message] = []  # read while paused: the start of the next batch
        self._at_end: set[Partition] = set()
        self._assigned: set[Partition] = set()
        self._batch: _Batch | None = None
        self._paused = False  # the partitions, while a batch is written and the next read
        self._errors: list[str] = []
        self._pool: ThreadPoolExecutor | None = None

    # -- the loop

    def run(self, *, until_caught_up: bool = True, stop: threading.Event | None = None) -> None:
        """Consume until caught up (or until `stop` is set); the consumer leaves its group at
        the end. Until caught up, raises HarvestError when no partition is assigned within
        join_timeout_seconds; with `stop` it waits for partitions as long as it runs."""
        kafka = client()
        consumer = self._consumer = kafka.Consumer({**self._config, "error_cb": self._error})
        pool = self._pool = ThreadPoolExecutor(1, thread_name_prefix="lineagegraph-kafka-sink")
        try:
            consumer.subscribe(
                self.settings.subscription(),
                on_assign=self._on_assign,
                on_revoke=self._on_revoke,
                on_lost=self._on_lost,
            )
            self._loop(consumer, until_caught_up, stop or threading.Event())
            self.counts.lag = self.lag()
        finally:
            pool.shutdown(wait=True)
            consumer.close()
            self._consumer = None

    def _loop(self, consumer: Consumer, until_caught_up: bool, stop: threading.Event) -> None:
        joined_by = time.monotonic() + self.settings.join_timeout_seconds
        idle_since = time.monotonic()
        while not stop.is_set():
            messages = self._gather(consumer)
            if messages:
                self._handle(consumer, messages)
                idle_since = time.monotonic()
                continue
            if not self._assigned:
                if until_caught_up and time.monotonic() > joined_by:
                    why = f"; last error: {self._errors[-1]}" if self._errors else ""
                    raise HarvestError(
                        f"Kafka group {self.settings.group_id!r} got no partition of "
                        f"{', '.join(self.settings.subscription())} from "
                        f"{self.settings.bootstrap_servers} within "
                        f"{self.settings.join_timeout_seconds:g} s{why}"
                    )
                idle_since = time.monotonic()
                continue
            if (
                until_caught_up
                and self._assigned <= self._at_end
                and time.monotonic() - idle_since >= self.settings.idle_seconds
            ):
                return

    def _gather(self, consumer: Consumer) -> list[Message]:
        """The next batch: up to batch_events messages, read for at most batch_seconds, or
        until a poll brings nothing (the partitions are at their end)."""
        messages, self._pending = self._pending, []
        until = time.monotonic() + self.settings.batch_seconds
        while len(messages) < self.settings.batch_events:
            room = self.settings.batch_events - len(messages)
            got = [m for m in consumer.consume(room, timeout=POLL_SECONDS) if self._is_message(m)]
            messages += got
            if not got or time.monotonic() >= until:
                break
        return messages

    def _is_message(self, message: Message) -> bool:
        """A message to handle; partition ends and errors are noted instead."""
        error = message.error()
        if error is None:
            self._at_end.discard((message.topic(), message.partition()))
            return True
        kafka = client()
        if error.code() == kafka.KafkaError._PARTITION_EOF:
            self._at_end.add((message.topic(), message.partition()))
            return False
        if error.fatal():
            raise HarvestError(f"Kafka consumer failed: {error.str()}")
        self._errors.append(error.str())
        log.warning("kafka: %s", error.str())
        return False

    def _error(self, error: Any) -> None:
        """librdkafka's errors outside a message (a broker down, a failed login): kept for
        the message that says why nothing was assigned."""
        self._errors.append(error.str())
        log.warning("kafka: %s", error.str())

    # -- one batch

    def _handle(self, consumer: Consumer, messages: list[Message]) -> None:
        """Store a batch while the next one is read (then the partitions paused, polling all
        along), then commit it."""
        offsets: dict[Partition, int] = {}
        sizes: dict[Partition, int] = {}
        for message in messages:
            part = (message.topic(), message.partition())
            offsets[part] = message.offset() + 1
            sizes[part] = sizes.get(part, 0) + 1
        batch = self._batch = _Batch(offsets, sizes)
        assert self._pool is not None  # made by run()
        batch.future = self._pool.submit(self._store, messages)
        self.counts.consumed += len(messages)
        try:
            # The next batch is read meanwhile; once it is whole the partitions are paused,
            # and polling goes on (rebalances run in it: _on_revoke, _on_assign).
            while not batch.future.done():
                if self._paused:
                    message = consumer.poll(POLL_SECONDS)
                    got = [message] if message is not None else []
                else:
                    room = self.settings.batch_events - len(self._pending)
                    got = consumer.consume(room, timeout=POLL_SECONDS)
                self._pending += [m for m in got if self._is_message(m)]
                if not self._paused and len(self._pending) >= self.settings.batch_events:
                    consumer.pause(consumer.assignment())
                    self._paused = True
            batch.future.result()  # the sink's error, if any: nothing is committed
        finally:
            self._batch = None
        self._commit(consumer, batch, set(batch.offsets) - batch.committed)
        if self._paused:
            self._paused = False
            consumer.resume(consumer.assignment())

    def _store(self, messages: list[Message]) -> None:
        """In the sink's thread: the events into the sink, the bad ones into the dead letter."""
        bad: list[BadMessage] = []
        refused = self.sink(_parsed(messages, bad))
        if refused:
            message_of = {_where(m): m for m in messages}
            bad += [_bad(message_of[located.where], reason) for located, reason in refused]
        self.letters.put(sorted(bad, key=lambda m: (m.topic, m.partition, m.offset)))
        self.counts.dead_lettered += len(bad)

    def _commit(self, consumer: Consumer, batch: _Batch, parts: set[Partition]) -> None:
        """Commit the batch's offsets of `parts` (those still assigned: a partition given to
        another member is its to commit)."""
        parts = parts & self._assigned
        if not parts:
            return
        kafka = client()
        offsets = [kafka.TopicPartition(t, p, batch.offsets[t, p]) for t, p in sorted(parts)]
        try:
            consumer.commit(offsets=offsets, asynchronous=False)
        except kafka.KafkaException as exc:  # a rebalance under way: the next owner rereads
            log.warning("kafka: offsets not committed (%s); they will be read again", exc)
            return
        batch.committed |= parts
        self.counts.committed += sum(batch.sizes[p] for p in parts)

    # -- rebalances (called inside poll, on this thread)

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Partitions given: paused like the others while they are, else read. (A partition
        paused when it was revoked comes back paused: librdkafka keeps the flag.)"""
        self.counts.rebalances += 1
        self._assigned |= {(tp.topic, tp.partition) for tp in partitions}
        if self._paused:
            consumer.pause(partitions)
        else:
            consumer.resume(partitions)
        log.info("kafka: assigned %s", ", ".join(f"{t.topic}[{t.partition}]" for t in partitions))

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Before partitions go: finish the batch in hand and commit it, so the next owner
        starts after it; forget what was read ahead of them."""
        gone = {(tp.topic, tp.partition) for tp in partitions}
        batch = self._batch
        if batch is not None and batch.future is not None:
            try:
                batch.future.result()
            except Exception:  # the loop raises it; nothing of the batch is committed
                pass
            else:
                self._commit(consumer, batch, gone & set(batch.offsets) - batch.committed)
        self._forget(gone)

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Partitions taken without a revoke (the session expired): nothing can be committed."""
        self._forget({(tp.topic, tp.partition) for tp in partitions})

    def _forget(self, gone: set[Partition]) -> None:
        self._assigned -= gone
        self._at_end -= gone
        self._pending = [m for m in self._pending if (m.topic(), m.partition()) not in gone]

    # -- lag

    def lag(self) -> list[PartitionLag]:
        """The group's lag in each partition this consumer holds, asked of the brokers."""
        if self._consumer is None or not self._assigned:
            return []
        return partition_lag(self._consumer, sorted(self._assigned))


def partition_lag(consumer: Consumer, parts: list[Partition]) -> list[PartitionLag]:
    """The committed offset and high watermark of each of `parts`, for `consumer`'s group."""
    kafka = client()
    committed = consumer.committed([kafka.TopicPartition(t, p) for t, p in parts], timeout=10)
    out = []
    for tp in committed:
        low, high = consumer.get_watermark_offsets(tp, timeout=10, cached=False)
        offset = tp.offset if tp.offset >= 0 else None
        lag = max(high - (low if offset is None else offset), 0)
        out.append(PartitionLag(tp.topic, tp.partition, offset, high, lag))
    return out


def group_lag(settings: KafkaSettings, timeout: float = 10) -> list[PartitionLag]:
    """The lag of [kafka] group_id in every partition of its topics, without joining it (for
    `status`): what a harvest has still to read."""
    kafka = client()
    consumer = kafka.Consumer(consumer_config(settings))
    try:
        listed = consumer.list_topics(timeout=timeout).topics
        pattern = settings.subscription()
        names = [
            name
            for name in sorted(listed)
            if name in settings.topics
            or any(p.startswith("^") and _matches(p, name) for p in pattern)
        ]
        parts = [(name, p) for name in names for p in sorted(listed[name].partitions)]
        return partition_lag(consumer, parts) if parts else []
    finally:
        consumer.close()


@dataclass
class KafkaStatus:
    """`status` on Kafka: each group's last harvest, and the configured group's lag now."""

    harvests: list[dict[str, Any]]  # scope, status, finished, consumed, dead_lettered, ...
    lag: list[PartitionLag]
    unreachable: str | None = None  # why the lag could not be asked for


def kafka_status(store: GraphStore, settings: KafkaSettings) -> KafkaStatus | None:
    """What `status` shows about Kafka; None when nothing was harvested from it and [kafka]
    is not configured. The lag is asked of the brokers (a few seconds at most)."""
    harvests = store.read("kafka_harvests", {"system": SYSTEM})
    if not settings.bootstrap_servers or not settings.subscription():
        return KafkaStatus(harvests, []) if harvests else None
    try:
        return KafkaStatus(harvests, group_lag(settings, timeout=5))
    except Exception as exc:  # the brokers unreachable, a login refused, no client library
        return KafkaStatus(harvests, [], f"{type(exc).__name__}: {exc}")


def _matches(pattern: str, name: str) -> bool:
    return re.fullmatch(pattern[1:], name) is not None


def _where(message: Message) -> str:
    return f"kafka {message.topic()}[{message.partition()}]@{message.offset()}"


def _parsed(messages: list[Message], bad: list[BadMessage]) -> Iterator[Located]:
    """Each message's event, parsed when asked for; those that are no JSON go to `bad`."""
    for message in messages:
        value = message.value()
        try:
            if value is None:
                raise BadText("an empty message (no value)", 0)
            yield Located(_where(message), parse_json(value.decode("utf-8", "surrogateescape")))
        except BadText as exc:
            bad.append(_bad(message, str(exc)))


def _bad(message: Message, reason: str) -> BadMessage:
    return BadMessage(
        message.topic(), message.partition(), message.offset(), message.key(), message.value(),
        reason,
    )  # fmt: skip


# --- the harvest ---------------------------------------------------------------------------


class GraphSink:
    """Events into the graph through one harvest run's writer, mapped as from files."""

    def __init__(self, writer: GraphWriter, mapper: EventMapper, report: OpenLineageReport) -> None:
        self.writer, self.mapper, self.report = writer, mapper, report
        self.written: Callable[[], None] = lambda: None  # told after each batch is written

    def __call__(self, events: Iterable[Located]) -> list[tuple[Located, str]]:
        report = self.report
        window: list[tuple[str, Sighting]] = []
        refused: list[tuple[Located, str]] = []
        for located in events:
            report.events += 1
            skipped = report.skipped_bad
            sighting = _event_pieces(located, self.mapper, report)
            if report.skipped_bad > skipped:  # no event: its reason is the last problem
                refused.append((located, report.problems[-1].removeprefix(f"{located.where}: ")))
            elif sighting is not None:
                window.append((located.where, sighting))
        _write_window(window, self.writer, report)
        self.writer.finish()  # every row written (or counted dropped) before the commit
        self.written()
        return refused


def scope_of(settings: KafkaSettings) -> str:
    """The :HarvestRun scope of a group's harvest: its brokers and group."""
    return f"kafka://{settings.bootstrap_servers}/{settings.group_id}"


@dataclass
class KafkaReport:
    """A `harvest kafka`: the events' report and the consumer's counts."""

    events: OpenLineageReport
    consumer: ConsumerCounts
    dead_letter: str


def harvest_kafka(
    store: GraphStore,
    settings: KafkaSettings,
    data_dir: Path,
    rules: FoldRules = identity.NO_FOLD_RULES,
    *,
    limits: OpenLineageSettings | None = None,
    exclusive: bool = True,
    progress: Progress | None = None,
    extra_config: dict[str, Any] | None = None,
) -> tuple[HarvestRun, KafkaReport]:
    """Consume [kafka] topics until caught up, into the graph; one :HarvestRun. `data_dir`:
    where the default dead-letter file goes. `extra_config`: more librdkafka properties."""
    check_config(settings)
    client()
    report = OpenLineageReport()
    mapper = EventMapper(rules, report.problems, limits)
    letters = dead_letter(settings, data_dir)
    with harvest_run(store, SYSTEM, scope_of(settings), exclusive=exclusive) as (run, writer):
        source = ", ".join(settings.subscription())
        sink = GraphSink(writer, mapper, report)
        if progress is not None:
            sink.written = lambda: progress(Tick(source, report.events, "events"))
        consumer = EventConsumer(settings, sink, letters, extra_config=extra_config)
        try:
            consumer.run(until_caught_up=True)
        finally:
            _count(run, report, consumer.counts, mapper)
        if report.problems:
            run.error = f"{len(report.problems)} problems; first: {report.problems[0]}"
    return run, KafkaReport(report, consumer.counts, letters.where)


def _count(
    run: HarvestRun, report: OpenLineageReport, counts: ConsumerCounts, mapper: EventMapper
) -> None:
    run.counts.update({
        "events": report.events, "events_complete": report.complete,
        "runs_failed": report.failed_runs, "events_not_complete": report.skipped_not_complete,
        "problems": len(report.problems), "events_skipped": report.skipped_bad,
        "events_not_written": len(report.refused), "facets_ignored": mapper.ignored_facets,
        "messages_consumed": counts.consumed, "messages_dead_lettered": counts.dead_lettered,
        "messages_committed": counts.committed, "lag": counts.total_lag,
    })  # fmt: skip


def summary(settings: KafkaSettings, run: HarvestRun, report: KafkaReport) -> str:
    """The line a person reads about a `harvest kafka`."""
    counts, events = report.consumer, report.events
    lag = "; ".join(p.line() for p in counts.lag) or "no partition"
    return (
        f"kafka {', '.join(settings.subscription())} (group {settings.group_id!r}): "
        f"{counts.consumed} messages, {counts.committed} committed, "
        f"{counts.dead_lettered} dead-lettered to {report.dead_letter}; "
        f"{events.events} events ({events.complete} complete, {events.failed_runs} failed "
        f"runs, {events.skipped_not_complete} other); {lag}; run {run.id}: {run.status}"
    )


@dataclass
class KafkaHarvester:
    """`harvest kafka`: the OpenLineage events on [kafka] topics, from where the group left
    off until every partition is read."""

    name = "kafka"
    section = "kafka"
    needs = "[kafka] bootstrap_servers and topics (or topic_pattern)"

    def not_configured(self, settings: Settings) -> str | None:
        kafka = settings.kafka
        if not kafka.bootstrap_servers:
            return "no [kafka] bootstrap_servers"
        return None if kafka.subscription() else "no [kafka] topics or topic_pattern"

    def run(
        self, store: GraphStore, settings: Settings, *, progress: Progress
    ) -> list[HarvestReport]:
        run, report = harvest_kafka(
            store,
            settings.kafka,
            settings.graph.data_dir,
            settings.identity.rules(),
            limits=settings.openlineage,
            progress=progress,
        )
        errors = (
            [f"{len(report.events.refused)} events not written (the store refused them); "
             f"first: {report.events.refused[0]}"]
            if report.events.refused
            else []
        )  # fmt: skip
        return [
            HarvestReport.of_run(
                run, report.events.problems, errors, summary(settings.kafka, run, report)
            )
        ]
