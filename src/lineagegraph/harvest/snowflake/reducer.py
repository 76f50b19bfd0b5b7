"""Fewer graph rows, same graph: a harvest repeats the same jobs, tables and columns thousands of
times, and writing each sighting costs a MERGE.

What each kind of value needs to come out exactly as if every row were written in time order:

- nodes (assets, columns): only their earliest sighting (it creates the node, so `first_seen`)
  and their latest (`last_seen`, props, undeletion). The earliest is written with the window
  that first sees it, so every later edge can MATCH it; the latest at the end of the run.
- column FEEDS and job READS_FROM / WRITES_TO: their earliest and latest sighting and the
  transformations on them (`via`), written once at the end of the run.
- transformations and FLOWS_TO count runs (`runs` grows for each run newer than the last one
  seen): one row per job and per edge with the list of its distinct run times, counted by the
  statements merge_job_runs and merge_flow_runs.
- drops come last: an object seen after its drop stays present.

Memory: bounded by the number of distinct nodes, jobs and edges, plus at most
MAX_PENDING_RUNS run times, after which jobs and FLOWS_TO are written mid-run; not by rows.
A run that fails part way has written only consistent rows, and its watermark is not saved,
so the next run writes the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.snowflake.access_history import Output, SoftDelete
from lineagegraph.model import Asset, Column, ColumnFeed, Flow, Item, Transformation

MAX_PENDING_RUNS = 500_000  # run times held before jobs and FLOWS_TO are written mid-run


@dataclass
class _Span:
    """A node's earliest and latest sighting in this run (the value keeps the latest props)."""

    value: Asset | Column
    first: int
    last: int
    last_row: int  # the row (in order) that saw it last, to order drops against sightings


@dataclass
class _Runs:
    """Distinct run times of a job or an edge not yet written, and the newest run's facts."""

    first: int
    last: int
    times: set[int] = field(default_factory=set)
    via: dict[str, None] = field(default_factory=dict)
    last_run_id: str = ""
    last_user: str | None = None


