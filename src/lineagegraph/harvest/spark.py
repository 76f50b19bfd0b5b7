"""`harvest spark`: replay the Spark agent's spool (lineagegraph.spark) into the graph.

The listener appends one record per action to a local directory of JSON-lines files while the
graph is unreachable (lineagegraph.spark.spool_files); `lineagegraph harvest spark --spool DIR`
writes them to the graph and deletes a file only after its records are written, so nothing is
lost. Writes are idempotent MERGEs, so a replay that stops half-way and runs again duplicates
nothing.

Writer and replayer share each file through an exclusive flock: the replayer holds it from
reading to deleting, and a writer that finds its file deleted under it starts a new one, so a
record is never appended to a file that is already gone.

A line that cannot be replayed (half-written by a killed driver, an undecodable byte, nesting
too deep, not a record) is reported by file and line, counted (`records_rejected`) and kept
byte for byte in FILE.rejected; the other lines are replayed and the run is partial.
"""

from __future__ import annotations

import dataclasses
import fcntl
import logging
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineagegraph import jsonlines
from lineagegraph.errors import HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.base import HarvestReport, Progress
from lineagegraph.identity import IdentityError
from lineagegraph.jsonlines import numbered_lines, parse_json
from lineagegraph.pipeline import HarvestRun, harvest_run
from lineagegraph.settings import Settings
from lineagegraph.spark.actions import LineageError, SparkAction, action_items, write_actions
from lineagegraph.spark.spool_files import REJECTED_SUFFIX, SUFFIX

log = logging.getLogger(__name__)


def spool_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob(f"*{SUFFIX}") if p.is_file())


@dataclass
class ReplayReport:
    files: int = 0
    actions: int = 0
    failures: int = 0
    problems: list[str] = field(default_factory=list)


def replay(store: GraphStore, directory: Path) -> tuple[HarvestRun, ReplayReport]:
    """Write every spooled record to the graph; delete each file once its records are in."""
    if not directory.is_dir():
        raise HarvestError(f"spool directory {str(directory)!r} does not exist")
    report = ReplayReport()
    with harvest_run(store, "spark", f"spool:{directory.resolve()}") as (run, writer):
        for path in spool_files(directory):
            _replay_file(path, store, writer, run, report)
        if report.problems:
            run.error = f"{len(report.problems)} unreadable records; first: {report.problems[0]}"
    return run, report


def _replay_file(
    path: Path, store: GraphStore, writer: GraphWriter, run: HarvestRun, report: ReplayReport
) -> None:
    with open(path, "r+", encoding="utf-8", errors="surrogateescape") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        if os.fstat(fh.fileno()).st_nlink == 0:
            return  # another replay took it
        rejected: list[str] = []
        actions: list[SparkAction] = []
        for number, line in numbered_lines(fh):
            if line is None:
                report.problems.append(
                    f"{path}:{number}: longer than {jsonlines.MAX_TEXT_CHARS:,} characters: dropped"
                )
                run.counts["records_rejected"] += 1
                continue
            if not line.strip():
                continue
            try:
                record = parse_json(line)
                if not isinstance(record, dict):
                    raise LineageError("not a JSON object")
                if record.get("type") == "failure":
                    run.counts["actions_failed"] += 1
                    report.failures += 1
                    continue
                actions.append(replayable(record))
            except (ValueError, LineageError) as exc:
                report.problems.append(f"{path}:{number}: {exc}")
                run.counts["records_rejected"] += 1
                rejected.append(line if line.endswith("\n") else line + "\n")
        write_actions(store, writer, actions)
        run.counts["actions_recorded"] += len(actions)
        report.actions += len(actions)
        if rejected:  # kept, byte for byte, for a person to read, never replayed again
            rejects = path.with_name(path.name + REJECTED_SUFFIX)
            with open(rejects, "a", encoding="utf-8", errors="surrogateescape") as bad:
                bad.writelines(rejected)
        path.unlink()
        report.files += 1


def replayable(record: dict[str, Any]) -> SparkAction:
    """A spooled record as an action whose values the graph can take: every field of the type
    it is declared with, every urn a urn. Otherwise a LineageError (IdentityError) saying why,
    for this record alone, rather than a failure of every replay when the file is written."""
    action = SparkAction.from_record(record)
    problem = _type_problem(action, SparkAction, "")
    if problem:
        raise LineageError(f"not a Spark action record: {problem}")
    try:
        for _ in action_items(action):  # each urn parses here, before anything is written
            pass
    except IdentityError as exc:
        raise LineageError(f"not a Spark action record: {exc}") from None
    return action


def _type_problem(value: Any, hint: Any, where: str) -> str | None:
    """Where `value` is not of the type `hint` (a record dataclass or a field type), or None."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        for f in dataclasses.fields(hint):
            name = f"{where}.{f.name}" if where else f.name
            problem = _type_problem(getattr(value, f.name), hints[f.name], name)
            if problem:
                return problem
        return None
    if origin is list:
        if not isinstance(value, list):
            return f"{where} is {value!r:.60}, not a list"
        problems = (_type_problem(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        return next((p for p in problems if p), None)
    if origin is tuple:  # tuple[X, ...]: a ColumnLink's masked_by
        if not isinstance(value, tuple):
            return f"{where} is {value!r:.60}, not a list"
        problems = (_type_problem(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        return next((p for p in problems if p), None)
    if origin is typing.Literal:
        return None if value in args else f"{where} is {value!r:.60}, not one of {args}"
    if origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        return _type_problem(value, next(a for a in args if a is not type(None)), where)
    if type(value) is not hint or (hint is int and not -(2**63) <= value < 2**63):
        return f"{where} is {value!r:.60}, not {'a 64-bit integer' if hint is int else 'text'}"
    return None


@dataclass
class SparkHarvester:
    """`harvest spark`: replay the spool of [spark] spool_dir (or `spool`)."""

    spool: Path | None = None
    name = "spark"
    section = "spark"
    needs = "[spark] spool_dir (a directory of spooled Spark events)"

    def not_configured(self, settings: Settings) -> str | None:
        directory = self.spool or settings.spark.spool_dir
        if directory.is_dir() and any(p.is_file() for p in directory.iterdir()):
            return None
        return "spark spool is empty"

    def run(
        self, store: GraphStore, settings: Settings, *, progress: Progress
    ) -> list[HarvestReport]:
        directory = self.spool or settings.spark.spool_dir
        run, report = replay(store, directory)
        line = (
            f"{directory}: {report.files} files, {report.actions} actions, "
            f"{report.failures} failed actions; run {run.id}: {run.status}"
        )
        return [HarvestReport.of_run(run, report.problems, [], line)]
