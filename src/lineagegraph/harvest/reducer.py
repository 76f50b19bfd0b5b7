"""Fewer graph rows, same graph: a harvest sees the same jobs, tables and columns thousands of
times, and writing each sighting costs a MERGE. Every harvester that reads runs of jobs (the
Snowflake ACCESS_HISTORY rows, OpenLineage events) folds its values into one RunReducer.

What each kind of value needs to come out exactly as if every sighting were written in order:

- nodes (assets, columns): their earliest sighting (it creates the node, so `first_seen`) and
  their latest (`last_seen`, undeletion), with the properties of every sighting, later ones
  winning. The earliest is written with the window that first sees it (`write_window`), so
  every later edge can MATCH it; the latest with the rest (`write_run`).
- column FEEDS and job READS_FROM / WRITES_TO: their earliest and latest sighting and the
  transformations on them (`via`).
- transformations and FLOWS_TO count runs (`runs` grows for each run newer than the last one
  seen), so in arrival order only the sightings newer than every earlier one can count: one
  row per job and per edge with those times, counted by the statements merge_job_runs and
  merge_flow_runs against the graph's own last run.
- a check: the one result merge_checks would keep (the newest; at one time, the worst), with
  its own time and run; written after the nodes it tests.
- a run's state (OpenLineage): its earliest event (when it started) and the one
  merge_run_states keeps (a terminal state over START and RUNNING, else the newest).
- schemas (a dataset's columns and types as a source reports them): folded per asset and
  source into versions (lineagegraph.schemas), one per change, so memory grows by changes.
- drops (Snowflake's DROP) come last: an object seen after its drop stays present; `write_run`
  returns those still standing, and the Snowflake harvester applies them.

Memory: bounded by the distinct nodes, jobs and edges held, plus at most `max_pending_runs`
run times, after which jobs and FLOWS_TO are written by `write_window`; not by sightings. A
caller bounds it further by calling `write_run` more often (OpenLineage does, per window).
A run that fails part way has written only consistent rows, and its watermark is not saved,
so the next run writes the rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from lineagegraph.graph.history import History
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import (
    RANK,
    Asset,
    CheckResult,
    Column,
    ColumnFeed,
    Flow,
    Item,
    RunState,
    SoftDelete,
    TagFact,
    Transformation,
)
from lineagegraph.schemas import SchemaLog, SchemaSeen

MAX_PENDING_RUNS = 500_000  # run times held before jobs and FLOWS_TO are written mid-run


@dataclass(frozen=True)
class ColumnShape:
    """A dataset's columns and FEEDS, mapped once for all the runs that repeat them."""

    columns: tuple[Column, ...]  # seen: 0, each run has its own time
    feeds: tuple[tuple[str, str, tuple[str, ...]], ...]  # (source column, column, masked_by)
    sources: tuple[str, ...] = ()  # the source datasets, sorted

    @classmethod
    def of(cls, items: Iterable[Item], sources: Iterable[str] = ()) -> ColumnShape:
        items = list(items)
        return cls(
            tuple(i for i in items if isinstance(i, Column)),
            tuple((i.src, i.dst, i.masked_by) for i in items if isinstance(i, ColumnFeed)),
            tuple(sorted(sources)),
        )

    def items(self, at: int, via: str | None) -> list[Item]:
        out: list[Item] = [Column(c.urn, c.asset, c.name, at) for c in self.columns]
        out.extend(ColumnFeed(src, dst, at, via, masked) for src, dst, masked in self.feeds)
        return out


class ColumnSet(NamedTuple):
    """A shape's columns and FEEDS in one run: one value for the reducer, not one per column."""

    shape: ColumnShape
    at: int
    via: str | None


Value = Item | ColumnSet | SoftDelete | SchemaSeen  # Item includes CheckResult


@dataclass
class _Node:
    """A node's earliest and latest sighting, and the properties of all of them."""

    value: Asset | Column
    first: int
    last: int
    props: dict[str, Any]
    row: int  # the sighting (in order) that saw it last, to order drops against sightings
    written: int | None = None  # the earliest time written so far


@dataclass
class _Runs:
    """Times of a job or a FLOWS_TO newer than every earlier sighting, and the newest run."""

    first: int
    times: list[int]
    via: dict[str, None] = field(default_factory=dict)
    last_run_id: str = ""
    last_user: str | None = None


