"""The quality gate behind `lineagegraph check`: may a job that reads this asset run?

It may not when the asset, or anything upstream of it, has a check whose latest result is
`fail` or `error` (bad data flows downstream; a check that could not run vouches for nothing).
`warn` results are named but do not block. Soft-deleted assets are not followed, as in
`upstream`: data no longer flows through them.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineagegraph.graph.store import GraphStore
from lineagegraph.output import format_rows, time_text
from lineagegraph.questions.lineage import MAX_DEPTH, Reached, start_asset, traverse
from lineagegraph.questions.quality import BLOCKING, CheckState, checks_of
from lineagegraph.render.as_json import to_json


@dataclass(frozen=True, slots=True)
class GateCheck:
    """A check on the start (distance 0) or on an asset that many hops upstream of it."""

    distance: int
    check: CheckState


@dataclass(frozen=True, slots=True)
class GateAnswer:
    start: Reached
    assets: int  # the start and every asset upstream of it
    checks: list[GateCheck]  # nearest first, worst first

    @property
    def failing(self) -> list[GateCheck]:
        return [c for c in self.checks if c.check.status in BLOCKING]

    @property
    def warnings(self) -> list[GateCheck]:
        return [c for c in self.checks if c.check.status == "warn"]

    @property
    def passed(self) -> bool:
        return not self.failing

    def render(self, fmt: str) -> str:
        """table for people (gate_text), json for programs."""
        if fmt == "json":
            return to_json(
                {
                    "passed": self.passed,
                    "start": self.start,
                    "assets": self.assets,
                    "failing": self.failing,
                    "checks": self.checks,
                }
            )
        return gate_text(self)


def quality_gate(store: GraphStore, urn: str, *, depth: int = MAX_DEPTH) -> GateAnswer:
    """The latest results of every check on `urn` and on the assets upstream of it."""
    start = start_asset(store, urn)
    upstream = traverse(store, urn, "upstream", depth=depth)
    distance = {urn: 0} | {item.urn: item.distance for item in upstream}
    found = [GateCheck(distance[c.asset], c) for c in checks_of(store, list(distance))]
    found.sort(
        key=lambda g: (g.distance, g.check.status not in BLOCKING, g.check.asset, g.check.urn)
    )
    return GateAnswer(start, len(distance), found)


def gate_text(answer: GateAnswer) -> str:
    """The verdict on one line, then a row per check (failing first within each distance)."""
    start, upstream = answer.start.urn, answer.assets - 1
    scope = f"{start} or the {upstream} asset(s) upstream of it"
    if not answer.checks:
        return f"passed: no check results on {scope}"
    if answer.passed:
        warned = f", {len(answer.warnings)} warning(s)" if answer.warnings else ""
        head = f"passed: no failing check on {scope} ({len(answer.checks)} check(s){warned})"
    else:
        failing, assets = len(answer.failing), len({c.check.asset for c in answer.failing})
        head = f"FAILED: {failing} failing check(s) on {assets} asset(s) among {scope}"
    rows = [
        [
            g.distance,
            g.check.status,
            g.check.name,
            g.check.system,
            g.check.failures,
            time_text(g.check.at),
            g.check.target,
        ]
        for g in answer.checks
    ]
    columns = ["distance", "status", "check", "system", "failures", "at", "tested"]
    return head + "\n" + format_rows(columns, rows, "table")


def failure_summary(answer: GateAnswer) -> str:
    """One line naming each failing check and what it tests, for the error message."""
    named = "; ".join(
        f"{g.check.name} ({g.check.status}"
        + (f", {g.check.failures} failures" if g.check.failures else "")
        + f") on {g.check.target}"
        for g in answer.failing
    )
    return f"{len(answer.failing)} failing check(s) at or upstream of {answer.start.urn}: {named}"
