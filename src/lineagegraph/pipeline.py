"""The one harvest loop: open a :HarvestRun, write what a harvester yields, close the run.

A harvester is a generator of model values (lineagegraph.model). `harvest_run` records the run,
hands out a GraphWriter, and on success stores the watermark the harvester set; on failure the
run is recorded as failed with its reason and the previous watermark stays the one to resume from.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from lineagegraph.errors import LineageGraphError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter


def now_ms() -> int:
    return int(time.time() * 1000)


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


def last_watermark(store: GraphStore, system: str, scope: str) -> int | None:
    """Where the next incremental harvest resumes: the newest successful run's watermark."""
    rows = store.read("harvest_run_watermark", {"system": system, "scope": scope})
    return int(rows[0]["watermark"]) if rows else None


@contextmanager
def harvest_run(
    store: GraphStore, system: str, scope: str
) -> Iterator[tuple[HarvestRun, GraphWriter]]:
    """Record a harvest around the caller's writes; partial data is flushed, never lost."""
    run = HarvestRun(system, scope)
    store.run("harvest_run_start", {"id": run.id, "system": system, "scope": scope,
                                    "started": run.started})  # fmt: skip
    writer = GraphWriter(store, run.counts)
    try:
        yield run, writer
        writer.flush()
    except BaseException as exc:
        run.status, run.error = "failed", _reason(exc)
        run.watermark = None  # never advance past data the graph may not have
        # What was harvested is consistent and idempotent: keep it, and record why the run
        # stopped. If the store itself is gone, the original error is the one to report.
        with suppress(LineageGraphError):
            writer.flush()
        with suppress(LineageGraphError):
            _finish(store, run)
        raise
    run.status = "partial" if run.error else "success"
    _finish(store, run)


def _finish(store: GraphStore, run: HarvestRun) -> None:
    counts: dict[str, Any] = {f"count_{k}": v for k, v in sorted(run.counts.items())}
    store.run("harvest_run_finish", {
        "id": run.id, "finished": now_ms(), "status": run.status, "error": run.error,
        "watermark": run.watermark if run.status == "success" else None, "counts": counts,
    })  # fmt: skip


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    return f"{type(exc).__name__}: {exc}"
