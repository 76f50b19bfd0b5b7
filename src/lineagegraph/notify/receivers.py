"""Where alerts go, each in the format its receiver documents: Alertmanager's v2 API, a generic
signed JSON webhook, a Slack incoming webhook, PagerDuty Events v2.

Each receiver takes its queued notifications (lineagegraph.notify.state) and the alerts firing
now, posts them, and says how many of the queue it delivered: those leave the outbox, the rest
stay for the next evaluation. A failed post is retried with doubling waits first.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from lineagegraph import __version__
from lineagegraph.alerts_settings import AlertSettings
from lineagegraph.notify.state import Notification
from lineagegraph.questions.alerts import FIRING, RESOLVED, Alert
from lineagegraph.settings_base import redact

log = logging.getLogger(__name__)
SIGNATURE_HEADER = "X-Lineagegraph-Signature"
USER_AGENT = f"lineagegraph/{__version__}"
PAGERDUTY_KEY_CHARS = 255  # the longest dedup_key PagerDuty takes
PAGERDUTY_SUMMARY_CHARS = 1024
_ERROR_BODY = 200


class DeliveryError(Exception):
    """A receiver did not take a post (unreachable, or not a 2xx answer)."""


def iso(ms: int) -> str:
    """RFC 3339 in UTC with milliseconds, as Alertmanager and PagerDuty read it."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def summary(alert: Alert) -> str:
    """One line a person reads: what, where, since when, and what it reaches."""
    line = f"{alert.rule} {alert.severity}: {alert.subject}: {alert.cause}"
    if alert.blast.assets:
        line += f"; {alert.blast.assets} downstream asset(s), {alert.blast.columns} column(s)"
    if alert.explains:
        line += f"; explains {len(alert.explains)} more late or failing asset(s) below it"
    return line


