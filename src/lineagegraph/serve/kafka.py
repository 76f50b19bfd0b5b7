"""`serve`'s continuous consumer of the [kafka] topics: OpenLineage events from Kafka into the
same spool as the HTTP endpoint's, so they reach the graph the same way.

It runs `harvest kafka`'s consumer loop (lineagegraph.harvest.kafka.EventConsumer) for good on
a thread of its own. Its sink checks each event with the endpoint's checker and appends the
good ones to the spool, returning once they are on disk (written and fsynced); only then does
the loop commit their offsets. So a `kill -9` at any moment loses nothing (uncommitted
messages are read again) and the spool's ingestion is idempotent, as for the endpoint. A
message that is no event goes to [kafka]'s dead letter, as in `harvest kafka`.

When the loop fails (a full disk, a fatal client error), the consumer leaves its group and a
new one starts after a backoff (0.5 s doubling to 30 s); nothing it read uncommitted is lost.
A consumer that gets no partition (brokers unreachable, no such topic) keeps waiting for one;
after join_timeout_seconds /healthz says so. Per-partition lag comes from librdkafka's own
statistics (served on the consumer's thread), never from a call across threads.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lineagegraph.errors import ConfigError
from lineagegraph.harvest.kafka import (
    ConsumerCounts,
    EventConsumer,
    PartitionLag,
    client,
    consumer_config,
    dead_letter,
)
from lineagegraph.harvest.openlineage import EventError, Located
from lineagegraph.serve.events import EventChecker
from lineagegraph.serve.spool import Ingester, Spool
from lineagegraph.settings import Settings, redact, secret_values

log = logging.getLogger(__name__)
STATS_SECONDS = 1.0  # how often librdkafka reports each partition's offsets (the lag)
RESTART_MAX_SECONDS = 30.0  # the longest wait before a failed consumer is started again


@dataclass
class FeedCounts:
    """Messages over every consumer this feed started (each restart starts one afresh)."""

    consumed: int = 0
    dead_lettered: int = 0
    committed: int = 0

    def add(self, counts: ConsumerCounts) -> None:
        self.consumed += counts.consumed
        self.dead_lettered += counts.dead_lettered
        self.committed += counts.committed


class KafkaFeed:
    """The consumer thread: start() once the spool and ingester run, stop() before them."""

    def __init__(self, settings: Settings, spool: Spool, ingester: Ingester) -> None:
        self._secrets = secret_values(settings)
        self._check_client(settings)
        self.settings = settings.kafka
        self.spool = spool
        self.ingester = ingester
        self.letters = dead_letter(settings.kafka, settings.graph.data_dir.expanduser())
        self.subscription = ", ".join(settings.kafka.subscription())
        self._checker = EventChecker(settings.identity.rules(), settings.openlineage)
        self._done = FeedCounts()  # of consumers that ended
        self._consumer: EventConsumer | None = None
        self._counts_lock = threading.Lock()  # a consumer's counts move to _done at once
        self.accepted = 0  # events spooled
        self.failures = 0  # consumer loops that ended in an error
        self.error: str | None = None  # why the last consumer failed, until one is assigned
        self.group_state = "starting"  # librdkafka's join state: "steady" once assigned
        self.assigned = 0  # partitions this member holds
        self.lag: list[PartitionLag] = []  # of those partitions, at the last statistics
        self._waiting_since: float | None = None  # since when no partition is held
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lineagegraph-kafka", daemon=True)

    def _check_client(self, settings: Settings) -> None:
        """A ConfigError at start-up, not a consumer failing for ever: confluent-kafka missing,
        or a librdkafka property it does not take (a client is made and closed at once)."""
        kafka = client()
        try:
            kafka.Consumer(consumer_config(settings.kafka)).close()
        except kafka.KafkaException as exc:
            reason = redact(str(exc.args[0].str() if exc.args else exc), self._secrets)
            raise ConfigError(f"[kafka] client_config: librdkafka refuses it ({reason})") from None

    @property
    def counts(self) -> FeedCounts:
        """Consumed, dead-lettered and committed messages since start."""
        with self._counts_lock:
            done, current = self._done, self._consumer
            total = FeedCounts(done.consumed, done.dead_lettered, done.committed)
            if current is not None:
                total.add(current.counts)
        return total

    @property
    def status(self) -> str:
        """ok (holding partitions), joining (waiting for its group), or degraded: the last
        consumer failed (it is started again), or no partition came for join_timeout_seconds
        (brokers unreachable, no such topic); `problem` says why."""
        if self.problem is not None:
            return "degraded"
        return "ok" if self.assigned else "joining"

    @property
    def problem(self) -> str | None:
        """Why the consumer is not consuming, when that is not just a join under way."""
        if self.error is not None:
            return self.error
        waiting = self._waiting_since
        if self.assigned or waiting is None:
            return None
        waited = time.monotonic() - waiting
        if waited < self.settings.join_timeout_seconds:
            return None
        return (
            f"no partition of {self.subscription} from {self.settings.bootstrap_servers} for "
            f"{waited:.0f} s (group {self.settings.group_id!r}, state {self.group_state})"
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Finish the batch in hand (spooled and committed), leave the group, end the thread."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        delay = 0.5
        while not self._stop.is_set():
            consumer = EventConsumer(
                self.settings,
                self._sink,
                self.letters,
                extra_config={
                    "statistics.interval.ms": int(STATS_SECONDS * 1000),
                    "stats_cb": self._statistics,
                },
            )
            self._consumer = consumer
            self._waiting_since = time.monotonic()
            try:
                consumer.run(until_caught_up=False, stop=self._stop)
            except Exception as exc:
                self.failures += 1
                self.error = redact(f"{type(exc).__name__}: {exc}", self._secrets)
                self.assigned, self.group_state = 0, "failed"
                log.error(
                    "kafka consumer of %s failed (started again in %.1f s): %s",
                    self.subscription,
                    delay,
                    self.error,
                )
            else:
                delay = 0.5
            finally:
                with self._counts_lock:
                    self._done.add(consumer.counts)
                    self._consumer = None
            self._stop.wait(delay)
            delay = min(delay * 2, RESTART_MAX_SECONDS)

    def _sink(self, events: Iterable[Located]) -> list[tuple[Located, str]]:
        """The batch's events into the spool, on disk when this returns; those the endpoint's
        checker refuses are handed back for the dead letter. A spool that cannot be written
        raises: nothing of the batch is committed, and the next consumer reads it again."""
        good: list[dict[str, Any]] = []
        refused: list[tuple[Located, str]] = []
        for located in events:
            try:
                self._checker.check(located.event)
            except EventError as exc:
                refused.append((located, str(exc)))
                continue
            good.append(located.event)
        if good:
            lines = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in good)
            self.spool.append(lines.encode("ascii"), len(good))  # ASCII escapes: one line each
            self.accepted += len(good)
            self.ingester.nudge()
        return refused

    def _statistics(self, text: str) -> None:
        """librdkafka's statistics (inside poll, on the consumer's thread): the group's state
        and, per partition held, the lag behind its committed offset (from the oldest
        message kept when the group committed none)."""
        try:
            stats = json.loads(text)
        except ValueError:
            return
        group = stats.get("cgrp") or {}
        self.group_state = str(group.get("join_state", "unknown"))
        self.assigned = int(group.get("assignment_size", 0))
        if self.assigned and self.group_state == "steady":
            self.error = None
        if self.assigned:
            self._waiting_since = None
        elif self._waiting_since is None:
            self._waiting_since = time.monotonic()
        lag = []
        for topic, values in sorted((stats.get("topics") or {}).items()):
            for number, p in sorted(values.get("partitions", {}).items(), key=_partition):
                if int(number) < 0 or p.get("fetch_state") in (None, "none", "stopped"):
                    continue  # the internal "unassigned" partition, or one not held
                high, low, committed = p["hi_offset"], p["lo_offset"], p["committed_offset"]
                if high < 0:
                    continue  # not known yet
                start = committed if committed >= 0 else max(low, 0)
                held = committed if committed >= 0 else None
                lag.append(PartitionLag(topic, int(number), held, high, max(high - start, 0)))
        self.lag = lag


def _partition(item: tuple[str, Any]) -> int:
    return int(item[0])