class RunReducer:
    """Collects converted rows (`add_row`), writes what each window releases
    (`write_window`) and the rest at the end of the run (`write_run`); see the module doc for
    why the result is the same graph."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._nodes: dict[str, _Span] = {}
        self._new_nodes: list[Item] = []
        self._jobs: dict[str, tuple[Transformation, _Runs]] = {}
        self._job_edges: dict[tuple[str, str, str], list[int]] = {}
        self._flows: dict[tuple[str, str], _Runs] = {}
        self._feeds: dict[tuple[str, str], _Runs] = {}
        self._drops: list[tuple[SoftDelete, int]] = []
        self.self_edges = 0
        self._pending = 0  # run times held for jobs and FLOWS_TO
        self._row = 0

    def add_row(self, outputs: Iterable[Output], at: int, run_id: str, user: str | None) -> None:
        """One query's values; their own times are ignored for `at` (rows come oldest first,
        so a converted row can be reused for another run of the same query shape)."""
        self._row += 1
        for value in outputs:
            if isinstance(value, Asset | Column):
                self._node(value, at)
            elif isinstance(value, Transformation):
                self._job(value, at, run_id, user)
            elif isinstance(value, Flow):
                if value.src == value.dst:
                    self.self_edges += 1
                else:
                    self._pending += self._runs(self._flows, (value.src, value.dst), at, value.via)
            elif isinstance(value, ColumnFeed):
                if value.src == value.dst:
                    self.self_edges += 1
                else:
                    self._runs(self._feeds, (value.src, value.dst), at, value.via)
            elif isinstance(value, SoftDelete):
                self._drops.append((SoftDelete(value.urn, at), self._row))

    def _node(self, value: Asset | Column, at: int) -> None:
        span = self._nodes.get(value.urn)
        if span is None:
            self._nodes[value.urn] = _Span(value, at, at, self._row)
            self._new_nodes.append(replace(value, seen=at))
        elif at >= span.last:
            span.value, span.last, span.last_row = value, at, self._row

    def _job(self, job: Transformation, at: int, run_id: str, user: str | None) -> None:
        entry = self._jobs.get(job.urn)
        if entry is None:
            entry = self._jobs[job.urn] = (job, _Runs(at, at, last_run_id=run_id, last_user=user))
        runs = entry[1]
        self._pending += at not in runs.times
        runs.times.add(at)
        runs.first = min(runs.first, at)
        if at > runs.last:
            runs.last, runs.last_run_id, runs.last_user = at, run_id, user
        for kind, assets in (("r", job.reads), ("w", job.writes)):
            for asset in assets:
                span = self._job_edges.setdefault((kind, job.urn, asset), [at, at])
                span[0], span[1] = min(span[0], at), max(span[1], at)

    @staticmethod
    def _runs(
        table: dict[tuple[str, str], _Runs], key: tuple[str, str], at: int, via: str | None
    ) -> bool:
        """Record a sighting; True when its time is new for the key."""
        runs = table.get(key)
        if runs is None:
            runs = table[key] = _Runs(at, at)
        new = at not in runs.times
        runs.times.add(at)
        runs.first, runs.last = min(runs.first, at), max(runs.last, at)
        if via is not None:
            runs.via[via] = None
        return new

    def write_window(self, store: GraphStore, writer: GraphWriter, counts: Counter[str]) -> None:
        """Write the nodes first seen in this window (later windows' edges MATCH them), and the
        job and FLOWS_TO runs once they hold `MAX_PENDING_RUNS` run times."""
        writer.add_all(self._new_nodes)
        writer.flush()
        self._new_nodes = []
        if self._pending >= MAX_PENDING_RUNS:
            self._write_runs(store, counts)

    def _write_runs(self, store: GraphStore, counts: Counter[str]) -> None:
        jobs = [
            {
                "urn": job.urn,
                "system": job.system,
                "name": job.name,
                "times": sorted(r.times),
                "first": r.first,
                "last": r.last,
                "last_run_id": r.last_run_id,
                "last_user": r.last_user,
            }
            for job, r in self._jobs.values()
        ]
        flows = [
            {
                "src": src,
                "dst": dst,
                "times": sorted(r.times),
                "first": r.first,
                "last": r.last,
                "via": list(r.via),
            }
            for (src, dst), r in self._flows.items()
        ]
        counts["merge_transformations"] += store.write_batches("merge_job_runs", jobs, ("urn",))
        counts["merge_flows"] += store.write_batches("merge_flow_runs", flows, ("src", "dst"))
        self._jobs, self._flows, self._pending = {}, {}, 0

    def write_run(self, store: GraphStore, writer: GraphWriter, counts: Counter[str]) -> None:
        """At the end of the run: the rest, in dependency order, then the drops."""
        writer.add_all(self._new_nodes)
        for span in self._nodes.values():
            if span.last != span.first:
                writer.add(replace(span.value, seen=span.last))
        writer.flush()
        self._write_runs(store, counts)
        edges: dict[str, list[dict[str, Any]]] = {"r": [], "w": []}
        for (kind, job_urn, asset), (first, last) in self._job_edges.items():
            edges[kind].extend(
                {"t": job_urn, "asset": asset, "at": at} for at in dict.fromkeys((first, last))
            )
        counts["merge_reads_from"] += store.write_batches(
            "merge_reads_from", edges["r"], ("t", "asset")
        )
        counts["merge_writes_to"] += store.write_batches(
            "merge_writes_to", edges["w"], ("t", "asset")
        )
        for (src, dst), runs in self._feeds.items():
            vias: list[str | None] = [*runs.via] or [None]
            for via in vias:
                writer.add(ColumnFeed(src, dst, runs.first, via))
            if runs.last != runs.first:
                writer.add(ColumnFeed(src, dst, runs.last, vias[-1]))
        writer.flush()
        counts["self_edges_skipped"] += self.self_edges
        # A drop followed (in row order) by a sighting is undone by it, even in the same ms.
        rows = [
            {"urn": drop.urn, "at": drop.at}
            for drop, row in self._drops
            if drop.urn not in self._nodes or self._nodes[drop.urn].last_row < row
        ]
        counts["drops_applied"] += len(rows)
        if rows:
            store.write_batches("snowflake_soft_delete", rows, ("urn",))
        self._reset()
