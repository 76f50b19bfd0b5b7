"""OpenLineage RunEvents (files written by openlineage-python's file transport, the Spark agent,
or lineagegraph's own listener) into the graph, on the same urns as every other harvester.

A file holds JSON lines (one event per line, the file transport's append mode) or one event,
possibly pretty-printed (its one-file-per-event mode). Only COMPLETE events carry lineage: a
run's START repeats its datasets and would count the run twice; FAIL and ABORT are counted on
the :HarvestRun, never drawn as lineage. A malformed event is skipped and reported by file and
line; a facet of an unknown kind is ignored; a known facet with a broken shape is skipped and
reported, and the rest of its event is kept.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from lineagegraph import identity, jsonlines
from lineagegraph.errors import HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import FoldRules
from lineagegraph.jsonlines import BadText, numbered_lines, parse_json
from lineagegraph.model import (
    Asset,
    AssetKind,
    Column,
    ColumnFeed,
    Flow,
    Item,
    Scalar,
    Transformation,
)
from lineagegraph.pipeline import HarvestRun, harvest_run, last_watermark
from lineagegraph.spark.lineage import ColumnLink, column_items

log = logging.getLogger(__name__)
SYSTEM = "openlineage"
FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", "")  # "": the file transport's log_file_path
# Namespaces of storage: their datasets are :Dataset nodes; everything else is a :Table.
STORAGE_SYSTEMS = frozenset(
    {"s3", "file", "gs", "gcs", "hdfs", "abfs", "abfss", "wasb", "wasbs", "dbfs", "spark"}
)
EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})
KNOWN_FACETS = frozenset({"columnLineage", "symlinks", "schema"})
# Events reduced together before writing: more means fewer rows (a job's runs in one window
# cost one row) and more memory (the distinct nodes and edges of a window).
WINDOW_EVENTS = 20_000
CACHE_ENTRIES = 100_000  # distinct dataset names or facets remembered while mapping
_LINEAGE = object()


class EventError(ValueError):
    """An event (or a facet of it) that does not follow the OpenLineage spec."""


@dataclass
class OpenLineageReport:
    files: int = 0
    events: int = 0
    complete: int = 0
    failed_runs: int = 0
    skipped_not_complete: int = 0
    skipped_bad: int = 0  # lines, documents and events not read: each is also a problem
    problems: list[str] = field(default_factory=list)

    def skip(self, problem: str) -> None:
        """A line, document or event left out, and why."""
        self.skipped_bad += 1
        self.problems.append(problem)


@dataclass
class Located:
    """An event and where it was read, for messages."""

    where: str
    event: dict[str, Any]


# --- reading files ------------------------------------------------------------------------


def event_files(path: Path, since_ms: int | None = None) -> list[Path]:
    """The files to read: `path` itself, or the event files under a directory (sorted),
    skipping files not modified since `since_ms`."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise HarvestError(f"no OpenLineage file or directory at {str(path)!r}")
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and p.suffix in FILE_SUFFIXES and not p.name.startswith(".")
    )
    if since_ms is not None:
        files = [p for p in files if _mtime_ms(p) >= since_ms]
    return files


def _mtime_ms(path: Path) -> int:
    return int(os.stat(path).st_mtime * 1000)


def read_events(path: Path, report: OpenLineageReport) -> Iterator[Located]:
    """The events of one file; unreadable lines are skipped and reported (`report.skip`).

    JSON lines are read one line at a time, so memory stays flat however big the file, and
    only "\n", "\r" and "\r\n" end a line: U+2028/U+2029, which JSON allows unescaped inside
    strings, do not. Bytes are decoded per line, so an undecodable byte costs its line only.
    A file that starts with `[` or a pretty-printed `{` is one document.
    """
    try:
        with path.open(encoding="utf-8", errors="surrogateescape", newline="") as fh:
            head = fh.read(4096).lstrip()
            fh.seek(0)
            if head.startswith("[") or re.match(r"\{[ \t]*\r?\n", head):
                yield from _document_events(path, fh.read(jsonlines.MAX_TEXT_CHARS + 1), report)
                return
            for number, line in numbered_lines(fh):
                if line is None:
                    report.skip(f"{path}:{number}: line longer than {jsonlines.MAX_TEXT_CHARS:,} "
                                    "characters: skipped unread")  # fmt: skip
                    continue
                if not line.strip():
                    continue
                try:
                    yield Located(f"{path}:{number}", parse_json(line))
                except BadText as exc:
                    report.skip(f"{path}:{number}: {exc}")
    except OSError as exc:
        report.skip(f"{path}: unreadable: {exc}")