class RunReducer:
    """Takes the values of each sighting (`add`), writes what a window releases
    (`write_window`) and the rest (`write_run`); see the module doc for why the graph is the
    same."""

    def __init__(self, max_pending_runs: int = MAX_PENDING_RUNS) -> None:
        self.max_pending_runs = max_pending_runs
        self._reset()

    def _reset(self) -> None:
        self._nodes: dict[str, _Node] = {}
        self._unwritten: list[_Node] = []  # nodes whose earliest sighting is not written yet
        self._jobs: dict[str, tuple[Transformation, _Runs]] = {}
        self._job_edges: dict[tuple[str, str, str], list[int]] = {}  # -> [earliest, latest]
        self._flows: dict[tuple[str, str], _Runs] = {}
        # -> [earliest, latest, vias, masking functions, whether a sighting copied it plainly]
        self._feeds: dict[tuple[str, str], list[Any]] = {}
        self._drops: list[tuple[str, int, int]] = []  # (urn, at, sighting)
        self._checks: dict[str, CheckResult] = {}  # urn -> the result merge_checks would keep
        # (source, key, target) -> [the earliest statement, the one merge_tags would keep]
        self._tags: dict[tuple[str, str, str], list[TagFact]] = {}
        self._run_states: dict[str, tuple[RunState, RunState]] = {}  # run -> earliest, kept
        self._schemas = SchemaLog()  # versions per asset and source: by changes, not sightings
        self.self_edges = 0
        self._pending = 0  # run times held for jobs and FLOWS_TO
        self._row = 0
        self._history = History()  # what each run produced: the edges' intervals (drift)

    def add(self, values: Iterable[Value], at: int, run_id: str, user: str | None = None) -> None:
        """One sighting's values (a query, an event), all at `at` by run `run_id`: the values'
        own times are ignored, so a converted row can stand for every run of its shape."""
        self._row += 1
        for value in values:  # exact types, the fastest test: this runs ~27 times per event
            if type(value) is Asset or type(value) is Column:
                self._node(value, at)
            elif type(value) is ColumnSet:
                self._column_set(value, at)
            elif type(value) is Flow:
                self._flow(value, at)
            elif type(value) is Transformation:
                self._job(value, at, run_id, user)
            elif type(value) is ColumnFeed:
                self._feed(value.src, value.dst, at, value.via, value.masked_by)
            elif type(value) is CheckResult:
                kept = self._checks.get(value.urn)
                if kept is None or _check_order(value) > _check_order(kept):
                    self._checks[value.urn] = value
            elif type(value) is RunState:
                self._run_state(value)
            elif type(value) is SoftDelete:
                self._drops.append((value.urn, at, self._row))
            elif type(value) is TagFact:
                self._tag(replace(value, at=at))
            elif type(value) is SchemaSeen:
                self._schemas.add(value, at)
            else:
                raise TypeError(f"a reducer takes no {value!r}")

    def _tag(self, fact: TagFact) -> None:
        """The newest statement wins (a later one at the same time too); the earliest is kept
        for first_seen. Writing both, earliest first, leaves what writing every one would."""
        key = (fact.source, fact.key, fact.target)
        kept = self._tags.get(key)
        if kept is None:
            self._tags[key] = [fact, fact]
            return
        if fact.at < kept[0].at:
            kept[0] = fact
        if fact.at >= kept[1].at:
            kept[1] = fact

    def _run_state(self, state: RunState) -> None:
        held = self._run_states.get(state.run_id)
        if held is None:
            self._run_states[state.run_id] = (state, state)
            return
        earliest, kept = held
        if state.at < earliest.at:
            earliest = state
        if _state_order(state) > _state_order(kept):
            kept = state
        self._run_states[state.run_id] = (earliest, kept)

    def _node(self, value: Asset | Column, at: int) -> None:
        node = self._nodes.get(value.urn)
        props = value.props if type(value) is Asset else None
        if node is None:
            node = self._nodes[value.urn] = _Node(value, at, at, dict(props or {}), self._row)
            self._unwritten.append(node)
            return
        if at < node.first:
            if node.first == node.written:  # written already, and now seen earlier
                self._unwritten.append(node)
            node.first = at
        elif at >= node.last:
            node.last, node.row = at, self._row
        if props:
            node.props.update(props)

    def _column_set(self, columns: ColumnSet, at: int) -> None:
        for column in columns.shape.columns:
            self._node(column, at)
        for src, dst, masked in columns.shape.feeds:
            self._feed(src, dst, at, columns.via, masked)

    def _job(self, job: Transformation, at: int, run_id: str, user: str | None) -> None:
        history = self._history
        history.run(job.urn, at)
        entry = self._jobs.get(job.urn)
        if entry is None:
            self._jobs[job.urn] = (job, _Runs(at, [at], {}, run_id, user))
            self._pending += 1
        else:
            runs = entry[1]
            if at > runs.times[-1]:
                runs.times.append(at)
                runs.last_run_id, runs.last_user = run_id, user
                self._pending += 1
            runs.first = min(runs.first, at)
        for kind, assets in (("r", job.reads), ("w", job.writes)):
            edge = "READS_FROM" if kind == "r" else "WRITES_TO"
            for asset in assets:
                history.sight(edge, job.urn, asset, job.urn, at)
                span = self._job_edges.get((kind, job.urn, asset))
                if span is None:
                    self._job_edges[kind, job.urn, asset] = [at, at]
                else:
                    span[0], span[1] = min(span[0], at), max(span[1], at)

    def _flow(self, flow: Flow, at: int) -> None:
        if flow.src == flow.dst:
            self.self_edges += 1
            return
        self._history.sight("FLOWS_TO", flow.src, flow.dst, flow.via, at)
        runs = self._flows.get((flow.src, flow.dst))
        if runs is None:
            runs = self._flows[flow.src, flow.dst] = _Runs(at, [at])
            self._pending += 1
        elif at > runs.times[-1]:
            runs.times.append(at)
            self._pending += 1
        else:
            runs.first = min(runs.first, at)
        if flow.via is not None:
            runs.via[flow.via] = None

    def _feed(
        self, src: str, dst: str, at: int, via: str | None, masked: tuple[str, ...] = ()
    ) -> None:
        if src == dst:
            self.self_edges += 1
            return
        self._history.sight("FEEDS", src, dst, via, at)
        entry = self._feeds.get((src, dst))
        if entry is None:
            entry = self._feeds[src, dst] = [at, at, {}, {}, False]
        elif at < entry[0]:
            entry[0] = at
        elif at > entry[1]:
            entry[1] = at
        if via is not None:
            entry[2][via] = None
        if masked:
            entry[3].update(dict.fromkeys(masked))
        else:
            entry[4] = True

    def write_window(self, writer: GraphWriter) -> None:
        """Write the nodes first seen since the last window (later windows' edges MATCH them),
        and the job and FLOWS_TO runs once they hold `max_pending_runs` run times."""
        self._write_earliest(writer)
        if self._pending >= self.max_pending_runs:
            self._write_runs(writer)

    def _write_earliest(self, writer: GraphWriter) -> None:
        for node in self._unwritten:
            writer.add(_sighting(node, node.first))
            node.written = node.first
        self._unwritten = []
        writer.flush()

    def _write_runs(self, writer: GraphWriter) -> None:
        jobs = [
            {"urn": urn, "system": job.system, "name": job.name, "times": r.times,
             "first": r.first, "last": r.times[-1], "last_run_id": r.last_run_id,
             "last_user": r.last_user}
            for urn, (job, r) in self._jobs.items()
        ]  # fmt: skip
        flows = [
            {
                "src": src,
                "dst": dst,
                "times": r.times,
                "first": r.first,
                "last": r.times[-1],
                "via": list(r.via),
            }
            for (src, dst), r in self._flows.items()
        ]
        writer.write("merge_job_runs", jobs, ("urn",))
        writer.write("merge_flow_runs", flows, ("src", "dst"))
        self._jobs, self._flows, self._pending = {}, {}, 0

    def write_run(self, writer: GraphWriter) -> list[dict[str, Any]]:
        """Write everything held, in dependency order; start afresh. Returns the drops
        (`urn`, `at`; not one a sighting in the same ms undid), for the system that issued them
        to apply after this (the Snowflake harvester's soft deletes, graph.history): the
        reducer writes no system's drops."""
        self._write_earliest(writer)
        writer.add_all(_sighting(n, n.last) for n in self._nodes.values() if n.last > n.first)
        writer.flush()
        self._write_runs(writer)
        counts = writer.counts
        edges: dict[str, list[dict[str, Any]]] = {"r": [], "w": []}
        for (kind, job_urn, asset), (first, last) in self._job_edges.items():
            edges[kind].extend(
                {"t": job_urn, "asset": asset, "at": at} for at in dict.fromkeys((first, last))
            )
        for name, kind in (("merge_reads_from", "r"), ("merge_writes_to", "w")):
            writer.write(name, edges[kind], ("t", "asset"))
        for (src, dst), (first, last, vias, masking, plain) in self._feeds.items():
            order: list[str | None] = [*vias] or [None]
            masked = tuple(masking)  # every function seen; a plain sighting is one more row
            writer.add_all(ColumnFeed(src, dst, first, via, masked) for via in order)
            if last > first:
                writer.add(ColumnFeed(src, dst, last, order[-1], masked))
            if masked and plain:
                writer.add(ColumnFeed(src, dst, first, order[0]))
        writer.flush()
        self._history.write(writer.store)
        writer.add_all(self._checks.values())
        writer.add_all(fact for kept in self._tags.values() for fact in dict.fromkeys(kept))
        for earliest, kept in self._run_states.values():
            writer.add_all(dict.fromkeys((earliest, kept)))
        writer.add_all(self._schemas.sightings())
        writer.flush()
        counts["self_edges_skipped"] += self.self_edges
        # Every drop goes on (a later sighting brings the asset back: graph.history), but one
        # followed in sighting order by a sighting in the same ms, which undoes it.
        rows = [
            {"urn": urn, "at": at}
            for urn, at, row in self._drops
            if urn not in self._nodes or self._nodes[urn].row < row or self._nodes[urn].last > at
        ]
        if self._drops:
            counts["drops_applied"] += len(rows)
        self._reset()
        return rows


def _check_order(check: CheckResult) -> tuple[int, int, int]:
    """Which of two results of a check cypher/merge_checks.cypher keeps: the larger."""
    return check.at, RANK[check.status], -1 if check.failures is None else check.failures


def _state_order(state: RunState) -> tuple[bool, int]:
    """Which of two states of a run cypher/merge_run_states.cypher keeps: the larger."""
    return state.terminal, state.at


def _sighting(node: _Node, at: int) -> Item:
    if type(node.value) is Asset:
        return replace(node.value, seen=at, props=node.props)
    return replace(node.value, seen=at)
