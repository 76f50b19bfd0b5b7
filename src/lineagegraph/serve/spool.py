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
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lineagegraph.errors import StoreError

log = logging.getLogger(__name__)

SEGMENT_SUFFIX = ".jsonl"  # a file `harvest openlineage` reads as JSON lines


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
                raise StoreError(f"cannot write the spool {self._path}: {exc.strerror}") from None
            self._size = size + len(lines)
            self._lines += count
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise StoreError(f"cannot sync the spool {self._path}: {exc.strerror}") from None

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
    events it read (raising on failure); the segments are deleted only after it returns. A
    failure is logged and retried on the next round, so a graph that is briefly unreachable
    delays ingestion, never loses it.
    """

    def __init__(
        self,
        spool: Spool,
        ingest: Callable[[Path], int],
        *,
        every_seconds: float,
        batch_events: int,
    ) -> None:
        self.spool = spool
        self._ingest = ingest
        self.every_seconds = every_seconds
        self.batch_events = batch_events
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lineagegraph-ingest", daemon=True)
        self.batches = 0
        self.ingested = 0  # events read into the graph (again, after a crash: at least once)
        self.last_error: str | None = None

    def start(self) -> None:
        self.spool.adopt_leftovers()
        self._thread.start()

    def nudge(self) -> None:
        """Ingest soon: the open segment has reached a batch."""
        if self.spool.pending() >= self.batch_events:
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
        """Ingest the segments already handed over, then the open one."""
        try:
            if any(self.spool.ingesting.iterdir()):
                self._batch()
            if self.spool.rotate():
                self._batch()
            self.last_error = None
        except Exception as exc:  # the graph may come back: keep the files, retry next round
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.error("ingesting spooled events failed (will retry): %s", self.last_error)

    def _batch(self) -> None:
        segments = sorted(self.spool.ingesting.glob(f"*{SEGMENT_SUFFIX}"))
        if not segments:
            return
        events = self._ingest(self.spool.ingesting)
        for path in segments:
            path.unlink()
        _fsync_dir(self.spool.ingesting)
        self.batches += 1
        self.ingested += events