@dataclass
class Poster:
    """POSTs JSON with retries: `retries` more tries after the first, waiting `backoff`
    seconds and doubling. `sleep` is time.sleep but for tests that count the waits."""

    timeout: float
    retries: int
    backoff: float
    sleep: Callable[[float], None] = time.sleep

    def post(self, url: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
        wait = self.backoff
        for attempt in range(self.retries + 1):
            try:
                return self._once(url, body, headers or {})
            except DeliveryError:
                if attempt == self.retries:
                    raise
                self.sleep(wait)
                wait *= 2
        raise AssertionError("unreachable")

    def _once(self, url: str, body: bytes, headers: dict[str, str]) -> bytes:
        request = urllib.request.Request(url, data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("User-Agent", USER_AGENT)
        for name, value in headers.items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return bytes(answer.read())
        except urllib.error.HTTPError as exc:
            text = exc.read()[:_ERROR_BODY].decode("utf-8", "replace")
            raise DeliveryError(f"HTTP {exc.code}: {text}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise DeliveryError(str(getattr(exc, "reason", exc))) from None


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Receiver(Protocol):
    @property
    def name(self) -> str: ...

    def deliver(self, queued: list[Notification], firing: list[Alert]) -> int:
        """Post; returns how many of `queued`, from the oldest, were delivered."""
        ...


@dataclass
class Alertmanager:
    """Alertmanager's `POST /api/v2/alerts`. It expects a firing alert again and again (it
    resolves one it has not heard of for its resolve_timeout, 5 minutes by default), so every
    evaluation posts every firing alert; a resolved one is posted once with its endsAt."""

    url: str
    poster: Poster

    @property
    def name(self) -> str:
        return f"alertmanager {redact(self.url)}"

    def deliver(self, queued: list[Notification], firing: list[Alert]) -> int:
        now_firing = {a.key for a in firing}
        resolved = [n.alert for n in queued if n.alert.state == RESOLVED]
        body = [self.postable(a) for a in firing]
        body += [self.postable(a) for a in resolved if a.key not in now_firing]
        if body:
            self.poster.post(self.url.rstrip("/") + "/api/v2/alerts", _json(body))
        return len(queued)

    @staticmethod
    def postable(alert: Alert) -> dict[str, Any]:
        """A postableAlert: identified by its labels (alertname, severity, asset)."""
        out: dict[str, Any] = {
            "labels": {
                "alertname": f"lineagegraph_{alert.rule}",
                "severity": alert.severity,
                "asset": alert.subject,
            },
            "annotations": {
                "summary": summary(alert),
                "cause": alert.cause,
                "key": alert.key,
                "downstream_assets": str(alert.blast.assets),
                "downstream_columns": str(alert.blast.columns),
                "downstream": "\n".join(alert.blast.names),
                "owners": ", ".join(alert.blast.owners),
                "explains": "\n".join(alert.explains),
            },
            "startsAt": iso(alert.since),
        }
        if alert.state == RESOLVED and alert.ended is not None:
            out["endsAt"] = iso(alert.ended)
        return out


@dataclass
class Webhook:
    """A generic JSON webhook: one POST of every queued notification, signed
    `X-Lineagegraph-Signature: sha256=<hex HMAC-SHA256 of the body>` when a secret is set."""

    url: str
    secret: str | None
    poster: Poster
    name: str = "webhook"

    def deliver(self, queued: list[Notification], firing: list[Alert]) -> int:
        if not queued:
            return 0
        body = _json({
            "version": 1,
            "sent_at": iso(int(time.time() * 1000)),
            "notifications": [
                {"event": n.alert.state, "at": iso(n.at), "summary": summary(n.alert),
                 "alert": n.alert.as_dict()}
                for n in queued
            ],
        })  # fmt: skip
        headers = {SIGNATURE_HEADER: sign(self.secret, body)} if self.secret else {}
        self.poster.post(self.url, body, headers)
        return len(queued)


def sign(secret: str, body: bytes) -> str:
    """The signature header's value: what a receiver computes from the body to compare."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def _one_by_one(queued: list[Notification], post: Callable[[Notification], None], name: str) -> int:
    """Post each notification in order; stop at the first failure (the rest wait)."""
    for done, notification in enumerate(queued):
        try:
            post(notification)
        except DeliveryError:
            if done == 0:
                raise
            log.warning("alerts: %s took %d of %d notifications", name, done, len(queued))
            return done
    return len(queued)


def _slack_text(text: str) -> str:
    """Slack's message text escapes only &, < and >."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@dataclass
class Slack:
    """A Slack incoming webhook: one message per notification, `{"text": ...}`."""

    url: str
    poster: Poster
    name: str = "slack"

    def deliver(self, queued: list[Notification], firing: list[Alert]) -> int:
        return _one_by_one(queued, self._post, self.name)

    def _post(self, n: Notification) -> None:
        self.poster.post(self.url, _json(self.message(n)))

    @staticmethod
    def message(n: Notification) -> dict[str, Any]:
        a = n.alert
        head = "FIRING" if a.state == FIRING else "RESOLVED"
        lines = [f"*[{head}] {_slack_text(summary(a))}*", f"since {iso(a.since)}"]
        if a.blast.names:
            lines.append("downstream: " + _slack_text(", ".join(a.blast.names)))
        if a.blast.owners:
            lines.append("owners: " + _slack_text(", ".join(a.blast.owners)))
        return {"text": "\n".join(lines)}


@dataclass
class PagerDuty:
    """PagerDuty Events v2: trigger on firing, resolve on resolved, by dedup_key = the alert's
    key (its SHA-256 when longer than PagerDuty's 255 characters)."""

    url: str
    routing_key: str
    poster: Poster
    name: str = "pagerduty"

    def deliver(self, queued: list[Notification], firing: list[Alert]) -> int:
        return _one_by_one(queued, self._post, self.name)

    def _post(self, n: Notification) -> None:
        self.poster.post(self.url, _json(self.event(n)))

    def event(self, n: Notification) -> dict[str, Any]:
        a = n.alert
        event: dict[str, Any] = {"routing_key": self.routing_key, "dedup_key": dedup_key(a.key)}
        if a.state == RESOLVED:
            return event | {"event_action": "resolve"}
        return event | {
            "event_action": "trigger",
            "payload": {
                "summary": summary(a)[:PAGERDUTY_SUMMARY_CHARS],
                "source": a.subject,
                "severity": a.severity,  # info, warning and critical are PagerDuty's too
                "timestamp": iso(a.since),
                "component": a.asset or a.subject,
                "class": a.rule,
                "custom_details": {
                    "cause": a.cause,
                    "downstream_assets": a.blast.assets,
                    "downstream_columns": a.blast.columns,
                    "downstream": list(a.blast.names),
                    "owners": list(a.blast.owners),
                    "explains": list(a.explains),
                },
            },
        }


def dedup_key(key: str) -> str:
    if len(key) <= PAGERDUTY_KEY_CHARS:
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def receivers(
    settings: AlertSettings, sleep: Callable[[float], None] = time.sleep
) -> list[Receiver]:
    """The receivers [alerts] configures, in a stable order (their names key the outboxes)."""
    poster = Poster(settings.timeout_seconds, settings.retries, settings.backoff_seconds, sleep)
    found: list[Receiver] = [Alertmanager(url, poster) for url in settings.alertmanager_urls]
    if settings.webhook_url:
        secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
        found.append(Webhook(settings.webhook_url, secret, poster))
    if settings.slack_webhook_url:
        found.append(Slack(settings.slack_webhook_url.get_secret_value(), poster))
    if settings.pagerduty_routing_key:
        key = settings.pagerduty_routing_key.get_secret_value()
        found.append(PagerDuty(settings.pagerduty_url, key, poster))
    return found
