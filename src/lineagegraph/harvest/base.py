"""What every source shares: the Harvester protocol, its one report type and its progress.

A source is one module that defines a class with `name`, `section`, `needs`, `not_configured`
and `run`; the registry (harvest/registry.py) finds the built-in ones and those of other
packages (entry-point group `lineagegraph.harvesters`), and the CLI and `harvest_all` read it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from lineagegraph.graph.base import GraphStore
    from lineagegraph.pipeline import HarvestRun
    from lineagegraph.settings import Settings

# The :HarvestRun counts that are nodes and edges written, for summaries.
NODE_COUNTS = (
    "files",
    "datasets",
    "merge_tables",
    "merge_datasets",
    "merge_files",
    "merge_transformations",
    "merge_columns",
)
EDGE_COUNTS = (
    "merge_flows",
    "merge_reads_from",
    "merge_writes_to",
    "merge_column_feeds",
    "merge_part_of",
)


@dataclass
class HarvestReport:
    """What one :HarvestRun did, the same for every source, for the CLI and for schedulers.

    `errors` are why the run is not a full success (the CLI then exits non-zero); `warnings`
    are what was skipped or could not be resolved; `summary` is the line a person reads.
    """

    run_id: str
    system: str
    scope: str
    status: str  # success, partial, failed, interrupted
    counts: Mapping[str, int] = field(default_factory=Counter)
    watermark: int | None = None
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    summary: str = ""

    @classmethod
    def of_run(
        cls, run: HarvestRun, problems: list[str], errors: list[str], summary: str
    ) -> HarvestReport:
        """The report of a run recorded through `pipeline.harvest_run`: its warnings first."""
        return cls(
            run.id,
            run.system,
            run.scope,
            run.status,
            run.counts,
            run.watermark,
            [*run.warnings, *problems],
            errors,
            summary,
        )

    @property
    def ok(self) -> bool:
        return self.status == "success" and not self.errors

    @property
    def nodes(self) -> int:
        return sum(int(self.counts.get(k, 0) or 0) for k in NODE_COUNTS)

    @property
    def edges(self) -> int:
        return sum(int(self.counts.get(k, 0) or 0) for k in EDGE_COUNTS)


@dataclass(frozen=True, slots=True)
class Tick:
    """Where a running harvest is: `done` units of work (objects, rows, files) so far."""

    source: str  # what is being read, e.g. s3://lake or a path
    done: int
    unit: str
    rate: float | None = None  # units per second
    detail: str = ""  # more for people, e.g. "12.5 MiB"

    def line(self) -> str:
        parts = [f"{self.done:,} {self.unit}"]
        if self.detail:
            parts.append(self.detail)
        if self.rate is not None:
            parts.append(f"{self.rate:,.0f} {self.unit.split()[-1]}/s")
        return f"{self.source}: " + ", ".join(parts)


class Progress(Protocol):
    """Told how a harvest goes, often (cheap calls: a status line throttles what it shows)."""

    def __call__(self, tick: Tick) -> None: ...


def no_progress(tick: Tick) -> None:
    """The progress of a caller that does not watch."""


@runtime_checkable
class Harvester(Protocol):
    """A source of lineage. Instances may carry per-call options (a bucket, a path); the
    registry holds one made with no arguments, which reads everything from settings.

    A plug-in may also set `settings_model`, a `lineagegraph.settings_base.Section` subclass:
    its `[sources.NAME]` table is then validated by it before it runs (optional, so not a
    member here: plug-ins without one get their table as a plain dict)."""

    @property
    def name(self) -> str:
        """`lineagegraph harvest NAME`, and the key in the registry (a class attribute will do)."""
        ...

    @property
    def section(self) -> str | None:
        """The settings section it reads, checked before it runs; None if it reads none."""
        ...

    @property
    def needs(self) -> str:
        """What a user configures to make it run, e.g. "[s3] buckets"."""
        ...

    def not_configured(self, settings: Settings) -> str | None:
        """Why settings do not ask for this source (e.g. "no [s3] buckets"); None if they do."""
        ...

    def run(
        self, store: GraphStore, settings: Settings, *, progress: Progress
    ) -> list[HarvestReport]:
        """Harvest into `store`, one report per :HarvestRun recorded. Raises a
        LineageGraphError when it cannot run at all; what was written before stays."""
        ...