def _document_events(path: Path, text: str, report: OpenLineageReport) -> Iterator[Located]:
    """One (pretty-printed) event per file, or a JSON array of events."""
    if len(text) > jsonlines.MAX_TEXT_CHARS:
        report.skip(f"{path}: a JSON document longer than {jsonlines.MAX_TEXT_CHARS:,} characters: "
                        "skipped unread (write events as JSON lines)")  # fmt: skip
        return
    try:
        document = parse_json(text)
    except BadText as exc:
        report.skip(f"{path}:{text.count(chr(10), 0, exc.offset) + 1}: {exc}")
        return
    events = document if isinstance(document, list) else [document]
    for index, event in enumerate(events):
        yield Located(f"{path}" + (f"[{index}]" if isinstance(document, list) else ""), event)


# --- one event into graph values ----------------------------------------------------------


def _require(mapping: Any, key: str, kind: type, where: str) -> Any:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    if not isinstance(value, kind) or (kind is str and not value):
        raise EventError(f"{where} has no {key!r} ({kind.__name__})")
    return value


def event_time_ms(text: str) -> int:
    """ISO 8601 with an offset (`Z` too) to epoch milliseconds."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise EventError(f"eventTime {text!r} is not ISO 8601") from None
    if moment.tzinfo is None:
        raise EventError(f"eventTime {text!r} has no time zone")
    return int(moment.timestamp() * 1000)


def _kind(urn: str) -> AssetKind:
    return "Dataset" if identity.system_of(urn) in STORAGE_SYSTEMS else "Table"


class EventMapper:
    """Maps events to graph values; counts facets it ignores and collects facet problems."""

    def __init__(self, rules: FoldRules, problems: list[str]) -> None:
        self.rules = rules
        self.problems = problems
        self.ignored_facets = 0
        # Every run of a job names the same datasets and repeats the same facets: each distinct
        # one is mapped once (most of the mapping time), then only stamped with the run's time.
        self._urns: dict[tuple[str, str], str] = _Cache()
        self._described: dict[str, tuple[AssetKind, str, str]] = _Cache()
        self._shapes: dict[tuple[Any, ...], ColumnShape] = _Cache()

    def dataset_urn(self, dataset: Any, where: str) -> str:
        if isinstance(dataset, dict):
            namespace, name = dataset.get("namespace"), dataset.get("name")
            if type(namespace) is str and type(name) is str:
                known = self._urns.get((namespace, name))
                if known is not None:
                    return known
        namespace = _require(dataset, "namespace", str, where)
        name = _require(dataset, "name", str, where)
        try:
            urn = identity.openlineage_urn(namespace, name, self.rules)
        except identity.IdentityError as exc:
            raise EventError(f"{where}: {exc}") from None
        self._urns[namespace, name] = urn
        return urn

    def _asset(self, urn: str, at: int, props: dict[str, Scalar] | None = None) -> Asset:
        described = self._described.get(urn)
        if described is None:
            described = (_kind(urn), identity.system_of(urn), identity.name_of(urn))
            self._described[urn] = described
        return Asset(urn, *described, at, props if props is not None else {})

    def items(self, located: Located) -> list[Item]:
        """The graph values of one COMPLETE event."""
        out: list[Item] = []
        for piece in self.pieces(located):
            if isinstance(piece, ColumnSet):
                out.extend(piece.shape.items(piece.at, piece.via))
            else:
                out.append(piece)
        return out

    def pieces(self, located: Located) -> list[Piece]:
        """`items`, with each facet's columns and FEEDS (most of an event's values) left as
        one ColumnSet, which the Reducer takes without a value per column. An EventError
        says where in the event; a broken facet is reported here, with where it was read."""
        event, where = located.event, located.where
        at = event_time_ms(_require(event, "eventTime", str, "the event"))
        run_id = _require(_require(event, "run", dict, "the event"), "runId", str, "run")
        job = _require(event, "job", dict, "the event")
        try:
            job_urn = identity.openlineage_job_urn(
                _require(job, "namespace", str, "job"), _require(job, "name", str, "job")
            )
        except identity.IdentityError as exc:
            raise EventError(f"job: {exc}") from None
        out: list[Piece] = []
        reads = self._datasets(event.get("inputs"), "inputs", where, at, out)
        writes = self._datasets(event.get("outputs"), "outputs", where, at, out)
        out.append(Transformation(job_urn, SYSTEM, job["name"], run_id, at, None,
                                  tuple(reads), tuple(writes)))  # fmt: skip
        out.extend(Flow(src, dst, at, job_urn) for dst in writes for src in reads)
        for dataset, urn in zip(event.get("outputs") or [], writes, strict=False):
            out.extend(self._columns(dataset, urn, at, job_urn, where, out))
        return out

    def _datasets(self, value: Any, key: str, where: str, at: int, out: list[Piece]) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise EventError(f"{key} is not a list")
        urns: list[str] = []
        for index, dataset in enumerate(value):
            spot = f"{where} {key}[{index}]"  # facet problems are reported, not raised
            urn = self.dataset_urn(dataset, f"{key}[{index}]")
            facets = dataset.get("facets") or {}
            if not isinstance(facets, dict):
                raise EventError(f"{key}[{index}]: facets is not an object")
            props: dict[str, Scalar] = {}
            if facets:
                self.ignored_facets += len(facets.keys() - KNOWN_FACETS)
                alias = self._symlinks(facets, spot)
                if alias:
                    props["ol_symlinks"] = alias
            out.append(self._asset(urn, at, props))
            if "schema" in facets:
                out.extend(self._schema(facets, urn, at, spot))
            if urn not in urns:
                urns.append(urn)
        return urns

    def _facet_problem(self, spot: str, name: str, reason: str) -> None:
        self.problems.append(f"{spot}: facet {name} skipped: {reason}")

    def _symlinks(self, facets: dict[str, Any], spot: str) -> str | None:
        """Other names of the dataset (a catalog table's db.table), kept as an alias."""
        facet = facets.get("symlinks")
        if facet is None:
            return None
        identifiers = facet.get("identifiers") if isinstance(facet, dict) else None
        if not isinstance(identifiers, list) or not all(
            isinstance(i, dict) and isinstance(i.get("name"), str) for i in identifiers
        ):
            self._facet_problem(spot, "symlinks", "identifiers must be [{namespace, name, type}]")
            return None
        return ", ".join(sorted(str(i["name"]) for i in identifiers)) or None

    def _schema(self, facets: dict[str, Any], urn: str, at: int, spot: str) -> list[Piece]:
        facet = facets.get("schema")
        if facet is None:
            return []
        fields = facet.get("fields") if isinstance(facet, dict) else None
        if not isinstance(fields, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in fields
        ):
            self._facet_problem(spot, "schema", "fields must be [{name, type}]")
            return []
        names = tuple(f["name"] for f in fields)
        shape = self._shapes.get(("schema", urn, names))
        if shape is None:
            shape = ColumnShape.of(column_items(urn, names, [], 0, None))
            self._shapes["schema", urn, names] = shape
        return [ColumnSet(shape, at, None)]

    def _columns(
        self, dataset: dict[str, Any], urn: str, at: int, via: str, where: str, out: list[Piece]
    ) -> list[Piece]:
        facet = (dataset.get("facets") or {}).get("columnLineage")
        if facet is None:
            return []
        fields = facet.get("fields") if isinstance(facet, dict) else None
        key = self._lineage_key(urn, fields)
        shape = self._shapes.get(key) if key else None
        if shape is None:
            spot = f"{where} output {dataset.get('name')!r}"
            if not isinstance(fields, dict):
                self._facet_problem(spot, "columnLineage", "fields must be an object")
                return []
            try:
                links = self._links(fields)
            except EventError as exc:
                self._facet_problem(spot, "columnLineage", str(exc))
                return []
            shape = ColumnShape.of(
                column_items(urn, [], links, 0, None), {link.source for link in links}
            )
            if key:
                self._shapes[key] = shape
        known = {item.urn for item in out if isinstance(item, Asset)}
        pieces: list[Piece] = [
            self._asset(s, at) for s in shape.sources if s not in known
        ]  # a column's source dataset must exist before its columns
        pieces.append(ColumnSet(shape, at, via))
        return pieces

    def _lineage_key(self, urn: str, fields: Any) -> tuple[Any, ...] | None:
        """A columnLineage facet's fields with their datasets named (so every partition a job
        reads shares one key) as a hashable value; None when they are not well formed: those
        are mapped, and reported, every time."""
        if not isinstance(fields, dict):
            return None
        key: list[Any] = [_LINEAGE, urn]
        try:
            for column, spec in fields.items():
                key.append(column)
                for entry in spec["inputFields"]:
                    key += (self.dataset_urn(entry, ""), entry["field"])
                key.append(_LINEAGE)  # JSON has no such value: the end of a column's fields
            frozen = tuple(key)
            hash(frozen)
        except (TypeError, KeyError, EventError):
            return None
        return frozen

    def _links(self, fields: dict[str, Any]) -> list[ColumnLink]:
        links: list[ColumnLink] = []
        for column, spec in fields.items():
            inputs = spec.get("inputFields") if isinstance(spec, dict) else None
            if not isinstance(inputs, list):
                raise EventError(f"fields.{column}.inputFields is not a list")
            for entry in inputs:
                source = self.dataset_urn(entry, f"fields.{column}")
                links.append(ColumnLink(source, _require(entry, "field", str, column), column))
        return links


class _Cache(dict[Any, Any]):
    """A memo that starts over when full, so a harvest of endlessly new names stays small."""

    def __setitem__(self, key: Any, value: Any) -> None:
        if len(self) >= CACHE_ENTRIES:
            self.clear()
        super().__setitem__(key, value)


@dataclass(frozen=True)
class ColumnShape:
    """A facet's columns and FEEDS, mapped once for all the runs that repeat it."""

    columns: tuple[Column, ...]  # seen: 0, each run has its own time
    feeds: tuple[tuple[str, str], ...]  # (source column, column)
    sources: tuple[str, ...] = ()  # the source datasets, sorted

    @classmethod
    def of(cls, items: Iterable[Item], sources: Iterable[str] = ()) -> ColumnShape:
        items = list(items)
        return cls(
            tuple(i for i in items if isinstance(i, Column)),
            tuple((i.src, i.dst) for i in items if isinstance(i, ColumnFeed)),
            tuple(sorted(sources)),
        )

    def items(self, at: int, via: str | None) -> list[Item]:
        out: list[Item] = [Column(c.urn, c.asset, c.name, at) for c in self.columns]
        out.extend(ColumnFeed(src, dst, at, via) for src, dst in self.feeds)
        return out


class ColumnSet(NamedTuple):
    """A facet's columns and FEEDS in one run."""

    shape: ColumnShape
    at: int
    via: str | None


Piece = Item | ColumnSet


# --- the harvest --------------------------------------------------------------------------


class Reducer:
    """The values of a window of events, reduced to the rows that give the same graph as
    writing each event's values in order, so a run of a job costs about one row, not ~27:

    * an asset or column: its earliest sighting (which creates it) and its latest, with the
      properties of every sighting;
    * a FEEDS edge and a job's READS_FROM / WRITES_TO: their statements keep only the earliest
      and latest time and (FEEDS) the union of `via` in order, so a row per `via` at the earliest
      time and one at the latest;
    * a transformation and a FLOWS_TO count runs: `runs` grows for each sighting newer than the
      last seen, so in event order only the sightings newer than every earlier one in the window
      can count; their times go in one row per job and per edge, and the statements
      merge_job_runs and merge_flow_runs (shared with the Snowflake
      harvester, which reduces its windows the same way) count those newer than the graph's.

    Memory is bounded by the distinct nodes and edges of a window, not by its events.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        # urn -> [earliest time, latest time, the first sighting, every sighting's props]
        self._assets: dict[str, list[Any]] = {}
        self._columns: dict[str, list[Any]] = {}
        # job urn -> [first sighting, newer-run times, earliest, newest sighting]
        self._jobs: dict[str, list[Any]] = {}
        self._reads: dict[tuple[str, str], list[int]] = {}  # (job, asset) -> [earliest, latest]
        self._writes: dict[tuple[str, str], list[int]] = {}
        self._flows: dict[tuple[str, str], list[Any]] = {}  # -> [newer times, earliest, vias]
        self._feeds: dict[tuple[str, str], list[Any]] = {}  # -> [earliest, latest, vias]
        self.self_edges = 0

    def add(self, items: Iterable[Piece]) -> None:
        for item in items:  # exact types, the fastest test: this runs ~27 times per event
            if type(item) is ColumnSet:
                self._column_set(item)
            elif type(item) is Asset:
                _span(self._assets, item.urn, item.seen, item, item.props)
            elif type(item) is Flow:
                self._flow(item)
            elif type(item) is Transformation:
                self._job(item)
            else:  # the mapper yields no other values
                raise TypeError(f"unexpected {item!r}")

    def _job(self, job: Transformation) -> None:
        at = job.run_at
        entry = self._jobs.get(job.urn)
        if entry is None:
            self._jobs[job.urn] = [job, [at], at, job]
        else:
            if at > entry[1][-1]:
                entry[1].append(at)
                entry[3] = job
            entry[2] = min(entry[2], at)
        for edges, assets in ((self._reads, job.reads), (self._writes, job.writes)):
            for asset in assets:
                span = edges.get((job.urn, asset))
                if span is None:
                    edges[job.urn, asset] = [at, at]
                else:
                    span[0], span[1] = min(span[0], at), max(span[1], at)

    def _flow(self, flow: Flow) -> None:
        if flow.src == flow.dst:
            self.self_edges += 1
            return
        entry = self._flows.get((flow.src, flow.dst))
        if entry is None:
            entry = self._flows[flow.src, flow.dst] = [[flow.at], flow.at, {}]
        else:
            if flow.at > entry[0][-1]:
                entry[0].append(flow.at)
            entry[1] = min(entry[1], flow.at)
        if flow.via is not None:
            entry[2][flow.via] = None

    def _column_set(self, columns: ColumnSet) -> None:
        at, via = columns.at, columns.via
        for column in columns.shape.columns:
            _span(self._columns, column.urn, at, column, None)
        for key in columns.shape.feeds:
            if key[0] == key[1]:
                self.self_edges += 1
                continue
            entry = self._feeds.get(key)
            if entry is None:
                entry = self._feeds[key] = [at, at, {}]
            elif at < entry[0]:
                entry[0] = at
            elif at > entry[1]:
                entry[1] = at
            if via is not None:
                entry[2][via] = None

    def write(self, writer: GraphWriter) -> None:
        """Write the window, every statement after the ones whose nodes it MATCHes, and start
        a new window."""
        store, counts = writer.store, writer.counts
        for spans in (self._assets, self._columns):  # assets before the columns of them
            writer.add_all(_earliest(span) for span in spans.values())
        for spans in (self._assets, self._columns):
            writer.add_all(_latest(span) for span in spans.values() if span[1] > span[0])
        writer.flush()
        jobs = [
            {"urn": urn, "system": job.system, "name": job.name, "times": times,
             "first": first, "last": times[-1], "last_run_id": newest.run_id,
             "last_user": newest.user}
            for urn, (job, times, first, newest) in self._jobs.items()
        ]  # fmt: skip
        counts["merge_transformations"] += store.write_batches("merge_job_runs", jobs, ("urn",))
        for name, edges in (("merge_reads_from", self._reads), ("merge_writes_to", self._writes)):
            rows = [
                {"t": job, "asset": asset, "at": at}
                for (job, asset), span in edges.items()
                for at in dict.fromkeys(span)
            ]
            counts[name] += store.write_batches(name, rows, ("t", "asset"))
        flows = [
            {"src": src, "dst": dst, "times": times, "first": first, "last": times[-1],
             "via": list(vias)}
            for (src, dst), (times, first, vias) in self._flows.items()
        ]  # fmt: skip
        counts["merge_flows"] += store.write_batches("merge_flow_runs", flows, ("src", "dst"))
        for (src, dst), (first, last, vias) in self._feeds.items():
            order: list[str | None] = [*vias] or [None]
            writer.add_all(ColumnFeed(src, dst, first, via) for via in order)
            if last > first:
                writer.add(ColumnFeed(src, dst, last, order[-1]))
        writer.flush()
        counts["self_edges_skipped"] += self.self_edges
        self._reset()


def _span(
    spans: dict[str, list[Any]], urn: str, at: int, item: Item, props: dict[str, Scalar] | None
) -> None:
    """Record a node's sighting: the earliest and latest time, and every sighting's props."""
    span = spans.get(urn)
    if span is None:
        spans[urn] = [at, at, item, dict(props or {})]
        return
    span[0], span[1] = min(span[0], at), max(span[1], at)
    if props:
        span[3].update(props)


def _earliest(span: list[Any]) -> Item:
    return _sighting(span, span[0])


def _latest(span: list[Any]) -> Item:
    return _sighting(span, span[1])


def _sighting(span: list[Any], at: int) -> Item:
    item = span[2]
    return (
        replace(item, seen=at, props=span[3]) if isinstance(item, Asset) else replace(item, seen=at)
    )


def harvest_openlineage(
    store: GraphStore,
    path: Path,
    rules: FoldRules = identity.NO_FOLD_RULES,
    *,
    full: bool = False,
    on_file: Callable[[OpenLineageReport], None] | None = None,
    exclusive: bool = True,
) -> tuple[HarvestRun, OpenLineageReport]:
    """Ingest every event under `path`. Files older than the last successful harvest of the
    same path are skipped unless `full`; the watermark is the newest file's mtime. `exclusive`
    as in `harvest_run`: `lineagegraph serve` ingests beside the CLI's harvests, not between."""
    scope = str(path.resolve())
    since = None if full else last_watermark(store, SYSTEM, scope)
    files = event_files(path, since)
    report = OpenLineageReport()
    mapper = EventMapper(rules, report.problems)
    with harvest_run(store, SYSTEM, scope, exclusive=exclusive) as (run, writer):
        window = Reducer()
        newest = since or 0
        for file in files:
            newest = max(newest, _mtime_ms(file))
            for located in read_events(file, report):
                report.events += 1
                window.add(_event_pieces(located, mapper, report))
                if report.events % WINDOW_EVENTS == 0:
                    window.write(writer)
            report.files += 1
            if on_file:
                on_file(report)
        window.write(writer)
        run.counts.update({
            "files": report.files, "events": report.events, "events_complete": report.complete,
            "runs_failed": report.failed_runs, "events_not_complete": report.skipped_not_complete,
            "problems": len(report.problems), "events_skipped": report.skipped_bad,
            "facets_ignored": mapper.ignored_facets,
        })  # fmt: skip
        run.watermark = newest or None
        if report.problems:
            run.error = f"{len(report.problems)} problems; first: {report.problems[0]}"
    return run, report


def _event_pieces(located: Located, mapper: EventMapper, report: OpenLineageReport) -> list[Piece]:
    event = located.event
    if not isinstance(event, dict):
        report.skip(f"{located.where}: not a JSON object")
        return []
    kind = event.get("eventType")
    if kind is None and ("job" in event or "dataset" in event):
        report.skipped_not_complete += 1  # a JobEvent or DatasetEvent: nothing ran
        return []
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        report.skip(f"{located.where}: not an OpenLineage event (eventType {kind!r:.60})")
        return []
    if kind in ("FAIL", "ABORT"):
        report.failed_runs += 1
        return []
    if kind != "COMPLETE":
        report.skipped_not_complete += 1
        return []
    try:
        pieces = mapper.pieces(located)
    except EventError as exc:
        report.skip(f"{located.where}: {exc}")
        return []
    report.complete += 1
    return pieces
