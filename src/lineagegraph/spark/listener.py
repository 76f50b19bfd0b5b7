"""The QueryExecutionListener (a Py4J callback) and the worker thread that records lineage.

Spark calls the listener on its listener-bus thread after an action ends. The callback reads
the plan into plain values (`plan.capture_success`), puts them on a bounded queue and returns;
when the queue is full the action is dropped and counted, so the job never waits for lineage.
The worker thread analyses each plan and sends the action to its sinks: the graph (one
long-running :HarvestRun per application, spooling to disk while the graph is unreachable)
and/or OpenLineage RunEvents: JSON lines, posts to an endpoint (spark.http), or messages on a
Kafka topic (spark.kafka). Every
exception is caught and logged: lineage never breaks a job.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from contextlib import ExitStack
from typing import Any, ClassVar, Protocol

from lineagegraph.graph.store import open_store
from lineagegraph.pipeline import HarvestRun, harvest_run
from lineagegraph.settings import Settings
from lineagegraph.spark import plan
from lineagegraph.spark.actions import (
    AppInfo,
    Naming,
    RunEventSink,
    SparkAction,
    analyze,
    write_actions,
)
from lineagegraph.spark.http import HttpSink
from lineagegraph.spark.spool_files import append_lines, spool_file_name
from lineagegraph.spark.threads import Counts, wait_for_queue

log = logging.getLogger("lineagegraph.spark")
_STOP = object()
_NESTED_WINDOW = 64  # recent actions remembered to recognise a command's nested writes


class Sink(Protocol):
    def action(self, action: SparkAction) -> None: ...
    def failure(self, captured: plan.Captured) -> None: ...
    def flush(self, timeout: float) -> bool: ...
    def close(self) -> None: ...


class GraphSink:
    """Writes to the graph inside one :HarvestRun per application; spools while it cannot."""

    def __init__(self, settings: Settings, app: AppInfo, counts: Counts) -> None:
        self.settings = settings
        self.app = app
        self.counts = counts
        self.spool_path = settings.spark.spool_dir / spool_file_name(app)
        self._stack: ExitStack | None = None
        self._run: HarvestRun | None = None
        self._writer: Any = None
        self._store: Any = None
        self._retry_at = 0.0

    def _connect(self) -> bool:
        if self._run is not None:
            return True
        if time.monotonic() < self._retry_at:
            return False
        stack = ExitStack()
        try:
            store = stack.enter_context(open_store(self.settings.graph))
            run, writer = stack.enter_context(
                harvest_run(store, "spark", self.app.name, exclusive=False)
            )
        except Exception as exc:
            stack.close()
            self._retry_at = time.monotonic() + self.settings.spark.retry_seconds
            log.warning("lineage graph unreachable (%s); spooling to %s", exc, self.spool_path)
            return False
        self._stack, self._store, self._run, self._writer = stack, store, run, writer
        return True

    def _disconnect(self, exc: BaseException) -> None:
        log.warning("lost the lineage graph (%s); spooling to %s", exc, self.spool_path)
        stack, self._stack, self._run = self._stack, None, None
        self._retry_at = time.monotonic() + self.settings.spark.retry_seconds
        if stack is not None:
            try:  # records the run as failed, then closes the store
                stack.__exit__(type(exc), exc, exc.__traceback__)
            except Exception:
                log.debug("closing the lost graph store failed", exc_info=True)

    def _write(self, work: Any, record: dict[str, Any]) -> None:
        if self._connect():
            try:
                work()
                self._progress()
                return
            except Exception as exc:
                self._disconnect(exc)
        append_lines(self.spool_path, [record])
        self.counts.add("actions_spooled")

    def action(self, action: SparkAction) -> None:
        self._write(lambda: write_actions(self._store, self._writer, [action]), action.to_record())

    def failure(self, captured: plan.Captured) -> None:
        record = {
            "type": "failure",
            "v": 1,
            "app": self.app.name,
            "func": captured.func,
            "at": captured.start_ms,
            "error": captured.error,
        }
        self._write(lambda: None, record)

    def flush(self, timeout: float) -> bool:
        return True  # every write is done by the time action() returns

    def _progress(self) -> None:
        assert self._run is not None
        self._run.counts |= self.counts.snapshot()  # counters only grow: max is the latest
        counts = {f"count_{k}": v for k, v in sorted(self._run.counts.items())}
        self._store.run("spark_run_progress", {"id": self._run.id, "counts": counts})

    def close(self) -> None:
        if self._stack is not None and self._run is not None:
            self._run.counts |= self.counts.snapshot()
            try:
                self._stack.close()
            except Exception:
                log.warning("closing the lineage harvest run failed", exc_info=True)
        self._stack = self._run = None


class OpenLineageSink(RunEventSink):
    """Appends OpenLineage RunEvents, one JSON line each, for any OpenLineage consumer."""

    def __init__(self, settings: Settings, app: AppInfo) -> None:
        super().__init__(app, settings.spark.openlineage_namespace)
        self.path = settings.spark.openlineage_dir / spool_file_name(app)

    def offer(self, event: dict[str, Any]) -> None:
        append_lines(self.path, [event])

    def flush(self, timeout: float) -> bool:
        return True  # every line is fsynced by the time action() returns

    def close(self) -> None:
        pass


class Worker:
    """Drains the queue on a daemon thread: analyse, drop nested duplicates, send to sinks."""

    def __init__(
        self, app: AppInfo, naming: Naming, sinks: list[Sink], queue_size: int, counts: Counts
    ) -> None:
        self.app = app
        self.naming = naming
        self.sinks = sinks
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self.counts = counts
        self._logged: set[str] = set()
        self._recent: deque[tuple[str, int]] = deque(maxlen=_NESTED_WINDOW)
        self._thread = threading.Thread(target=self._loop, name="lineagegraph-spark", daemon=True)
        self._thread.start()

    def count(self, key: str, n: int = 1) -> None:
        self.counts.add(key, n)

    def offer(self, item: plan.Captured) -> None:
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            self.count("actions_dropped")
            self.log_once(
                "queue-full", "lineage queue full (%d): dropping actions", self.queue.maxsize
            )

    def log_once(self, key: str, message: str, *args: Any) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning(message, *args)

    def _loop(self) -> None:
        while True:
            item = self.queue.get()
            try:
                if item is _STOP:
                    return
                self._handle(item)
            except Exception:
                self.count("worker_errors")
                log.exception("lineage worker failed on one action; it goes on")
            finally:
                self.queue.task_done()

    def _handle(self, captured: plan.Captured) -> None:
        if captured.error is not None:
            self.count("actions_failed")
            for sink in self.sinks:
                sink.failure(captured)
            return
        analysis = analyze(captured, self.app, self.naming)
        for problem in analysis.problems:
            self.log_once(problem, "lineage partly unreadable: %s", problem)
        for cls in analysis.unknown_nodes:
            self.log_once(cls, "plan node %s unknown: its column lineage is not followed", cls)
        action = analysis.action
        if action is None:
            self.count(f"actions_ignored_{analysis.skipped}")
            return
        if self._nested(action):
            self.count("actions_nested")
            return
        self.count("actions_recorded")
        if analysis.unknown_nodes:
            self.count("actions_with_unknown_nodes")
        for sink in self.sinks:
            sink.action(action)

    def _nested(self, action: SparkAction) -> bool:
        """A command that ran another (saveAsTable runs a CTAS, which runs a file write) ends
        after it, started before it, and writes the same output: the inner one, already
        recorded, carries the lineage."""
        output = action.output.urn
        nested = any(urn == output and start >= action.at for urn, start in self._recent)
        self._recent.append((output, action.at))
        return nested

    def flush(self, timeout: float) -> bool:
        """Wait until every queued action is handled and each sink has delivered it (an HTTP
        sink sends on a thread of its own); False on timeout."""
        deadline = time.monotonic() + timeout
        if not wait_for_queue(self.queue, timeout):
            return False
        return all(sink.flush(max(deadline - time.monotonic(), 0.0)) for sink in self.sinks)

    def stop(self, timeout: float) -> None:
        try:
            self.queue.put(_STOP, timeout=timeout)
        except queue.Full:
            log.warning(
                "lineage worker did not drain in %.0f s; unwritten actions are lost", timeout
            )
            return
        self._thread.join(timeout)
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:
                log.warning("closing a lineage sink failed", exc_info=True)


class QueryListener:
    """The Python side of `org.apache.spark.sql.util.QueryExecutionListener`."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.stopped = False

    def onSuccess(self, funcName: str, qe: Any, durationNs: int) -> None:
        if self.stopped:
            return
        try:
            captured = plan.capture_success(funcName, qe, durationNs)
        except Exception as exc:
            self.worker.count("capture_errors")
            self.worker.log_once(
                f"capture:{type(exc).__name__}",
                "cannot read a Spark plan (%s: %s)",
                type(exc).__name__,
                exc,
            )
            return
        self.worker.offer(captured)

    def onFailure(self, funcName: str, qe: Any, exception: Any) -> None:
        if self.stopped:
            return
        try:
            self.worker.offer(plan.capture_failure(funcName, qe, exception))
        except Exception:
            self.worker.count("capture_errors")
            log.debug("cannot read a failed action", exc_info=True)

    def toString(self) -> str:  # what the JVM's proxy of this listener calls itself
        return f"lineagegraph.spark.QueryListener@{id(self):x}"

    class Java:
        implements: ClassVar = ["org.apache.spark.sql.util.QueryExecutionListener"]


def registered_proxy(manager: Any, listener: QueryListener) -> Any | None:
    """The JVM's proxy of `listener` in a session's ExecutionListenerManager, to unregister it.

    Py4J makes a new proxy each time a Python object is passed to Java, so
    `unregister(listener)` removes nothing; the proxy that `register` made must be passed back.
    """
    name = listener.toString()
    for proxy in manager.listListeners():
        try:
            if proxy.toString() == name:
                return proxy
        except Exception:  # another Python listener without toString
            continue
    return None


def make_sinks(settings: Settings, app: AppInfo, counts: Counts) -> list[Sink]:
    sinks: list[Sink] = []
    if settings.spark.emit in ("graph", "both"):
        sinks.append(GraphSink(settings, app, counts))
    if settings.spark.emit == "kafka":
        from lineagegraph.spark.kafka import KafkaSink  # confluent-kafka: only when asked for

        sinks.append(KafkaSink(settings, app, counts))
    if settings.spark.emit in ("openlineage", "both"):
        if settings.spark.openlineage_url:
            sinks.append(HttpSink(settings, app, counts))
        else:
            sinks.append(OpenLineageSink(settings, app))
    return sinks
