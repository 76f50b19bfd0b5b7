"""`serve` evaluates the alert rules every [alerts] interval_seconds, in a process of its own.

The rules read the whole graph (every freshness window) and walk lineage from every late
asset: seconds of Python and store work. In serve's own process they would share the
interpreter lock with the threads answering lineage requests, and take the read store's lock
statement after statement, so each request round trip could wait for them. The evaluator is a
child process at a lower CPU priority ([alerts] evaluator_nice) with a store connection of its
own (on the embedded store it joins serve's server), which never takes serve's read lock: a
lineage request waits for neither. It notifies too (the alert states, the receivers), as
`lineagegraph alerts` does, and hands back only what /metrics shows (thousands of alerts
would be unpickled under serve's interpreter lock).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
from collections import Counter
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from lineagegraph.errors import StoreError
from lineagegraph.notify import Delivery
from lineagegraph.pipeline import now_ms
from lineagegraph.settings import Settings

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from lineagegraph.graph.store import GraphStore
    from lineagegraph.serve.app import Service

log = logging.getLogger(__name__)
STOP_SECONDS = 30.0
"""How long a stopping serve waits for the evaluator to close its store before killing it."""


@dataclass(frozen=True)
class Outcome:
    """What serve keeps of an evaluation, for /metrics: how many alerts fire by rule and
    severity, and each receiver's delivery."""

    firing: Counter[tuple[str, str]]
    deliveries: list[Delivery]


class EvaluationFailed(Exception):
    """The evaluator process could not evaluate (its error, in words)."""


class AlertLoop:
    """The thread that asks the evaluator process every interval and notifies; `last` is the
    newest evaluation (for /metrics)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.every = service.settings.alerts.interval_seconds
        self.last: Outcome | None = None
        self.evaluations = 0
        self.failures = 0
        self.evaluator = Evaluator(service.settings)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lineagegraph-alerts", daemon=True)

    def start(self) -> None:
        if self.every > 0:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.evaluator.close()

    def evaluate_now(self) -> Outcome:
        self.last = self.evaluator.evaluate(now_ms())
        self.evaluations += 1
        return self.last

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.evaluate_now()
            except Exception as exc:  # the next evaluation tries again; serve goes on
                self.failures += 1
                log.warning("alerts: evaluation failed: %s", exc)
            self._stop.wait(self.every)


class Evaluator:
    """The child process that evaluates the rules over its own store connection and notifies,
    started on the first evaluation and again after it died; one evaluation at a time."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The live evaluator's process id (None before the first evaluation)."""
        return self._process.pid if self._process and self._process.is_alive() else None

    def evaluate(self, now: int) -> Outcome:
        """Evaluate the rules at `now` (epoch ms) and notify: what `lineagegraph alerts` does."""
        with self._lock:
            conn = self._started()
            try:
                conn.send(now)
                kind, value = conn.recv()
            except (EOFError, OSError) as exc:  # it died (killed, out of memory): start anew
                self._end()
                raise EvaluationFailed(
                    f"the evaluator process ended: {exc or 'no answer'}"
                ) from None
        if kind != "ok":
            raise EvaluationFailed(value)
        outcome: Outcome = value
        return outcome

    def close(self) -> None:
        """Ask the evaluator to close its store and end; kill it if it does not in time."""
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(OSError):
                    self._conn.send(None)
            self._end()

    def _started(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self._end()
        # spawn, not fork: serve has threads (and a store client) that a fork would copy mid-use
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(
            target=evaluator_main,
            args=(theirs, self.settings),
            name="lineagegraph-alerts-evaluator",
            daemon=True,
        )
        process.start()
        theirs.close()
        self._process, self._conn = process, ours
        return ours

    def _end(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is not None:
            process.join(STOP_SECONDS)
            if process.is_alive():
                log.warning("alerts: the evaluator process did not stop; killing it")
                process.kill()
                process.join()
        if conn is not None:
            conn.close()


def evaluator_main(conn: Connection, settings: Settings) -> None:
    """The evaluator process: answer each time (epoch ms) with ("ok", Outcome) or ("error",
    why) until None or serve's end of the pipe closes. A lost store is opened again for the
    next evaluation."""
    from lineagegraph.graph.store import open_store
    from lineagegraph.notify import notify
    from lineagegraph.questions.alerts import evaluate

    os.nice(settings.alerts.evaluator_nice)
    # Ctrl-C reaches every process of the terminal's group: serve stops this one in order.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    store: GraphStore | None = None
    try:
        while True:
            try:
                now = conn.recv()
            except EOFError:  # serve is gone
                return
            if now is None:
                return
            reply: tuple[str, Any]
            try:
                if store is None:
                    store = open_store(settings.graph)
                firing = evaluate(store, settings.alerts, now)
                evaluation = notify(settings, firing, now)
                counts = Counter((a.rule, a.severity) for a in evaluation.alerts)
                reply = ("ok", Outcome(counts, evaluation.deliveries))
            except Exception as exc:
                if isinstance(exc, StoreError) and store is not None:
                    with contextlib.suppress(Exception):
                        store.close()
                    store = None
                reply = ("error", str(exc) or type(exc).__name__)
            try:
                conn.send(reply)
            except OSError:  # serve is gone (killed) while this one evaluated
                return
    finally:
        if store is not None:
            store.close()
