"""The run events serve ingested, kept on disk for Marquez's `GET /api/v1/events/lineage`.

The spool deletes an event once it is in the graph, and the graph keeps what events mean, not
the events. So each batch the ingester has written is also added to a SQLite file beside the
spool (`{data_dir}/serve-spool/events.sqlite`): each RunEvent as it was spooled, its
`eventTime` and when it arrived, indexed by event time for Marquez's paging. A batch ingested
again after a crash adds nothing (each event is keyed by a digest of its text). The log is
bounded: at most `[serve] events_keep` events, none received more than `events_keep_days` ago;
the oldest go first. A page is read from the index, never the whole log.

Marquez lists RunEvents only: DatasetEvents and JobEvents are not kept here. The log is a
record of what was ingested, not a source of the graph: a failure to write it is logged and
ingestion goes on (a missing event in the listing, never a lost one in the graph).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from lineagegraph.harvest.openlineage import EventError, event_time_ms
from lineagegraph.jsonlines import BadText, numbered_lines, parse_json
from lineagegraph.serve.events import BadRequest
from lineagegraph.serve.guard import error
from lineagegraph.serve.reading import int_param

log = logging.getLogger(__name__)

FILE = "events.sqlite"
LIMIT, MAX_LIMIT = 100, 1000  # a page of events: Marquez's default; events may be large
MAX_OFFSET = 10**9
# Marquez's defaults for `before` and `after` (OpenLineageResource.getLineageEvents).
BEFORE_DEFAULT = "2030-01-01T00:00:00+00:00"
AFTER_DEFAULT = "1970-01-01T00:00:00+00:00"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    received INTEGER NOT NULL,
    digest BLOB NOT NULL UNIQUE,
    event TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_at ON events (at, seq);
CREATE INDEX IF NOT EXISTS events_received ON events (received);
"""

Direction = Literal["asc", "desc"]
_LEAP_SECOND = re.compile(r"(T\d{2}:\d{2}):60")  # RFC 3339 allows it; Python's reader does not
_RANGE = "SELECT event FROM events WHERE at >= ? AND at < ? ORDER BY "
_PAGE: dict[Direction, str] = {
    "asc": _RANGE + "at ASC, seq ASC LIMIT ? OFFSET ?",
    "desc": _RANGE + "at DESC, seq DESC LIMIT ? OFFSET ?",
}
_COUNT = "SELECT count(*) FROM events WHERE at >= ? AND at < ?"


class EventLog:
    """The SQLite file of ingested RunEvents; `record` from the ingester's thread, `page` from
    any (each read opens its own connection: WAL lets reads run beside a write)."""

    def __init__(self, path: Path, keep: int, keep_days: int) -> None:
        self.path = path
        self.keep = keep
        self.keep_days = keep_days
        self._lock = threading.Lock()  # one writer
        with closing(self._connect()) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA synchronous=FULL")  # in the log before the spool file is deleted
        return db

    def record(self, directory: Path) -> int:
        """Add the RunEvents of the segment files in `directory` (just ingested), then drop
        what is past retention. Returns the events added; a failure is logged, never raised."""
        if self.keep == 0:
            return 0
        now = int(time.time() * 1000)
        try:
            with self._lock, closing(self._connect()) as db, db:
                before = db.total_changes
                db.executemany(
                    "INSERT OR IGNORE INTO events (at, received, digest, event) "
                    "VALUES (?, ?, ?, ?)",
                    _rows(directory, now),
                )
                added = db.total_changes - before
                self._prune(db, now)
        except Exception as exc:  # never a reason to refuse or retry what the graph took
            log.error(
                "the event log %s was not written (the graph was): %s: %s",
                self.path, type(exc).__name__, exc,
            )  # fmt: skip
            return 0
        return added

    def _prune(self, db: sqlite3.Connection, now: int) -> None:
        db.execute(
            "DELETE FROM events WHERE seq <= (SELECT max(seq) FROM events) - ?", (self.keep,)
        )
        if self.keep_days:
            db.execute(
                "DELETE FROM events WHERE received < ?", (now - self.keep_days * 86_400_000,)
            )

    def page(self, before: int, after: int, direction: Direction, limit: int, offset: int) -> str:
        """Marquez's LineageEventList as JSON text: the events with `after <= eventTime <
        before`, by event time (then arrival), and how many there are. The events' own text
        is copied in, not parsed again."""
        with closing(self._connect()) as db:
            rows = db.execute(_PAGE[direction], (after, before, limit, offset)).fetchall()
            [(total,)] = db.execute(_COUNT, (after, before))
        return '{"events":[' + ",".join(r[0] for r in rows) + f'],"totalCount":{total}}}'


def _rows(directory: Path, now: int) -> Iterator[tuple[int, int, bytes, str]]:
    """(eventTime ms, received ms, digest, text) of each RunEvent in the segment files."""
    for path in sorted(directory.glob("*.jsonl")):
        with path.open(encoding="utf-8", errors="surrogateescape") as fh:
            for _, line in numbered_lines(fh):
                text = (line or "").strip()
                try:
                    event = parse_json(text) if text else None
                except BadText:
                    continue
                if not isinstance(event, dict) or not isinstance(event.get("run"), dict):
                    continue  # not a RunEvent: Marquez lists those only
                yield _at(event, now), now, _digest(text), _json(event, text)


def _at(event: dict[str, Any], now: int) -> int:
    """The event's time in epoch ms (its arrival when it has none readable)."""
    try:
        return event_time_ms(str(event.get("eventTime")))
    except (EventError, OverflowError):
        return now


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).digest()


def _json(event: dict[str, Any], text: str) -> str:
    """The text to answer with: as spooled, unless it holds NaN or Infinity (which Python's
    JSON reader takes and no JSON client does): then written again with those as null."""
    if "NaN" not in text and "Infinity" not in text:
        return text
    return json.dumps(_finite(event), separators=(",", ":"))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def time_param(raw: str | None, name: str, default: str) -> int:
    """`before` or `after` (ISO 8601 with an offset) as epoch ms; BadRequest says why not. A
    time past what epoch ms hold counts as the earliest or latest there is."""
    text = (raw or default).strip()
    normal, leap = _LEAP_SECOND.subn(r"\1:59", text.upper().replace("Z", "+00:00"), 1)
    try:
        moment = datetime.fromisoformat(normal)
    except ValueError:
        raise BadRequest(f"{name} must be an ISO 8601 time (got {text[:40]!r})") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return int(moment.timestamp() * 1000) + 1000 * leap
    except (OverflowError, ValueError):
        return -(2**62) if moment.year < 1970 else 2**62


async def events_route(request: Request) -> Response:
    """GET /api/v1/events/lineage?before=&after=&sortDirection=&limit=&offset= (Marquez's)."""
    params = request.query_params
    raw = params.get("sortDirection", "desc").lower()
    direction: Direction = "asc" if raw == "asc" else "desc"
    try:
        if raw != direction:
            raise BadRequest(f"sortDirection must be asc or desc (got {raw[:40]!r})")
        before = time_param(params.get("before"), "before", BEFORE_DEFAULT)
        after = time_param(params.get("after"), "after", AFTER_DEFAULT)
        limit = int_param(request, "limit", LIMIT, 1, MAX_LIMIT)
        offset = int_param(request, "offset", 0, 0, MAX_OFFSET)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    log_: EventLog = request.app.state.service.events
    text = await run_in_threadpool(log_.page, before, after, direction, limit, offset)
    return Response(text, media_type="application/json")
