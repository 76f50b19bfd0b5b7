"""Harvesting by name, and every configured source one after another (`harvest all`).

Both live here, not in the CLI, so that a scheduler or a notebook runs them the same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lineagegraph.errors import ConfigError, LineageGraphError
from lineagegraph.graph.base import GraphStore
from lineagegraph.graph.store import open_store
from lineagegraph.harvest.base import Harvester, HarvestReport, Progress, no_progress
from lineagegraph.harvest.registry import harvesters
from lineagegraph.pipeline import harvest_lock, lock_file
from lineagegraph.settings import Settings, source_settings, with_overrides

log = logging.getLogger("lineagegraph.harvest.all")


def run_harvester(
    harvester: Harvester, store: GraphStore, settings: Settings, progress: Progress = no_progress
) -> list[HarvestReport]:
    """Run one source: its settings section is checked first (rules across fields, which
    start-up leaves to the commands that use a section), or a plug-in's [sources.NAME] table
    against its `settings_model`, then it harvests into `store`."""
    model = getattr(harvester, "settings_model", None)
    if harvester.section is not None:
        settings = with_overrides(settings, harvester.section)
    elif model is not None:
        source_settings(settings, harvester.name, model)
    return harvester.run(store, settings, progress=progress)


@dataclass
class SourceResult:
    """How one source of `harvest all` went."""

    name: str
    status: str  # ok, FAILED, skipped, or the runs' statuses (e.g. partial)
    reports: list[HarvestReport] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None  # why it failed, or why it was skipped

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "skipped")

    @property
    def watermark(self) -> str:
        """The newest watermark its runs recorded, as UTC ISO time; "-" if none."""
        marks = [r.watermark for r in self.reports if r.watermark is not None]
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(max(marks) / 1000)) if marks else "-"

    def line(self) -> str:
        """One line for people (and, with --log-format json, one structured log record)."""
        if self.status == "skipped":
            return f"{self.name}: skipped ({self.error})"
        watermark = self.watermark
        nodes, edges = sum(r.nodes for r in self.reports), sum(r.edges for r in self.reports)
        line = (
            f"{self.name}: {self.status} in {self.seconds:.1f} s, {len(self.reports)} run(s), "
            f"{nodes:,} nodes and {edges:,} edges written, watermark {watermark}"
        )
        return line + (f": {self.error}" if self.error else "")


def harvest_all(
    settings: Settings,
    *,
    only: Sequence[str] = (),
    progress: Progress = no_progress,
    on_result: Callable[[SourceResult], None] | None = None,
) -> list[SourceResult]:
    """Harvest every source that settings ask for (or those in `only`), one after another,
    holding the store's harvest lock throughout. A failing source does not stop the others.

    Raises ConfigError, touching nothing, when none of the chosen sources is configured, and
    HarvestError when another harvest holds the store. `on_result` sees each source's result
    as soon as it is known (a CLI prints it then).
    """
    known = harvesters()
    unknown = [name for name in only if name not in known]
    if unknown:
        raise ConfigError(
            f"no source named {', '.join(map(repr, unknown))}; known: {', '.join(known)}"
        )
    chosen = [h for name, h in known.items() if not only or name in only]
    why_not = {h.name: h.not_configured(settings) for h in chosen}
    if all(why_not.values()):
        raise ConfigError(
            "nothing to harvest: "
            + "; ".join(f"{name}: {reason}" for name, reason in why_not.items())
            + ". Configure at least one of "
            + ", ".join(h.needs for h in chosen)
            + " (in the config file or as LINEAGEGRAPH_* variables)"
        )
    results: list[SourceResult] = []
    lock = lock_file(settings.graph.location)
    with harvest_lock(lock), open_store(settings.graph) as store:
        for harvester in chosen:
            reason = why_not[harvester.name]
            if reason:
                result = SourceResult(harvester.name, "skipped", error=reason)
            else:
                result = _one(harvester, store, settings, progress)
                _log(result)
            results.append(result)
            if on_result:
                on_result(result)
    return results


def _one(
    harvester: Harvester, store: GraphStore, settings: Settings, progress: Progress
) -> SourceResult:
    started = time.monotonic()
    reports: list[HarvestReport] = []
    error: str | None = None
    try:
        reports = run_harvester(harvester, store, settings, progress)
    except LineageGraphError as exc:
        error = str(exc)
    except Exception as exc:  # one source's bug must not stop the others
        error = f"unexpected {type(exc).__name__}: {exc}"
    seconds = time.monotonic() - started
    errors = [e for r in reports for e in r.errors]
    if error is None and errors:
        error = "; ".join(errors)
    statuses = sorted({r.status for r in reports}) or ["no run recorded"]
    if error is None and statuses == ["success"]:
        status = "ok"
    elif error or "failed" in statuses:
        status = "FAILED"
    else:
        status = "/".join(statuses)
    return SourceResult(harvester.name, status, reports, seconds, error)


def _log(result: SourceResult) -> None:
    log.info(result.line(), extra={
        "source": result.name, "status": result.status, "seconds": round(result.seconds, 3),
        "runs": len(result.reports), "nodes": sum(r.nodes for r in result.reports),
        "edges": sum(r.edges for r in result.reports), "watermark": result.watermark,
        "error": result.error,
    })  # fmt: skip
