"""When each lineage edge held and each asset was there, recomputed from the facts every window
adds, so the answer does not depend on the order facts arrive in (docs/history.md).

The graph keeps the facts: per transformation the times of its runs (`run_times`, and
`column_run_times` for the runs that told column lineage, which FEEDS drift against); per
lineage edge (FLOWS_TO, FEEDS, READS_FROM, WRITES_TO) and producer the intervals it held
(parallel lists `held_by`, `held_from`, `held_until`; `held_until` is OPEN while it holds);
per asset its drops (`drops`), and a `:PendingDrop` for a drop of an asset not known yet.

An interval of a producer runs from a run that produced the edge to its next run that did
not (drift): every run of the producer within it produced the edge. From those, the endpoints'
drops (a deleted asset's lineage stops with it, and comes back with the next run producing it)
and the runs, each window derives in Python what every reader uses: the edges' `first_seen`
interval, `stopped`, `resumed`, `retired_at`, `live` and `changed_at`; the assets' `deleted`,
`restored`, `deleted_at` and `changed_at`. An edge produced by several transformations (`via`)
holds while any of them does.

A writer that knows runs (the RunReducer, the Spark agent, dbt) tells a `History` every run
(`run`) and every edge it produced (`sight`), then calls `write` after its edge MERGEs. The
work is per window, one read and one write statement per kind, never per run: the window reads
the facts of the edges it sighted, of the edges held by the jobs that ran since their earliest
run in it, and of the edges of assets dropped in it; merges its runs into the run times,
recomputes each of those edges against the full run list, and writes them back.
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
no runs, so what it produced never drifts; it stops only when an endpoint is dropped."""
OPEN = -1
"""`held_until` of an interval that still holds (a stored list cannot hold a null)."""
_NEVER = 1 << 62  # an open interval's end, for comparisons

Interval = tuple[int, int]  # [from, until): until is _NEVER while it holds


@dataclass(slots=True)
class _Facts:
    """An edge's stored facts and the history derived from them, as the graph holds them."""

    src_asset: str | None
    dst_asset: str | None
    held: dict[str, list[Interval]]
    derived: tuple[Any, ...]


@dataclass(slots=True)
class _Asset:
    known: bool
    first_seen: int | None
    last_seen: int | None
    drops: list[int]
    derived: tuple[Any, ...] = field(default=())


