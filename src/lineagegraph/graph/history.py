"""When each lineage edge held: the runs of a window, what each run produced, and the intervals
that follow, written onto the edges (docs/history.md).

Every lineage edge (FLOWS_TO, FEEDS, READS_FROM, WRITES_TO) keeps `first_seen`, the times it
stopped holding (`stopped`) and came back (`resumed`), and `retired_at` while it is stopped.
A transformation's run says what it read and wrote: an edge that an earlier run of the same
transformation produced and a newer one does not stops at the newer run's time (drift), and
an edge produced by several transformations (`via`) stops when the last of them stops
producing it. FLOWS_TO and FEEDS keep `live`, the transformations producing them now, so the
next window knows; READS_FROM and WRITES_TO have one transformation, their own.

A writer that knows runs (the RunReducer, the Spark agent) tells a `History` every run
(`run`) and every edge it produced (`sight`), then, around its edge MERGEs, calls
`read_prior` (before: the edges' state) and `write` (after: the new state). The work is per
window, in one read and one write statement per kind of edge, never per run. Runs must come
in time order to be exact; an older run arriving after a newer one adds what it saw and stops
nothing.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from lineagegraph.graph.base import GraphStore
from lineagegraph.model import ColumnFeed, Flow, Item, Transformation

Kind = Literal["READS_FROM", "WRITES_TO", "FLOWS_TO", "FEEDS"]
KINDS: tuple[Kind, ...] = ("READS_FROM", "WRITES_TO", "FLOWS_TO", "FEEDS")
_NAMES: dict[Kind, str] = {
    "READS_FROM": "reads_from",
    "WRITES_TO": "writes_to",
    "FLOWS_TO": "flows",
    "FEEDS": "feeds",
}
NO_VIA = ""
"""The producer of an edge sighted without a transformation (a view's dependencies): it has
no runs, so what it produced never drifts."""
_OPEN = None  # an interval that still holds


@dataclass(slots=True)
class _Edge:
    """An edge's sightings in one window: per producer, runs of consecutive sightings
    [first, last] (consecutive in that producer's runs)."""

    segments: dict[str, list[list[int]]] = field(default_factory=dict)


@dataclass(slots=True)
class Prior:
    """An edge's history as the graph held it before the window."""

    first_seen: int | None
    last_seen: int | None
    stopped: list[int]
    resumed: list[int]
    retired_at: int | None
    live: list[str]


class History:
    """The runs and sightings of one window; see the module doc."""

    def __init__(self) -> None:
        self._runs: dict[str, list[int]] = {}  # producer -> its run times, ascending
        self._column_runs: dict[str, list[int]] = {}  # producer -> runs that gave FEEDS
        self._edges: dict[tuple[Kind, str, str], _Edge] = {}
        self._prior: dict[tuple[Kind, str, str], Prior] = {}

    def __bool__(self) -> bool:
        return bool(self._edges)

    def run(self, job: str, at: int, *, columns: bool = False) -> None:
        """A run of `job` at `at`; `columns`: one that told column lineage (FEEDS drift only
        against those: a run that says nothing of columns stops none)."""
        times = (self._column_runs if columns else self._runs).setdefault(job, [])
        if not times or at > times[-1]:
            times.append(at)
        elif at != times[-1]:
            i = bisect_left(times, at)
            if i == len(times) or times[i] != at:
                times.insert(i, at)

    def sight(self, kind: Kind, src: str, dst: str, via: str | None, at: int) -> None:
        """`via`'s run at `at` produced the edge `src`-[kind]->`dst`."""
        producer = via or NO_VIA
        if kind == "FEEDS" and via:
            self.run(producer, at, columns=True)
        edge = self._edges.get((kind, src, dst))
        if edge is None:
            edge = self._edges[kind, src, dst] = _Edge()
        segments = edge.segments.get(producer)
        if segments is None:
            edge.segments[producer] = [[at, at]]
            return
        last = segments[-1]
        if at <= last[1]:
            if at < segments[0][0]:  # an older sighting than any: it starts earlier
                segments[0][0] = at
            return
        runs = self._times(kind, producer)
        before = runs[bisect_left(runs, at) - 1] if runs and runs[0] < at else None
        if before is None or last[1] >= before:
            last[1] = at  # seen in the producer's run before this one too: still holding
        else:
            segments.append([at, at])

    def take(self, items: Iterable[Item]) -> None:
        """The runs and edges among `items`, each at its own time (a writer without a reducer:
        the Spark agent, one action at a time)."""
        for item in items:
            if type(item) is Transformation:
                self.run(item.urn, item.run_at)
                for asset in item.reads:
                    self.sight("READS_FROM", item.urn, asset, item.urn, item.run_at)
                for asset in item.writes:
                    self.sight("WRITES_TO", item.urn, asset, item.urn, item.run_at)
            elif type(item) is Flow and item.src != item.dst:
                self.sight("FLOWS_TO", item.src, item.dst, item.via, item.at)
            elif type(item) is ColumnFeed and item.src != item.dst:
                self.sight("FEEDS", item.src, item.dst, item.via, item.at)

    def _times(self, kind: Kind, producer: str) -> list[int]:
        return (self._column_runs if kind == "FEEDS" else self._runs).get(producer, [])

    def read_prior(self, store: GraphStore) -> None:
        """The graph's history of every edge sighted, and of the live edges of every job that
        ran: read before the window's edges are written."""
        jobs = sorted(self._runs)
        column_jobs = sorted(self._column_runs)
        for kind in KINDS:
            rows = [{"src": s, "dst": d} for (k, s, d) in self._edges if k == kind]
            ran = column_jobs if kind == "FEEDS" else jobs
            if not rows and not ran:
                continue
            params = {"rows": rows, "jobs": ran}
            for row in store.read(f"history_state_{_NAMES[kind]}", params):
                self._prior[kind, row["src"], row["dst"]] = Prior(
                    row["first_seen"],
                    row["last_seen"],
                    list(row["stopped"] or ()),
                    list(row["resumed"] or ()),
                    row["retired_at"],
                    list(row["live"] or ()),
                )

    def write(self, store: GraphStore) -> int:
        """Write the new history of every edge whose history changed; returns how many edges
        stopped holding in this window. Start afresh."""
        rows: dict[Kind, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
        stops = 0
        for key in dict.fromkeys([*self._edges, *self._prior]):
            row = self._history(key)
            if row is not None:
                rows[key[0]].append(row)
                stops += row["retired_at"] is not None
        for kind, kind_rows in rows.items():
            if kind_rows:
                store.write_batches(f"history_set_{_NAMES[kind]}", kind_rows, ("src", "dst"))
        self.__init__()  # type: ignore[misc]
        return stops

    def _history(self, key: tuple[Kind, str, str]) -> dict[str, Any] | None:
        """The row that sets an edge's history after the window, or None when unchanged."""
        kind, src, dst = key
        prior = self._prior.get(key)
        edge = self._edges.get(key) or _Edge()
        before = prior is not None and prior.retired_at is None
        live_before = set(prior.live or [NO_VIA]) if before and prior else set()
        spans: list[list[int | None]] = []
        live: list[str] = []
        for producer in dict.fromkeys([*sorted(live_before), *edge.segments]):
            runs = self._times(kind, producer)
            if prior is not None and prior.last_seen is not None:  # older runs stop nothing
                runs = runs[bisect_right(runs, prior.last_seen) :]
            own = _spans(edge.segments.get(producer, []), runs, producer in live_before)
            spans.extend(own)
            if own and own[-1][1] is _OPEN:
                live.append(producer)
        stopped = list(prior.stopped) if prior else []
        resumed = list(prior.resumed) if prior else []
        held = before or prior is None  # a new edge starts at first_seen, not a resumption
        end: int | None = None
        for start, stop in _union(spans):
            if not held and start is not None:
                resumed.append(start)
            held = stop is _OPEN
            end = stop
            if stop is not _OPEN:
                stopped.append(stop)
        known = (prior.first_seen if prior else None, *_starts(edge))
        first = min((x for x in known if x is not None), default=None)
        stopped, resumed = _after(stopped, resumed, first)
        retired_at = None if held else (stopped[-1] if stopped else end)
        row_live = sorted(live) if kind in ("FLOWS_TO", "FEEDS") else None
        if prior is not None and (
            prior.stopped == stopped
            and prior.resumed == resumed
            and prior.retired_at == retired_at
            and (row_live is None or _merged_live(kind, prior, edge) == row_live)
        ):
            return None
        return {"src": src, "dst": dst, "stopped": stopped or None, "resumed": resumed or None,
                "retired_at": retired_at, "live": row_live}  # fmt: skip


def _merged_live(kind: Kind, prior: Prior, edge: _Edge) -> list[str]:
    """`live` as the window's MERGEs leave it: merge_flow_runs keeps it, merge_column_feeds
    adds the transformations it sees (as every writer without runs does)."""
    if kind == "FLOWS_TO":
        return sorted(prior.live)
    return sorted({*prior.live, *(p for p in edge.segments if p != NO_VIA)})


def _starts(edge: _Edge) -> Iterable[int]:
    return (segments[0][0] for segments in edge.segments.values())


def _spans(segments: list[list[int]], runs: list[int], held: bool) -> list[list[int | None]]:
    """When one producer held an edge in the window: from each run of sightings to its next
    run that did not produce it (open when none did). `held`: it held the edge before the
    window (a span from before, None, to its first run without it)."""
    spans: list[list[int | None]] = []
    if held:
        if runs and (not segments or segments[0][0] > runs[0]):
            spans.append([None, runs[0]])
        elif segments:
            segments = [[None, segments[0][1]], *segments[1:]]  # type: ignore[list-item]
        else:
            return [[None, _OPEN]]
    for first, last in segments:
        i = bisect_right(runs, last)
        spans.append([first, runs[i] if i < len(runs) else _OPEN])
    return spans


def _union(spans: list[list[int | None]]) -> list[list[int | None]]:
    """Spans joined where they touch or overlap, in time order (None: from before / open)."""
    ordered = sorted(spans, key=lambda s: -1 << 62 if s[0] is None else s[0])
    out: list[list[int | None]] = []
    for start, stop in ordered:
        if out and (out[-1][1] is _OPEN or (start is not None and start <= out[-1][1])):
            if out[-1][1] is not _OPEN and (stop is _OPEN or stop > out[-1][1]):
                out[-1][1] = stop
            continue
        out.append([start, stop])
    return out


def _after(
    stopped: list[int], resumed: list[int], first: int | None
) -> tuple[list[int], list[int]]:
    """Stops before the edge was first seen are no stops (an edge written earlier in the same
    harvest, before its history): dropped with the resumption that follows each."""
    if first is None or not stopped or stopped[0] >= first:
        return stopped, resumed
    keep = [i for i, s in enumerate(stopped) if s >= first]
    dropped = len(stopped) - len(keep)
    return [stopped[i] for i in keep], resumed[dropped:]


def delete_assets(store: GraphStore, rows: list[dict[str, Any]]) -> None:
    """Soft-delete assets (`rows`: {urn, at}, a DROP's) and stop the lineage that held through
    them at the same time: a deleted asset's edges stop with it."""
    if rows:
        store.write_batches("snowflake_soft_delete", rows, ("urn",))
        store.write_batches("history_stop_deleted", rows, ("urn",))
        store.write_batches("history_stop_deleted_feeds", rows, ("urn",))
