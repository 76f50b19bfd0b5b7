"""`serve` evaluates the alert rules every [alerts] interval_seconds in a thread of its own:
the rules read the graph through the service's read store one statement at a time (a lineage
request waits for one statement, never for a whole evaluation), and the notifications are sent
without holding it."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from lineagegraph.notify import Evaluation, notify
from lineagegraph.pipeline import now_ms
from lineagegraph.questions.alerts import evaluate

if TYPE_CHECKING:
    from lineagegraph.serve.app import Service

log = logging.getLogger(__name__)


class AlertLoop:
    """The evaluation thread; `last` is the newest evaluation (for /metrics)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.every = service.settings.alerts.interval_seconds
        self.last: Evaluation | None = None
        self.evaluations = 0
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lineagegraph-alerts", daemon=True)

    def start(self) -> None:
        if self.every > 0:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def evaluate_now(self) -> Evaluation:
        settings = self.service.settings
        now = now_ms()
        firing = evaluate(_StatementAtATime(self.service), settings.alerts, now)
        self.last = notify(settings, firing, now)
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


class _StatementAtATime:
    """The service's read store, its lock taken for each statement."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def read(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.service.read(lambda store: store.read(name, params))
        return rows