class History:
    """The runs, sightings and drops of one window; see the module doc."""

    def __init__(self) -> None:
        self._runs: dict[str, set[int]] = {}  # producer -> its run times in the window
        self._column_runs: dict[str, set[int]] = {}  # producer -> runs that told FEEDS
        self._edges: dict[tuple[Kind, str, str], dict[str, set[int]]] = {}  # -> producer: times
        self._drops: dict[str, set[int]] = {}  # asset urn -> drops in the window
        self._changed: set[str] = set()  # known assets whose drops grew (write)
        self._stored_drops: dict[str, list[int]] = {}  # asset urn -> drops (edge states)

    def __bool__(self) -> bool:
        return bool(self._edges or self._drops or self._runs or self._column_runs)

    def run(self, job: str, at: int, *, columns: bool = False) -> None:
        """A run of `job` at `at`; `columns`: one that told column lineage (FEEDS drift only
        against those: a run that says nothing of columns stops none)."""
        (self._column_runs if columns else self._runs).setdefault(job, set()).add(at)

    def sight(self, kind: Kind, src: str, dst: str, via: str | None, at: int) -> None:
        """`via`'s run at `at` produced the edge `src`-[kind]->`dst`."""
        producer = via or NO_VIA
        if via:  # a sighting by a transformation is one of its runs
            self.run(producer, at, columns=kind == "FEEDS")
        by = self._edges.get((kind, src, dst))
        if by is None:
            by = self._edges[kind, src, dst] = {}
        times = by.get(producer)
        if times is None:
            by[producer] = {at}
        else:
            times.add(at)

    def drop(self, urn: str, at: int) -> None:
        """The asset `urn` was dropped at `at` (its lineage stops with it)."""
        self._drops.setdefault(urn, set()).add(at)

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

    def write(self, store: GraphStore) -> int:
        """Recompute and write the history of every edge and asset the window touches;
        returns how many of those edges are stopped now. Start afresh."""
        if not self:
            return 0
        assets = self._assets(store)
        changed_drops = sorted(u for u, a in assets.items() if a.known and u in self._changed)
        runs = _Runs(store)
        for producer, times in self._runs.items():
            runs.add(producer, times, columns=False)
        for producer, times in self._column_runs.items():
            runs.add(producer, times, columns=True)
        facts = self._read_edges(store, changed_drops)
        producers = {p for f in facts.values() for p in f.held}
        producers.update(self._runs, self._column_runs)
        runs.load(producers)
        stops = 0
        rows: dict[Kind, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
        for key in dict.fromkeys([*self._edges, *facts]):
            fact = facts.get(key)
            drops = self._endpoint_drops(fact, assets)
            row = self._edge(key, fact, runs, drops)
            if row is None:
                continue
            rows[key[0]].append(row)
            stops += row["retired_at"] is not None
        runs.write()
        for kind, kind_rows in rows.items():
            if kind_rows:
                store.write_batches(f"history_set_{_NAMES[kind]}", kind_rows, ("src", "dst"))
        self._write_assets(store, assets)
        self.__init__()  # type: ignore[misc]
        return stops

    # --- assets -------------------------------------------------------------------------------

    def _sighted_assets(self) -> set[str]:
        out: set[str] = set()
        for kind, src, dst in self._edges:
            if kind == "FLOWS_TO":
                out.add(src)
                out.add(dst)
            elif kind != "FEEDS":
                out.add(dst)
        return out

    def _assets(self, store: GraphStore) -> dict[str, _Asset]:
        """The drops of the assets the window dropped or sighted (with the pending drops of
        those now known); `_changed`: the known assets whose drops grew."""
        urns = sorted(self._sighted_assets() | set(self._drops))
        out: dict[str, _Asset] = {}
        for row in store.read("history_assets", {"urns": urns}) if urns else []:
            stored = list(row["drops"] or ())
            # a deletion made outside the history (an S3 soft delete) is a drop too: a drop
            # later derives `deleted` from the drops and keeps it
            outside = row["deleted"] or ()
            window = self._drops.get(row["urn"], ())
            drops = sorted({*stored, *outside, *(row["pending"] or ()), *window})
            asset = _Asset(row["known"], row["first_seen"], row["last_seen"], drops)
            asset.derived = (row["deleted"], row["restored"], row["deleted_at"])
            out[row["urn"]] = asset
            if drops != stored or row["pending"]:
                self._changed.add(row["urn"])
        return out

    def _write_assets(self, store: GraphStore, assets: dict[str, _Asset]) -> None:
        """Pending drops for assets not known yet; for the others with drops, their presence
        from the drops and their sightings (first and last, and every run that read or wrote
        them: history_edges_of_assets, read after the edges are written)."""
        pending = [
            {"urn": urn, "at": at}
            for urn, asset in assets.items()
            if not asset.known
            for at in sorted(self._drops.get(urn, ()))
        ]
        if pending:
            store.write_batches("history_pending_drops", pending)
        todo = sorted(u for u, a in assets.items() if a.known and a.drops)
        if not todo:
            return
        seen: dict[str, list[tuple[list[int], list[int], list[int]]]] = {u: [] for u in todo}
        for row in store.read("history_edges_of_assets", {"urns": todo}):
            starts, untils = list(row["held_from"] or ()), list(row["held_until"] or ())
            seen[row["urn"]].append((starts, untils, sorted(row["runs"] or ())))
        rows = []
        for urn in todo:
            asset = assets[urn]
            deleted, restored, deleted_at = _presence(asset, seen[urn])
            if urn not in self._changed and asset.derived == (
                deleted or None,
                restored or None,
                deleted_at,
            ):
                continue
            times = [t for t in (asset.first_seen, *deleted, *restored) if t is not None]
            rows.append({"urn": urn, "drops": asset.drops, "deleted": deleted or None,
                         "restored": restored or None, "deleted_at": deleted_at,
                         "changed_at": max(times, default=None)})  # fmt: skip
        if rows:
            store.write_batches("history_set_assets", rows, ("urn",))

    # --- edges --------------------------------------------------------------------------------

    def _read_edges(
        self, store: GraphStore, dropped: list[str]
    ) -> dict[tuple[Kind, str, str], _Facts]:
        """The stored facts of the edges sighted, of those held by a job that ran since its
        earliest run in the window, and of those of the assets whose drops grew."""
        out: dict[tuple[Kind, str, str], _Facts] = {}
        for kind in KINDS:
            rows = [{"src": s, "dst": d} for (k, s, d) in self._edges if k == kind]
            ran = self._column_runs if kind == "FEEDS" else self._runs
            jobs = [{"t": t, "after": min(times)} for t, times in sorted(ran.items()) if t]
            if not rows and not jobs and not dropped:
                continue
            params = {"rows": rows, "jobs": jobs, "assets": dropped}
            for row in store.read(f"history_state_{_NAMES[kind]}", params):
                held: dict[str, list[Interval]] = {}
                for by, start, until in zip(
                    row["held_by"] or (),
                    row["held_from"] or (),
                    row["held_until"] or (),
                    strict=True,
                ):
                    held.setdefault(by, []).append((start, _NEVER if until == OPEN else until))
                key = (kind, row["src"], row["dst"])
                legacy = row["held_by"] is None and row["first_seen"] is not None
                if legacy and key not in self._edges:  # (one the window sighted starts over)
                    held = _legacy(row, kind in ("FLOWS_TO", "FEEDS"))
                for intervals in held.values():
                    intervals.sort()
                derived = (row["stopped"], row["resumed"], row["retired_at"],
                           row["live"], row["changed_at"], row["first_seen"])  # fmt: skip
                out[key] = _Facts(row["src_asset"], row["dst_asset"], held, derived)
                for end in ("src", "dst"):
                    if row[f"{end}_asset"] is not None:
                        drops = list(row[f"{end}_drops"] or ())
                        self._stored_drops.setdefault(row[f"{end}_asset"], drops)
        return out

    def _endpoint_drops(self, fact: _Facts | None, assets: dict[str, _Asset]) -> list[int]:
        if fact is not None:
            ends = [u for u in (fact.src_asset, fact.dst_asset) if u is not None]
        else:  # not in the graph (an endpoint missing): nothing to stop
            ends = []
        drops: set[int] = set()
        for urn in ends:
            asset = assets.get(urn)
            drops.update(asset.drops if asset is not None else self._stored_drops.get(urn, ()))
            drops.update(self._drops.get(urn, ()))
        return sorted(drops)

    def _edge(
        self,
        key: tuple[Kind, str, str],
        fact: _Facts | None,
        runs: _Runs,
        drops: list[int],
    ) -> dict[str, Any] | None:
        """The row that sets an edge's facts and history, or None when the graph holds them
        already."""
        kind, src, dst = key
        columns = kind == "FEEDS"
        sighted = self._edges.get(key, {})
        ran = self._column_runs if columns else self._runs
        held = dict(fact.held) if fact is not None else {}
        for producer in dict.fromkeys([*held, *sighted]):
            times = sighted.get(producer, set())
            if producer == NO_VIA:
                held[producer] = _starts(held.get(producer, []), times)
            elif producer in ran or times:
                held[producer] = _resegment(
                    held.get(producer, []),
                    runs.prior_set(producer, columns),
                    runs.all(producer, columns),
                    times,
                    min(ran.get(producer) or times),
                )
        pieces: list[Interval] = []
        live: list[str] = []
        for producer, intervals in held.items():
            own = _cut(intervals, drops, [] if producer == NO_VIA else runs.all(producer, columns))
            pieces.extend(own)
            if own and own[-1][1] == _NEVER:
                live.append(producer)
        starts = [iv[0][0] for iv in held.values() if iv]
        if not starts:
            return None
        first = min(starts)
        stopped, resumed, retired_at = _history(first, pieces)
        times = [first, *stopped, *resumed]
        row_live = sorted(live) if kind in ("FLOWS_TO", "FEEDS") else None
        derived = (stopped or None, resumed or None, retired_at, row_live, max(times), first)
        by, start, until = [], [], []
        for producer in sorted(held):
            for a, b in held[producer]:
                by.append(producer)
                start.append(a)
                until.append(OPEN if b == _NEVER else b)
        if (  # read after the window's MERGEs: what they left is right already
            fact is not None
            and fact.held == {p: iv for p, iv in held.items() if iv}
            and _same(fact.derived, derived, kind)
        ):
            return None
        return {"src": src, "dst": dst, "held_by": by, "held_from": start, "held_until": until,
                "stopped": stopped or None, "resumed": resumed or None, "retired_at": retired_at,
                "live": row_live, "changed_at": max(times), "first_seen": first}  # fmt: skip


def _legacy(row: dict[str, Any], via: bool) -> dict[str, list[Interval]]:
    """The intervals of an edge written without its facts (before this version, or by a
    writer without runs), from its history: those that ended as without a producer, the one
    that holds as its live producers' (`via`: FLOWS_TO, FEEDS; else its transformation)."""
    starts = [row["first_seen"], *(row["resumed"] or ())]
    stops = list(row["stopped"] or ())
    held: dict[str, list[Interval]] = {}
    for i, start in enumerate(starts):
        if i < len(stops):
            held.setdefault(NO_VIA, []).append((start, stops[i]))
        else:
            for producer in (row["live"] if via else [row["src"]]) or [NO_VIA]:
                held.setdefault(producer, []).append((start, _NEVER))
    return held


def _same(stored: tuple[Any, ...], derived: tuple[Any, ...], kind: Kind) -> bool:
    s_stopped, s_resumed, s_retired, s_live, s_changed, s_first = stored
    d_stopped, d_resumed, d_retired, d_live, d_changed, d_first = derived
    return (
        list(s_stopped or []) == list(d_stopped or [])
        and list(s_resumed or []) == list(d_resumed or [])
        and s_retired == d_retired
        and s_changed == d_changed
        and s_first == d_first
        and (kind not in ("FLOWS_TO", "FEEDS") or sorted(s_live or []) == d_live)
    )


class _Runs:
    """Each producer's run times: as stored (read once per window) and with the window's."""

    def __init__(self, store: GraphStore) -> None:
        self._store = store
        self._window: dict[tuple[str, bool], set[int]] = {}
        self._prior: dict[tuple[str, bool], list[int]] = {}
        self._prior_sets: dict[tuple[str, bool], set[int]] = {}
        self._all: dict[tuple[str, bool], list[int]] = {}

    def add(self, producer: str, times: set[int], *, columns: bool) -> None:
        if producer != NO_VIA:
            self._window[producer, columns] = times

    def load(self, producers: set[str]) -> None:
        """Read the stored run times of `producers` (one statement)."""
        wanted = sorted(p for p in producers if p != NO_VIA)
        if not wanted:
            return
        for row in self._store.read("history_runs", {"urns": wanted}):
            self._prior[row["urn"], False] = list(row["run_times"] or ())
            self._prior[row["urn"], True] = list(row["column_run_times"] or ())

    def prior_set(self, producer: str, columns: bool) -> set[int]:
        key = (producer, columns)
        found = self._prior_sets.get(key)
        if found is None:
            found = self._prior_sets[key] = set(self._prior.get(key, ()))
        return found

    def all(self, producer: str, columns: bool) -> list[int]:
        key = (producer, columns)
        found = self._all.get(key)
        if found is None:
            window = self._window.get(key)
            prior = self._prior.get(key, [])
            found = sorted({*prior, *window}) if window else prior
            self._all[key] = found
        return found

    def write(self) -> None:
        """Store the run times of every producer that ran in the window."""
        rows = []
        for producer in sorted({p for p, _ in self._window}):
            row = {"urn": producer, "run_times": None, "column_run_times": None}
            for columns, name in ((False, "run_times"), (True, "column_run_times")):
                if (producer, columns) in self._window:
                    row[name] = self.all(producer, columns)
                else:
                    row[name] = self._prior.get((producer, columns)) or None
            rows.append(row)
        if rows:
            self._store.write_batches("history_set_runs", rows, ("urn",))


def _resegment(
    held: list[Interval], prior: set[int], runs: list[int], sighted: set[int], since: int
) -> list[Interval]:
    """A producer's intervals after a window whose runs and sightings of the edge start at
    `since`: those that ended before stay; from there, each stretch of its runs that produced
    the edge (sighted in the window, or known before and within an interval held then) runs
    to its next run that did not (OPEN when none did)."""
    keep = [iv for iv in held if iv[1] < since]  # an open one ends at _NEVER
    rest = [iv for iv in held if iv[1] >= since]
    starts = [iv[0] for iv in rest]

    def vouched(r: int) -> bool:
        if r not in prior:
            return False
        i = bisect_right(starts, r) - 1
        return i >= 0 and r < rest[i][1]

    out = list(keep)
    current = rest[0][0] if rest and rest[0][0] < since else None
    for r in runs[bisect_left(runs, since) :]:
        if r in sighted or vouched(r):
            if current is None:
                current = r
        elif current is not None:
            out.append((current, r))
            current = None
    if current is not None:
        out.append((current, _NEVER))
    return out


def _starts(held: list[Interval], sighted: set[int]) -> list[Interval]:
    """An edge without a transformation: open from each kept sighting (the first and last of
    each window: where it comes back after a drop)."""
    if not sighted:
        return held
    known = {start for start, _ in held}
    return sorted({*held, *((t, _NEVER) for t in (min(sighted), max(sighted)) if t not in known)})


def _cut(intervals: list[Interval], drops: list[int], runs: list[int]) -> list[Interval]:
    """When a producer held the edge given its endpoints' drops: a drop stops it (a sighting
    in the same millisecond is before the drop), and its next run within the interval (it
    produced the edge) brings it back."""
    if not drops:
        return list(intervals)
    out: list[Interval] = []
    for start, until in intervals:
        current: int | None = start
        for d in drops[bisect_left(drops, start) :]:
            if d >= until:
                break
            if current is None or current > d:
                continue
            if current < d:
                out.append((current, d))
            i = bisect_right(runs, d)
            current = runs[i] if i < len(runs) and runs[i] < until else None
            if current is None:
                break
        if current is not None:
            out.append((current, until))
    return out


def _history(first: int, pieces: list[Interval]) -> tuple[list[int], list[int], int | None]:
    """`stopped`, `resumed` and `retired_at` of an edge first seen at `first` that held in
    `pieces` (joined where they touch)."""
    joined: list[list[int]] = []
    for start, until in sorted(pieces):
        if joined and start <= joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], until)
        else:
            joined.append([start, until])
    if not joined:
        return [first], [], first
    stopped: list[int] = [] if joined[0][0] <= first else [first]
    resumed: list[int] = [] if joined[0][0] <= first else [joined[0][0]]
    for i, (start, until) in enumerate(joined):
        if i:
            resumed.append(start)
        if until != _NEVER:
            stopped.append(until)
    retired_at = None if joined[-1][1] == _NEVER else joined[-1][1]
    return stopped, resumed, retired_at


