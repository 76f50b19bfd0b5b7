"""Posting the listener's OpenLineage RunEvents to an HTTP endpoint (`lineagegraph serve`,
Marquez, any OpenLineage consumer) without ever making the Spark job wait.

The worker thread hands each event to a bounded queue; a sender thread of its own posts it.
Connection errors, timeouts, 408, 429 and 5xx are retried with a doubling backoff for up to
`[spark] send_seconds`; then the endpoint counts as down for `retry_seconds` and events go
straight to the local file. Any other 4xx is the endpoint refusing the event (a bad token, a
malformed event): logged with its reason, counted and kept aside, never retried. An event the
endpoint did not take is never dropped: it is appended, as a JSON line, to the same file that
emit=openlineage writes without a URL (`harvest openlineage` reads it), or to FILE.rejected.
"""

from __future__ import annotations

import http.client
import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from lineagegraph.settings import Settings, redact
from lineagegraph.spark.actions import AppInfo, RunEventSink
from lineagegraph.spark.spool_files import Unsent, spool_file_name
from lineagegraph.spark.threads import Counts, wait_for_queue

log = logging.getLogger("lineagegraph.spark")
_STOP = object()
_FIRST_DELAY, _MAX_DELAY = 0.25, 8.0  # seconds between attempts, doubling
_REQUEST_SECONDS = 10.0  # one request's timeout at most
_RETRYABLE = frozenset({408, 425, 429})  # 4xx that mean "later", not "never"


class Refused(Exception):
    """The endpoint answered with a 4xx that retrying will not change."""


class HttpSink(RunEventSink):
    """Queues each action's RunEvent for the sender thread; keeps what it cannot deliver."""

    def __init__(self, settings: Settings, app: AppInfo, counts: Counts) -> None:
        spark = settings.spark
        assert spark.openlineage_url is not None
        super().__init__(app, spark.openlineage_namespace)
        self.counts = counts
        base, path = spark.openlineage_url.rstrip("/"), spark.openlineage_endpoint.lstrip("/")
        self.url = f"{base}/{path}"
        self.headers = {"Content-Type": "application/json"}
        self._secrets: list[str] = []
        if spark.openlineage_token is not None:
            token = spark.openlineage_token.get_secret_value()
            self.headers["Authorization"] = f"Bearer {token}"
            self._secrets.append(token)
        self.send_seconds = spark.send_seconds
        self.retry_seconds = spark.retry_seconds
        self.unsent = Unsent(
            spark.openlineage_dir / spool_file_name(app),
            counts,
            f"OpenLineage endpoint {self._redact(self.url)}",
            self._redact,
        )
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=spark.queue_size)
        self._down_until = 0.0
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lineagegraph-http", daemon=True)
        self._thread.start()

    def offer(self, event: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(event)
        except queue.Full:  # the endpoint is slower than the job: keep it locally, never wait
            self.unsent.keep(event, f"the send queue is full ({self.queue.maxsize})")

    def _loop(self) -> None:
        while True:
            event = self.queue.get()
            try:
                if event is _STOP:
                    return
                self._deliver(event)
            except Exception:
                log.exception("sending an OpenLineage event failed; it is kept locally")
                self.unsent.keep(event, "an unexpected error")
            finally:
                self.queue.task_done()

    def _deliver(self, event: dict[str, Any]) -> None:
        if self._closing.is_set() or time.monotonic() < self._down_until:
            self.unsent.keep(event, "the endpoint was unreachable")
            return
        body = json.dumps(event, separators=(",", ":")).encode()
        deadline = time.monotonic() + self.send_seconds
        delay = _FIRST_DELAY
        while True:
            try:
                self._post(body, min(_REQUEST_SECONDS, max(deadline - time.monotonic(), 0.1)))
                self.counts.add("events_sent")
                return
            except Refused as exc:
                self.unsent.reject(event, str(exc))
                return
            except (OSError, http.client.HTTPException) as exc:  # refused, timeouts, 5xx
                problem = self._redact(str(exc) or type(exc).__name__)
            if self._closing.is_set() or time.monotonic() + delay > deadline:
                self._down_until = time.monotonic() + self.retry_seconds
                log.warning(
                    "OpenLineage endpoint %s unreachable (%s); keeping events in %s, "
                    "trying again in %.0f s",
                    self._redact(self.url),
                    problem,
                    self.unsent.path,
                    self.retry_seconds,
                )
                self.unsent.keep(event, problem)
                return
            self.counts.add("events_retried")
            self._closing.wait(delay)
            delay = min(delay * 2, _MAX_DELAY)

    def _post(self, body: bytes, timeout: float) -> None:
        request = urllib.request.Request(self.url, body, self.headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                response.read()
        except urllib.error.HTTPError as exc:
            if 400 <= exc.code < 500 and exc.code not in _RETRYABLE:
                raise Refused(f"HTTP {exc.code}: {_reason(exc)}") from None
            raise OSError(f"HTTP {exc.code}: {_reason(exc)}") from None

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def flush(self, timeout: float) -> bool:
        """Wait until every queued event is sent or kept; False on timeout."""
        return wait_for_queue(self.queue, timeout)

    def close(self) -> None:
        """Stop posting: whatever is still queued goes to the local file, nothing is lost."""
        self._closing.set()
        self.queue.put(_STOP)  # the sender only appends to a file now: it drains quickly
        self._thread.join(_REQUEST_SECONDS + 5)


def _reason(exc: urllib.error.HTTPError) -> str:
    """The JSON `reason` of an error answer (lineagegraph serve's, Marquez's), else its text."""
    try:
        text = exc.read(4096).decode("utf-8", "replace")
    except OSError:
        return exc.reason if isinstance(exc.reason, str) else "no reason given"
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        reason = body.get("reason") or body.get("message")
        if isinstance(reason, str):
            return reason
    return text.strip()[:200] or str(exc.reason)
