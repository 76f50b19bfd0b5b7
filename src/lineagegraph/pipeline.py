"""The one harvest loop: open a :HarvestRun, write what a harvester yields, close the run.

A harvester is a generator of model values (lineagegraph.model). `harvest_run` takes the store's
harvest lock, records the run with who runs it, hands out a GraphWriter, and on success stores
the watermark the harvester set; on failure or a signal the run is recorded as failed or
interrupted with its reason, and the previous watermark stays the one to resume from.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from lineagegraph.errors import HarvestError, Interrupted, LineageGraphError, StoreError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.store_files import open_nofollow, own_data_dir
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.processes import HOST, PID, PID_START, is_abandoned, now_ms

HARVEST_LOCK = "harvest.lock"


@dataclass
class HarvestRun:
    """One harvest of one system and scope; `counts` and `watermark` are filled as it goes."""

    system: str
    scope: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    started: int = field(default_factory=now_ms)
    counts: Counter[str] = field(default_factory=Counter)
    watermark: int | None = None
    status: str = "running"
    error: str | None = None
    warnings: list[str] = field(default_factory=list)  # rows dropped, for the HarvestReport


def last_watermark(store: GraphStore, system: str, scope: str) -> int | None:
    """Where the next incremental harvest resumes: the newest successful run's watermark."""
    rows = store.read("harvest_run_watermark", {"system": system, "scope": scope})
    return int(rows[0]["watermark"]) if rows else None


@contextmanager
def harvest_run(
    store: GraphStore, system: str, scope: str, *, exclusive: bool = True
) -> Iterator[tuple[HarvestRun, GraphWriter]]:
    """Record a harvest around the caller's writes; partial data is flushed, never lost.

    `exclusive` holds the store's harvest lock for the run (a second harvest fails fast); only
    a long-lived observer such as the Spark listener, which must not block harvests, opts out.
    """
    with harvest_lock(lock_file(store.location)) if exclusive else nullcontext():
        _close_abandoned(store, system, scope)
        run = HarvestRun(system, scope)
        store.run("harvest_run_start", {
            "id": run.id, "system": system, "scope": scope, "started": run.started,
            "host": HOST, "pid": PID, "pid_start": PID_START,
        })  # fmt: skip
        writer = GraphWriter(store, run.counts)
        try:
            yield run, writer
            writer.finish()
            _note_drops(run, writer)
        except BaseException as exc:
            interrupted = isinstance(exc, Interrupted | KeyboardInterrupt)
            run.status = "interrupted" if interrupted else "failed"
            run.error = _reason(exc)
            run.watermark = None  # never advance past data the graph may not have
            # What was harvested is consistent and idempotent: keep it, and record why the run
            # stopped. If the store itself is gone, the original error is the one to report.
            with suppress(LineageGraphError):
                writer.finish()
                run.warnings += writer.warnings()
            with suppress(LineageGraphError):
                _finish(store, run)
            raise
        run.status = "partial" if run.error else "success"
        _finish(store, run)


def _note_drops(run: HarvestRun, writer: GraphWriter) -> None:
    """Rows dropped for good make the run partial, with why in its error and warnings."""
    run.warnings += writer.warnings()
    if run.warnings:
        drops = f"rows dropped: {'; '.join(run.warnings)}"
        run.error = f"{run.error}; {drops}" if run.error else drops


def _close_abandoned(store: GraphStore, system: str, scope: str) -> None:
    """Mark earlier runs of this system and scope whose process died as abandoned."""
    for row in store.read("harvest_runs_running", {"system": system, "scope": scope}):
        if is_abandoned(row):
            gone = HarvestRun(
                system,
                scope,
                id=row["id"],
                status="abandoned",
                error=f"abandoned: process {row['pid']} on {HOST} ended without finishing the run",
            )
            _finish(store, gone)


def _finish(store: GraphStore, run: HarvestRun) -> None:
    counts: dict[str, Any] = {f"count_{k}": v for k, v in sorted(run.counts.items())}
    store.run("harvest_run_finish", {
        "id": run.id, "finished": now_ms(), "status": run.status, "error": run.error,
        "watermark": run.watermark if run.status == "success" else None, "counts": counts,
    })  # fmt: skip


def _reason(exc: BaseException) -> str:
    if isinstance(exc, Interrupted):
        return str(exc)
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    return f"{type(exc).__name__}: {exc}"


def lock_file(location: str) -> Path:
    """The harvest lock of a store: in the embedded store's directory, else per server URI."""
    if "://" in location:
        digest = hashlib.sha256(location.encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"lineagegraph-harvest-{digest}.lock"
    return Path(location).expanduser().resolve() / HARVEST_LOCK


def _open_lock(path: Path) -> IO[str]:
    """The lock file, 0600 whatever the umask, never through a link; in the embedded store's
    directory only when this user owns it alone (see own_data_dir)."""
    if path.name == HARVEST_LOCK:
        own_data_dir(path.parent)
    try:
        fd = open_nofollow(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        if os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, 0o600)
    except OSError as exc:
        raise StoreError(f"cannot create the harvest lock {str(path)!r}: {exc.strerror}") from None
    return os.fdopen(fd, "a+")


_held: dict[Path, tuple[IO[str], int]] = {}  # lock file -> (open file, nesting depth)


@contextmanager
def harvest_lock(path: Path) -> Iterator[None]:
    """An exclusive lock per store, re-entrant within this process (`harvest all` runs sources
    that each take it); a second process fails fast with HarvestError naming the holder."""
    if path in _held:
        fh, depth = _held[path]
        _held[path] = (fh, depth + 1)
        try:
            yield
        finally:
            _held[path] = (fh, depth)
        return
    fh = _open_lock(path)
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise HarvestError(
                f"another harvest is running on this store ({holder} holds {path}); "
                "this run changed nothing"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {PID} on {HOST}")
        fh.flush()
        _held[path] = (fh, 1)
        try:
            yield
        finally:
            del _held[path]
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh, fcntl.LOCK_UN)
