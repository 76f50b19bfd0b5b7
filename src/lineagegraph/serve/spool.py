"""The durable spool between an accepted OpenLineage event and the graph.

An event is acknowledged (2xx) only once it is in a spool file on disk (written and fsynced),
so a process killed at any moment loses no acknowledged event. Ingestion then runs behind:

* `incoming/` holds segment files of JSON lines, one event per line, in arrival order; the
  newest is the one being appended to;
* to ingest, the current segment is closed and moved to `ingesting/`, and that directory is
  harvested by `harvest_openlineage` (the same mapper and writer as `harvest openlineage`);
  only after the harvest has written everything are its files deleted.

A crash before the delete makes the next start harvest `ingesting/` again: ingestion is at
least once, and idempotent because every write MERGEs and a run counts only when newer than the
job's last (docs/graph-model.md). Concurrent requests share one write and one fsync
(GroupCommit).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lineagegraph.errors import StoreError

log = logging.getLogger(__name__)

SEGMENT_SUFFIX = ".jsonl"  # a file `harvest openlineage` reads as JSON lines
DEAD_LETTER_FILE = "dead-letter.jsonl"  # events the store refused, one JSON object a line
REVIVE_MAX_SECONDS = 30.0  # the longest wait between tries to start the store again


def _fsync_dir(path: Path) -> None:
    """Make a file's creation or rename in `path` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Spool:
    """Append-only segment files; `append` returns once the lines are on disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.incoming = root / "incoming"
        self.ingesting = root / "ingesting"
        for directory in (root, self.incoming, self.ingesting):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._lock = threading.Lock()  # the open segment and its counts
        self._lines = 0  # lines in the open segment
        self._segment = 0
        self._fd = self._open_segment()

    def _open_segment(self) -> int:
        """A new segment, named so that names sort in arrival order across restarts."""
        self._segment += 1
        name = f"{time.time_ns():020d}-{os.getpid()}-{self._segment:06d}{SEGMENT_SUFFIX}"
        self._path = self.incoming / name
        fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        _fsync_dir(self.incoming)
        self._lines = 0
        self._size = 0
        return fd

    def append(self, lines: bytes, count: int) -> None:
        """Append `count` events (each one line ending in a newline) and return once they are on
        disk. GroupCommit gathers concurrent requests into one call, so one fsync covers them.
        A failed write (a full disk) is cut off again, so no half line is left for the next
        event to join."""
        with self._lock:
            size = self._size
            try:
                view = memoryview(lines)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, size)
                raise StoreError(_spool_failure("write", self._path, exc)) from None
            self._size = size + len(lines)
            self._lines += count
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise StoreError(_spool_failure("sync", self._path, exc)) from None

    def pending(self) -> int:
        """Events in the open segment, not yet handed to ingestion."""
        return self._lines

    def rotate(self) -> bool:
        """Close the open segment (when it holds events), move it to `ingesting/` and start a
        new one. Returns whether anything moved."""
        with self._lock:
            if self._lines == 0:
                return False
            os.fsync(self._fd)
            os.close(self._fd)
            done = self._path
            self._fd = self._open_segment()
        adopt(done, self.ingesting)
        return True

    def adopt_leftovers(self) -> None:
        """Segments a previous process left in `incoming/` (killed before it ingested them)."""
        with self._lock:
            current = self._path
        for path in sorted(self.incoming.glob(f"*{SEGMENT_SUFFIX}")):
            if path != current:
                adopt(path, self.ingesting)

    def close(self) -> None:
        with self._lock:
            os.fsync(self._fd)
            os.close(self._fd)
            if self._lines == 0:
                self._path.unlink(missing_ok=True)


def _spool_failure(what: str, path: Path, exc: OSError) -> str:
    full = "disk full: " if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
    return f"{full}cannot {what} the spool {path}: {exc.strerror}"


class GroupCommit:
    """Spool appends for requests on the event loop, which awaits `append` instead of holding a
    worker thread through a write and an fsync. One thread writes everything handed to it while
    its previous fsync ran, in one write and one fsync, and wakes all those requests at once:
    the event loop does no file I/O, and the syscalls and thread hops are paid per group, not
    per request."""

    def __init__(self, spool: Spool) -> None:
        self.spool = spool
        self._waiting: list[tuple[bytes, int, asyncio.Future[None]]] = []
        self._ready = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="lineagegraph-spool", daemon=True)
        self._thread.start()

    async def append(self, lines: bytes, count: int) -> None:
        """Return once `count` events (each one line ending in a newline) are on disk;
        StoreError if they cannot be written, and then none of them is in the spool."""
        future = asyncio.get_running_loop().create_future()
        with self._ready:
            self._waiting.append((lines, count, future))
            self._ready.notify()
        await future

    def stop(self) -> None:
        """Write what is still waiting, then end the thread."""
        with self._ready:
            self._stopping = True
            self._ready.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._waiting and not self._stopping:
                    self._ready.wait()
                if not self._waiting:
                    return
                waiting, self._waiting = self._waiting, []
            failure: StoreError | None = None
            try:
                self.spool.append(b"".join(w[0] for w in waiting), sum(w[1] for w in waiting))
            except StoreError as exc:
                failure = exc
            except Exception as exc:  # a bug must not leave requests waiting for ever
                log.exception("writing the spool failed")
                failure = StoreError(f"cannot write the spool: {type(exc).__name__}: {exc}")
            loops: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
            for _, _, future in waiting:
                loops.setdefault(future.get_loop(), []).append(future)
            for loop, futures in loops.items():
                with contextlib.suppress(RuntimeError):  # that loop has closed: none waits
                    loop.call_soon_threadsafe(_settle, futures, failure)


def _settle(futures: list[asyncio.Future[None]], failure: StoreError | None) -> None:
    for future in futures:
        if future.done():  # the request was cancelled (its client went away)
            continue
        if failure is None:
            future.set_result(None)
        else:
            future.set_exception(StoreError(str(failure)))


def adopt(path: Path, directory: Path) -> None:
    """Move a segment into `directory` durably; an empty one is simply dropped."""
    if path.stat().st_size == 0:
        path.unlink()
        return
    path.rename(directory / path.name)
    _fsync_dir(directory)
    _fsync_dir(path.parent)


class Ingester:
    """The background thread that moves spooled events into the graph in batches.

    `ingest(directory)` harvests every segment in the directory into the graph and returns the
    events it read (raising on failure); the segments are deleted only after it returns. Two
    kinds of failure, told apart so that neither blocks what it should not:

    * the store is unreachable (StoreError, OSError, or a failure while `alive()` says no): the
      files stay, `store_down` says why (/healthz: degraded), and `revive()` (start the store's
      server again) is tried with backoff; the batch follows once it is back;
    * the store is up and refused the batch (a QueryError, a mapper bug): the batch is split
      in halves until the one bad event is found; that event goes to the dead-letter file with
      the reason, and every other event is ingested. One event never blocks another.
    """

    def __init__(
        self,
        spool: Spool,
        ingest: Callable[[Path], int],
        *,
        every_seconds: float,
        batch_events: int,
        alive: Callable[[], bool] = lambda: True,
        revive: Callable[[], None] | None = None,
    ) -> None:
        self.spool = spool
        self._ingest = ingest
        self._alive = alive
        self._revive = revive
        self.every_seconds = every_seconds
        self.batch_events = batch_events
        self.dead_letter_path = spool.root / DEAD_LETTER_FILE
        self._split_dir = spool.root / "split"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lineagegraph-ingest", daemon=True)
        self.batches = 0
        self.ingested = 0  # events read into the graph (again, after a crash: at least once)
        self.store_down: str | None = None  # why the store is unreachable, while it is
        self.restarts = 0  # times the store was brought back by `revive`
        self.revive_failures = 0
        self.dead_letters = 0  # events set aside since start
        self.last_dead_letter: str | None = None
        self._revive_attempts = 0
        self._next_revive = 0.0

    @property
    def last_error(self) -> str | None:
        """The reason ingestion is stuck (the store is down), or None."""
        return self.store_down

    def start(self) -> None:
        self.spool.adopt_leftovers()
        self._thread.start()

    def nudge(self) -> None:
        """Ingest soon: the open segment has reached a batch."""
        if self.spool.pending() >= self.batch_events:
            self._wake.set()

    def store_lost(self, reason: str) -> None:
        """A reader found the store unreachable: check and bring it back now, not next round."""
        if self.store_down is None:
            self.store_down = reason
        self._wake.set()

    def stop(self) -> None:
        """Ingest what is spooled, then stop."""
        self._stop.set()
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        while True:  # a first round at once: what a previous process left behind
            self.drain()
            if self._stop.is_set():
                return  # the server has stopped taking events: that round took the last
            self._wake.wait(self.every_seconds)
            self._wake.clear()

    def drain(self) -> None:
        """Ingest the segments already handed over, then the open one; first bring a store
        that went away back."""
        if self.store_down is None and not self._check_alive():
            self._down("the store does not answer")
        if self.store_down is not None and not self._try_revive():
            return
        try:
            if any(self.spool.ingesting.iterdir()):
                self._batch()
            if self.spool.rotate():
                self._batch()
        except _StoreDown as exc:  # the graph may come back: keep the files, retry
            self._down(str(exc))

    def _check_alive(self) -> bool:
        try:
            return self._alive()
        except Exception:
            return False

    def _down(self, reason: str) -> None:
        if self.store_down is None:
            log.error("ingesting spooled events failed (will retry): %s", reason)
        self.store_down = reason
        self._next_revive = 0.0  # the first try at once, then backoff

    def _try_revive(self) -> bool:
        """Whether the store is usable again: it answers, or `revive` brought it back. Tries
        are spaced out (0.5 s doubling up to REVIVE_MAX_SECONDS), each failure logged."""
        if self._check_alive():
            self._revived()
            return True
        if self._revive is None or time.monotonic() < self._next_revive:
            return False
        delay = min(REVIVE_MAX_SECONDS, 0.5 * 2**self._revive_attempts)
        self._revive_attempts += 1
        self._next_revive = time.monotonic() + delay
        log.warning("the store is unreachable (%s); starting it again", self.store_down)
        try:
            self._revive()
        except Exception as exc:
            self.revive_failures += 1
            self.store_down = f"{type(exc).__name__}: {exc}"
            log.error("could not start the store again (next try in %.1f s): %s", delay, exc)
            return False
        if not self._check_alive():
            self.revive_failures += 1
            return False
        self.restarts += 1
        log.warning("the store is back; ingesting the spooled events")
        self._revived()
        return True

    def _revived(self) -> None:
        self.store_down = None
        self._revive_attempts = 0

    def _batch(self) -> None:
        segments = sorted(self.spool.ingesting.glob(f"*{SEGMENT_SUFFIX}"))
        if not segments:
            return
        try:
            events = self._run_ingest(self.spool.ingesting)
        except _Refused as exc:
            log.warning("a batch of spooled events failed (%s); looking for the event", exc)
            events = self._split(segments)
        for path in segments:
            path.unlink()
        _fsync_dir(self.spool.ingesting)
        self.batches += 1
        self.ingested += events

    def _run_ingest(self, directory: Path) -> int:
        """`ingest(directory)`, its failure told apart: _StoreDown or _Refused."""
        try:
            return self._ingest(directory)
        except (StoreError, OSError) as exc:
            raise _StoreDown(f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            if not self._check_alive():
                raise _StoreDown(reason) from exc
            raise _Refused(reason) from exc

    def _split(self, segments: list[Path]) -> int:
        """Ingest the batch's events in halves, recursively; each single event the store still
        refuses goes to the dead-letter file. Returns the events ingested."""
        lines = [line for path in segments for line in path.read_bytes().splitlines(True)]
        self._split_dir.mkdir(mode=0o700, exist_ok=True)
        for leftover in self._split_dir.iterdir():
            leftover.unlink()
        return self._ingest_part(lines)

    def _ingest_part(self, lines: list[bytes]) -> int:
        part = self._split_dir / f"part{SEGMENT_SUFFIX}"
        part.write_bytes(b"".join(lines))
        try:
            return self._run_ingest(self._split_dir)
        except _Refused as exc:
            if len(lines) == 1:
                self._dead_letter(lines[0], str(exc))
                return 0
        finally:
            part.unlink(missing_ok=True)
        middle = len(lines) // 2
        return self._ingest_part(lines[:middle]) + self._ingest_part(lines[middle:])

    def _dead_letter(self, line: bytes, reason: str) -> None:
        """Set one event aside, with why, in a JSON lines file beside the spool (fsynced
        before its segment is deleted)."""
        record = {
            "failed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "reason": reason,
            "event": line.decode(errors="replace").rstrip("\n"),
        }
        fd = os.open(self.dead_letter_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, json.dumps(record).encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        self.dead_letters += 1
        self.last_dead_letter = reason
        log.error(
            "an event the store refuses was set aside in %s: %s", self.dead_letter_path, reason
        )


class _StoreDown(Exception):
    """The store could not be reached: retry the batch once it is back."""


class _Refused(Exception):
    """The store is up and refused the batch: something in its events."""
