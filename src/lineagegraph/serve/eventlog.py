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
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from lineagegraph.errors import StoreError
from lineagegraph.harvest.openlineage import EventError, Located, event_time_ms
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
_INSERT = "INSERT OR IGNORE INTO events (at, received, digest, event) VALUES (?, ?, ?, ?)"
CHUNK = 1000  # events written at a time: a batch of any size is never all in memory


class EventLog:
    """The SQLite file of ingested RunEvents; `recording` from the ingester's thread, `page`
    from any (each read opens its own connection: WAL lets reads run beside a write).

    A file SQLite cannot read (corrupt, not a database) never stops serve: it is moved aside
    (`events.sqlite.corrupt-<time>`, with its -wal and -shm) and a new log started. The file
    is the owner's only (0600), like the spool's: events name every dataset and job."""

    def __init__(self, path: Path, keep: int, keep_days: int) -> None:
        self.path = path
        self.keep = keep
        self.keep_days = keep_days
        self._lock = threading.Lock()  # one writer
        self.problem: str | None = None  # why there is no log at all (the listing answers 503)
        try:
            self._create()
        except (sqlite3.DatabaseError, OSError) as exc:
            aside = self._move_aside()
            log.warning(
                "the event log %s cannot be read (%s: %s); moved aside to %s, starting a new "
                "one (the graph is not affected; GET /api/v1/events/lineage lists events "
                "ingested from now on)",
                path, type(exc).__name__, exc, aside,
            )  # fmt: skip
            try:
                self._create()
            except (sqlite3.DatabaseError, OSError) as again:
                self.keep = 0  # nothing recorded; lineage flows on
                self.problem = f"the event log {path} cannot be created: {again}"
                log.error("%s; serve runs without it", self.problem)

    def _create(self) -> None:
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        if self.path.stat().st_mode & 0o077:  # made by an earlier version, or by hand
            self.path.chmod(0o600)
        with closing(self._connect()) as db:
            db.execute("PRAGMA journal_mode=WAL")  # the first read of the file's header
            db.executescript(_SCHEMA)
            db.execute("SELECT max(seq), min(at) FROM events").fetchone()

    def _move_aside(self) -> Path:
        """Rename the damaged file and its -wal and -shm (whose pages would be replayed into
        a new file of the same name); returns the new name."""
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            with suppress(OSError):  # not there, or cannot be moved: _create says so
                Path(f"{self.path}{suffix}").rename(f"{aside}{suffix}")
                Path(f"{aside}{suffix}").chmod(0o600)  # kept for a person to look at, not all
        return aside

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA synchronous=FULL")  # in the log before the spool file is deleted
        return db

    @contextmanager
    def recording(self) -> Iterator[Recorder]:
        """A recorder to hand the harvest of one batch (`on_event`): its RunEvents are written
        as the harvest reads them, in one transaction committed when the block ends without
        an exception (the batch is in the graph), then what is past retention is dropped. A
        failure of the log is logged, never raised: the graph has the events."""
        recorder = Recorder(self._connect, self.path, self.keep > 0)
        with self._lock:
            try:
                yield recorder
            except BaseException:
                recorder.close()
                raise
            recorder.commit(self._prune)

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
        if self.problem:
            raise StoreError(self.problem)
        with closing(self._connect()) as db:
            rows = db.execute(_PAGE[direction], (after, before, limit, offset)).fetchall()
            [(total,)] = db.execute(_COUNT, (after, before))
        return '{"events":[' + ",".join(r[0] for r in rows) + f'],"totalCount":{total}}}'


class Recorder:
    """The RunEvents of one batch, from what the harvester read (each event's line and time:
    no event is parsed again), written in chunks within one transaction."""

    def __init__(
        self, connect: Callable[[], sqlite3.Connection], path: Path, enabled: bool
    ) -> None:
        self._connect = connect
        self.path = path  # for messages
        self.now = int(time.time() * 1000)
        self.added = 0
        self._rows: list[tuple[int, int, bytes, str]] = []
        self._db: sqlite3.Connection | None = None
        self._on = enabled

    def __call__(self, located: Located, at: int | None) -> None:
        """Keep `located` if it is a RunEvent (Marquez lists those only)."""
        event = located.event
        if not self._on or not isinstance(event, dict) or not isinstance(event.get("run"), dict):
            return
        text = (located.text or "").strip() or json.dumps(event, separators=(",", ":"))
        when = _at(event, self.now) if at is None else at
        self._rows.append((when, self.now, _digest(text), _json(event, text)))
        if len(self._rows) >= CHUNK:
            self._write()

    def _write(self) -> None:
        rows, self._rows = self._rows, []
        try:
            if self._db is None:
                self._db = self._connect()
            before = self._db.total_changes
            self._db.executemany(_INSERT, rows)
            self.added += self._db.total_changes - before
        except Exception as exc:
            self._failed(exc)

    def commit(self, prune: Callable[[sqlite3.Connection, int], None]) -> None:
        """Write the rest, drop what is past retention and commit."""
        if self._on:
            self._write()
        try:
            if self._on and self._db is not None:
                prune(self._db, self.now)
                self._db.commit()
        except Exception as exc:
            self._failed(exc)
        self.close()

    def close(self) -> None:
        """Leave the transaction (rolled back unless committed)."""
        if self._db is not None:
            with suppress(Exception):
                self._db.close()
            self._db = None

    def _failed(self, exc: Exception) -> None:
        """Never a reason to refuse or retry what the graph took: the batch is left out."""
        log.error(
            "the event log %s was not written (the graph was): %s: %s",
            self.path, type(exc).__name__, exc,
        )  # fmt: skip
        self._on = False
        self.added = 0
        self.close()


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
