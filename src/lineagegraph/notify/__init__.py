"""The notifications of one evaluation of the alert rules (lineagegraph.questions.alerts):
advance the remembered states (an alert notifies when it fires and when it resolves), queue the
edges for every receiver, save, then deliver and save what was delivered (docs/alerts.md). No
store is held meanwhile: the caller has read the graph and let it go."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lineagegraph.notify.receivers import DeliveryError, Receiver, receivers
from lineagegraph.notify.state import AlertBook, Notification, locked
from lineagegraph.questions.alerts import Alert
from lineagegraph.settings import Settings

log = logging.getLogger(__name__)
STATE_FILE = Path("alerts") / "state.json"


@dataclass
class Delivery:
    """What one receiver took in an evaluation, what still waits, and why (its last error)."""

    receiver: str
    sent: int
    waiting: int
    error: str | None = None


@dataclass
class Evaluation:
    """The alerts firing now and those resolved by this evaluation, and the deliveries."""

    alerts: list[Alert]
    edges: list[Notification]
    deliveries: list[Delivery] = field(default_factory=list)

    @property
    def shown(self) -> list[Alert]:
        """Firing alerts, then the ones this evaluation resolved."""
        resolved = [n.alert for n in self.edges if n.alert.state != "firing"]
        return self.alerts + resolved


def state_path(settings: Settings) -> Path:
    return (settings.alerts.state_file or settings.graph.data_dir / STATE_FILE).expanduser()


def notify(
    settings: Settings,
    firing: list[Alert],
    now: int,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Evaluation:
    """Take the alerts firing at `now`: remember the edges, queue them for every receiver,
    save, then deliver (no store is held meanwhile: `serve` keeps answering)."""
    path = state_path(settings)
    with locked(path):
        book = AlertBook.load(path)
        edges = book.advance(firing, now)
        targets = receivers(settings.alerts, sleep)
        book.enqueue([r.name for r in targets], edges, settings.alerts.outbox_max)
        book.save()  # the edges are remembered and queued before anything is sent
        alerts = list(book.firing.values())
        deliveries = [_deliver(book, r, alerts) for r in targets]
        book.save()
    return Evaluation(sorted(alerts, key=lambda a: (a.rule, a.key)), edges, deliveries)


def _deliver(book: AlertBook, receiver: Receiver, firing: list[Alert]) -> Delivery:
    queued = book.outbox.get(receiver.name, [])
    try:
        sent = receiver.deliver(queued, firing)
        error = None
    except DeliveryError as exc:
        sent, error = 0, str(exc)
        log.warning("alerts: %s is not taking notifications (kept for later): %s", receiver.name,
                    error)  # fmt: skip
    book.outbox[receiver.name] = queued[sent:]
    return Delivery(receiver.name, sent, len(queued) - sent, error)
