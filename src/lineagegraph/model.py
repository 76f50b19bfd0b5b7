"""Small frozen values that harvesters yield and the graph writer stores.

Every urn in them comes from `lineagegraph.identity`; times are epoch milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Scalar = str | int | float | bool | None
AssetKind = Literal["Table", "Dataset", "File"]


@dataclass(frozen=True, slots=True)
class Asset:
    """A node labelled :Asset plus its kind. `seen` is when it was observed."""

    urn: str
    kind: AssetKind
    system: str
    name: str
    seen: int
    props: dict[str, Scalar] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Flow:
    """Data moved from `src` to `dst` at `at`, by the transformation `via` (if known)."""

    src: str
    dst: str
    at: int
    via: str | None = None


@dataclass(frozen=True, slots=True)
class Transformation:
    """A stable job identity (not one run) and what one of its runs read and wrote."""

    urn: str
    system: str
    name: str
    run_id: str
    run_at: int
    user: str | None = None
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Column:
    """A column of an asset; its urn is `{asset urn}#{name}`."""

    urn: str
    asset: str
    name: str
    seen: int


@dataclass(frozen=True, slots=True)
class ColumnFeed:
    """Column `src` feeds column `dst` (the way data flows)."""

    src: str
    dst: str
    at: int
    via: str | None = None
    masked_by: tuple[str, ...] = ()
    """The functions `dst` is computed through that carry no identity (`SHA2`, `MD5`, a masking
    policy, `COUNT`): empty for a plain copy. Classifications stop at an edge only masked."""


@dataclass(frozen=True, slots=True)
class TagFact:
    """A classification stated on an asset or a column (`target`, its urn) by a source or by
    hand: `key` or `key=value`, with where it came from. A fact, never a derived copy."""

    target: str
    key: str
    value: str | None
    source: str  # the system that stated it: snowflake, dbt, openlineage, manual, settings
    by: str  # who or which run
    at: int
    reason: str | None = None
    removed: bool = False  # the source or a person withdrew it at `at` (kept for history)


@dataclass(frozen=True, slots=True)
class PartOf:
    """An S3 object belongs to the dataset its folded prefix names."""

    file: str
    dataset: str


@dataclass(frozen=True, slots=True)
class SoftDelete:
    """An object dropped at `at` (epoch ms): soft-deleted unless it is seen again after."""

    urn: str
    at: int


CheckStatus = Literal["pass", "warn", "fail", "error", "skipped"]
RANK: dict[str, int] = {"skipped": 0, "pass": 1, "warn": 2, "error": 3, "fail": 4}
"""Statuses from best to worst. `error` (the check could not run) ranks below `fail` (it ran and
found bad data); both block `lineagegraph check`. Stored on each :Check as `rank`
(by the graph writer); lineagegraph.questions.quality orders assets' quality by it."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The result of one data-quality check on an asset (or on one of its columns) at `at`.

    `urn` is the check's stable identity (a dbt test's unique_id, or an OpenLineage assertion's
    dataset + column + assertion name); `target` is the urn of the `:Asset` or `:Column` it tests.
    """

    urn: str
    system: str
    name: str
    target: str
    status: CheckStatus
    at: int
    run_id: str
    failures: int | None = None


RUN_STATES = ("START", "RUNNING", "COMPLETE", "FAIL", "ABORT")
TERMINAL_STATES = frozenset({"COMPLETE", "FAIL", "ABORT"})


@dataclass(frozen=True, slots=True)
class RunState:
    """What an OpenLineage run event says of its run (`state`, one of RUN_STATES) at `at`: a
    run that started and never ended, or failed, is an alert (lineagegraph.questions.alerts).
    `job` is the urn of its :Transformation, named `name` in `system`."""

    job: str
    system: str
    name: str
    run_id: str
    state: str
    at: int

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES


Item = (
    Asset | Flow | Transformation | Column | ColumnFeed | PartOf | CheckResult | TagFact | RunState
)
