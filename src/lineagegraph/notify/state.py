"""What is remembered between evaluations: each alert's state, and the notifications each
receiver has not yet taken (its outbox), in one JSON file written whole and renamed into place.

An alert notifies on the edge: when it starts firing and when it stops, never on every
evaluation. The edge and the notifications it makes are saved together before anything is
sent, so a crash at any moment neither loses a notification nor makes a second edge; one
killed between a receiver's answer and the save sends that notification again on the next
run (at least once: receivers dedupe by the alert's key). A lock file keeps `serve` and a
`lineagegraph alerts` run from evaluating over each other.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lineagegraph.errors import ConfigError
from lineagegraph.questions.alerts import RESOLVED, Alert

log = logging.getLogger(__name__)
VERSION = 1


@dataclass(frozen=True, slots=True)
class Notification:
    """One edge of one alert to tell a receiver about: `alert.state` is firing or resolved."""

    alert: Alert
    at: int

    def as_dict(self) -> dict[str, Any]:
        return {"alert": self.alert.as_dict(), "at": self.at}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Notification:
        return cls(Alert.from_dict(data["alert"]), int(data["at"]))


@dataclass
class AlertBook:
    """The firing alerts by key, and each receiver's undelivered notifications, oldest first."""

    path: Path
    firing: dict[str, Alert] = field(default_factory=dict)
    outbox: dict[str, list[Notification]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> AlertBook:
        if not path.exists():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                path,
                {k: Alert.from_dict(a) for k, a in data["firing"].items()},
                {
                    name: [Notification.from_dict(n) for n in queued]
                    for name, queued in data["outbox"].items()
                },
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"cannot read the alert state {str(path)!r}: {exc}; move it away to start over "
                "(firing alerts then notify again)"
            ) from None

    def advance(self, now_firing: list[Alert], now: int) -> list[Notification]:
        """Take the alerts firing now; returns the edges: newly firing alerts, and alerts that
        stopped firing (resolved, ended now). A firing alert keeps the `since` it first had."""
        edges: list[Notification] = []
        current: dict[str, Alert] = {}
        for alert in now_firing:
            before = self.firing.get(alert.key)
            if before is None:
                edges.append(Notification(alert, now))
                current[alert.key] = alert
            else:
                current[alert.key] = replace(alert, since=min(before.since, alert.since))
        for key, before in self.firing.items():
            if key not in current:
                edges.append(Notification(replace(before, state=RESOLVED, ended=now), now))
        self.firing = current
        return edges

    def enqueue(self, receivers: list[str], edges: list[Notification], keep: int) -> None:
        """Queue the edges for every receiver, keeping its newest `keep` notifications."""
        for name in receivers:
            queued = self.outbox.setdefault(name, []) + edges
            if len(queued) > keep:
                log.warning("alerts: %s's outbox is full; dropped %d", name, len(queued) - keep)
            self.outbox[name] = queued[-keep:]
        for name in set(self.outbox) - set(receivers):
            del self.outbox[name]  # a receiver no longer configured

    def save(self) -> None:
        """Write the whole file under another name, flush it to disk, then rename it over the
        old one: a crash leaves the old state or the new, never half of one."""
        data = {
            "version": VERSION,
            "firing": {k: a.as_dict() for k, a in self.firing.items()},
            "outbox": {n: [x.as_dict() for x in q] for n, q in self.outbox.items()},
        }
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with tmp.open("w", encoding="utf-8") as out:
            json.dump(data, out, ensure_ascii=False)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the state's lock file while evaluating and sending (waits for another holder)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = (path.parent / f".{path.name}.lock").open("a")
    except OSError as exc:
        raise ConfigError(f"cannot keep the alert state in {str(path.parent)!r}: {exc}") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