def _presence(
    asset: _Asset, seen: list[tuple[list[int], list[int], list[int]]]
) -> tuple[list[int], list[int], int | None]:
    """An asset's `deleted`, `restored` and `deleted_at` from its drops: a drop deletes it
    while it is there (a sighting in the same millisecond is before the drop); its next
    sighting after (a run reading or writing it, its first or last sighting, or a return
    stored before: an S3 listing that found it again) brings it back.
    """
    first = asset.first_seen
    sightings = [asset.first_seen, asset.last_seen, *((asset.derived or ((), ()))[1] or ())]

    def next_sighting(d: int) -> int | None:
        found = [t for t in sightings if t is not None and t > d]
        for starts, untils, runs in seen:
            for start, until in zip(starts, untils, strict=False):
                if start > d:
                    found.append(start)
                elif until == OPEN or until > d:
                    i = bisect_right(runs, d)
                    if i < len(runs) and (until == OPEN or runs[i] < until):
                        found.append(runs[i])
        return min(found, default=None)

    deleted: list[int] = []
    restored: list[int] = []
    back: int | None = first  # when it is there again (None: not since the last drop)
    for d in asset.drops:
        if first is None or d < first or back is None or d < back:
            continue
        deleted.append(d)
        back = next_sighting(d)
        if back is not None:
            restored.append(back)
    deleted_at = deleted[-1] if deleted and back is None else None
    return deleted, restored, deleted_at


def delete_assets(store: GraphStore, rows: list[dict[str, Any]]) -> None:
    """Drop assets (`rows`: {urn, at}, a DROP's, or a complete S3 scan's): their lineage
    stops at the drop, as exactly as a window of runs (an asset not known yet keeps the drop
    for when it is)."""
    if rows:
        history = History()
        for row in rows:
            history.drop(row["urn"], row["at"])
        history.write(store)
