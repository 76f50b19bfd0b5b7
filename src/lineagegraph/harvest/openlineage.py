"""OpenLineage RunEvents (files written by openlineage-python's file transport, the Spark agent,
or lineagegraph's own listener) into the graph, on the same urns as every other harvester.

A file holds JSON lines (one event per line, the file transport's append mode) or one event,
possibly pretty-printed (its one-file-per-event mode). Only COMPLETE events carry lineage: a
run's START repeats its datasets and would count the run twice; FAIL and ABORT are counted on
the :HarvestRun, never drawn as lineage; the dataQualityAssertions of every event become checks,
and every run event's state its run's (:Run), for the run alerts.
A malformed event is skipped and reported by file and line; a facet of an unknown kind is
ignored; a known facet with a broken shape is skipped and reported, and the rest of its event is
kept. One event costs at most what the [openlineage] caps allow (max_event_datasets,
max_event_flows), and one the store refuses is skipped without keeping any other out.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from lineagegraph import identity, jsonlines
from lineagegraph.column_links import ColumnLink, column_items
from lineagegraph.errors import WRITE_REFUSED, HarvestError, QueryError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.text import too_long
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.base import HarvestReport, Progress, Tick
from lineagegraph.harvest.openlineage_settings import OpenLineageSettings
from lineagegraph.harvest.reducer import ColumnSet, ColumnShape, RunReducer
from lineagegraph.identity import FoldRules
from lineagegraph.jsonlines import BadText, numbered_lines, parse_json
from lineagegraph.masking import DEFAULT_NAMES
from lineagegraph.model import (
    RUN_STATES,
    Asset,
    AssetKind,
    CheckResult,
    CheckStatus,
    Column,
    Flow,
    Item,
    RunState,
    Scalar,
    TagFact,
    Transformation,
)
from lineagegraph.pipeline import HarvestRun, harvest_run, last_watermark
from lineagegraph.schemas import SchemaSeen
from lineagegraph.settings import Settings

log = logging.getLogger(__name__)
SYSTEM = "openlineage"
FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", "")  # "": the file transport's log_file_path
# Namespaces of storage: their datasets are :Dataset nodes; everything else is a :Table.
STORAGE_SYSTEMS = frozenset(
    {"s3", "file", "gs", "gcs", "hdfs", "abfs", "abfss", "wasb", "wasbs", "dbfs", "spark"}
)
EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})
KNOWN_FACETS = frozenset({"columnLineage", "symlinks", "schema", "dataQualityAssertions", "tags"})
# Events reduced together before writing: more means fewer rows (a job's runs in one window
# cost one row) and more memory (the distinct nodes and edges of a window).
WINDOW_EVENTS = 20_000
CACHE_ENTRIES = 100_000  # distinct dataset names or facets remembered while mapping
_LINEAGE = object()
_FUNCTION = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)")  # a transformation's leading name


class EventError(ValueError):
    """An event (or a facet of it) that does not follow the OpenLineage spec."""


class EventTooLarge(EventError):
    """An event listing more datasets than [openlineage] max_event_datasets."""


@dataclass
class OpenLineageReport:
    files: int = 0
    events: int = 0
    complete: int = 0
    failed_runs: int = 0
    skipped_not_complete: int = 0
    skipped_bad: int = 0  # lines, documents and events not read: each is also a problem
    problems: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # events the store refused: problems too

    def skip(self, problem: str) -> None:
        """A line, document or event left out, and why."""
        self.skipped_bad += 1
        self.problems.append(problem)

    def refuse(self, problem: str) -> None:
        """An event the store would not take: left out, the rest of its window written."""
        self.refused.append(problem)
        self.problems.append(problem)


@dataclass
class Located:
    """An event and where it was read, for messages; `text` is its JSON line as read (None for
    an event of a one-document file), so a caller that keeps events need not encode them again."""

    where: str
    event: dict[str, Any]
    text: str | None = None


# --- reading files ------------------------------------------------------------------------


def event_files(
    path: Path,
    since_ms: int | None = None,
    *,
    follow_links: bool = False,
    skipped: list[str] | None = None,
) -> list[Path]:
    """The files to read: `path` itself, or the event files under a directory (sorted),
    skipping files not modified since `since_ms`. A link under the directory to a file outside
    it is read only when `follow_links` (else it is named in `skipped`): whoever may write into
    the directory should not be able to have the harvest read anything the harvester can."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise HarvestError(f"no OpenLineage file or directory at {str(path)!r}")
    root = path.resolve()
    files = []
    for p in sorted(path.rglob("*")):
        if not p.is_file() or p.suffix not in FILE_SUFFIXES or p.name.startswith("."):
            continue
        if not follow_links and not p.resolve().is_relative_to(root):
            if skipped is not None:
                skipped.append(
                    f"{p}: a link to {str(p.resolve())!r}, outside {str(path)!r}: "
                    "skipped ([openlineage] follow_links reads it)"
                )
            continue
        files.append(p)
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
                    report.skip(
                        f"{path}:{number}: line longer than {jsonlines.MAX_TEXT_CHARS:,} "
                        "characters: skipped unread"
                    )
                    continue
                if not line.strip():
                    continue
                try:
                    yield Located(f"{path}:{number}", parse_json(line), line)
                except BadText as exc:
                    report.skip(f"{path}:{number}: {exc}")
    except OSError as exc:
        report.skip(f"{path}: unreadable: {exc}")


def _document_events(path: Path, text: str, report: OpenLineageReport) -> Iterator[Located]:
    """One (pretty-printed) event per file, or a JSON array of events."""
    if len(text) > jsonlines.MAX_TEXT_CHARS:
        report.skip(
            f"{path}: a JSON document longer than {jsonlines.MAX_TEXT_CHARS:,} characters: "
            "skipped unread (write events as JSON lines)"
        )
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

    def __init__(
        self,
        rules: FoldRules,
        problems: list[str],
        limits: OpenLineageSettings | None = None,
        masking: frozenset[str] = DEFAULT_NAMES,
    ) -> None:
        self.rules = rules
        self.problems = problems
        self.masking = masking  # names a masking transformation by its function
        limits = limits or OpenLineageSettings()
        self.max_datasets, self.max_flows = limits.max_event_datasets, limits.max_event_flows
        self.ignored_facets = 0
        # Every run of a job names the same datasets and repeats the same facets: each distinct
        # one is mapped once (most of the mapping time), then only stamped with the run's time.
        self._urns: dict[tuple[str, str], str] = _Cache()
        self._described: dict[str, tuple[AssetKind, str, str]] = _Cache()
        self._shapes: dict[tuple[Any, ...], ColumnShape] = _Cache()
        self._schemas: dict[tuple[Any, ...], SchemaSeen] = _Cache()

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
        self._urns[namespace, name] = _findable(urn, where)
        return urn

    def _asset(self, urn: str, at: int, props: dict[str, Scalar] | None = None) -> Asset:
        described = self._described.get(urn)
        if described is None:
            described = (_kind(urn), identity.system_of(urn), identity.name_of(urn))
            self._described[urn] = described
        return Asset(urn, *described, at, props if props is not None else {})

    def items(self, located: Located) -> list[Item | SchemaSeen]:
        """The graph values of one COMPLETE event."""
        out: list[Item | SchemaSeen] = []
        sighting = self.pieces(located)
        for piece in sighting.pieces:
            if isinstance(piece, ColumnSet):
                out.extend(piece.shape.items(piece.at, piece.via))
            elif isinstance(piece, SchemaSeen):
                out.append(replace(piece, at=sighting.at))
            else:
                out.append(piece)
        return out

    def pieces(self, located: Located) -> Sighting:
        """`items`, with each facet's columns and FEEDS (most of an event's values) left as
        one ColumnSet, which the RunReducer takes without a value per column. An EventError
        says where in the event; a broken facet is reported here, with where it was read."""
        event, where = located.event, located.where
        self._check_size(event)
        at = event_time_ms(_require(event, "eventTime", str, "the event"))
        run_id = _require(_require(event, "run", dict, "the event"), "runId", str, "run")
        job = _require(event, "job", dict, "the event")
        try:
            job_urn = identity.openlineage_job_urn(
                _require(job, "namespace", str, "job"), _require(job, "name", str, "job")
            )
        except identity.IdentityError as exc:
            raise EventError(f"job: {exc}") from None
        _findable(job_urn, "job")
        out: list[Piece] = []
        inputs = self._datasets(event.get("inputs"), "inputs", where, (at, run_id), out)
        outputs = self._datasets(event.get("outputs"), "outputs", where, (at, run_id), out)
        reads, writes = tuple(dict.fromkeys(inputs)), tuple(dict.fromkeys(outputs))
        out.append(Transformation(job_urn, SYSTEM, job["name"], run_id, at, None, reads, writes))
        out.extend(self._flows(reads, writes, at, job_urn, where))
        known = dict.fromkeys(reads + writes)
        for dataset, urn in zip(event.get("outputs") or [], outputs, strict=True):
            out.extend(self._columns(dataset, urn, at, job_urn, where, known))
        return Sighting(at, run_id, out)

    def checks(self, located: Located) -> Sighting | None:
        """The dataQualityAssertions of an event that draws no lineage (START, RUNNING, FAIL,
        ABORT, OTHER), with the datasets and columns they test; None when it has none.
        dbt-ol sends a test's results on its START and FAIL events only, so a failing test
        would otherwise never be seen. An EventError says what is wrong."""
        event, where = located.event, located.where
        tested = [
            (key, index, dataset)
            for key in ("inputs", "outputs")
            if type(event.get(key)) is list
            for index, dataset in enumerate(event[key])
            if isinstance(dataset, dict)
            and (_facet(dataset, "inputFacets") or _facet(dataset, "facets")) is not None
        ]
        if not tested:
            return None
        self._check_size(event)
        at = event_time_ms(_require(event, "eventTime", str, "the event"))
        run_id = _require(_require(event, "run", dict, "the event"), "runId", str, "run")
        out: list[Piece] = []
        for key, index, dataset in tested:
            urn = self.dataset_urn(dataset, f"{key}[{index}]")
            results = self._assertions(dataset, urn, (at, run_id), f"{where} {key}[{index}]")
            if results:
                out.append(self._asset(urn, at))
                out.extend(results)
        return Sighting(at, run_id, out) if out else None

    def sighting(self, event: Any, where: str = "event") -> Sighting | None:
        """What `serve` asks before spooling an event: its values (None when it draws nothing:
        a JobEvent, a DatasetEvent, a run event with no checks), or an EventError (an
        EventTooLarge over the caps) with the reason. Stricter than a harvest on events that
        draw no lineage (each needs its eventTime, runId and job), so that whatever is accepted
        is ingested without a problem; a broken facet is dropped, reported at ingestion."""
        if not isinstance(event, dict):
            raise EventError("is not a JSON object")
        kind = event.get("eventType")
        mark = len(self.problems)
        try:
            if kind is None and ("job" in event or "dataset" in event):
                named = "job" if "job" in event else "dataset"
                _require(event.get(named), "namespace", str, named)
                _require(event.get(named), "name", str, named)
                event_time_ms(_require(event, "eventTime", str, "the event"))
                return None  # a JobEvent or DatasetEvent: accepted, no lineage (nothing ran)
            if not isinstance(kind, str) or kind not in EVENT_TYPES:
                raise EventError(
                    f"eventType {kind!r:.60} is not one of {', '.join(sorted(EVENT_TYPES))}"
                )
            if kind == "COMPLETE":
                return self.pieces(Located(where, event))
            event_time_ms(_require(event, "eventTime", str, "the event"))
            _require(event.get("run"), "runId", str, "run")
            _require(event.get("job"), "namespace", str, "job")
            _require(event.get("job"), "name", str, "job")
            return self.checks(Located(where, event))  # its assertions become checks
        except identity.IdentityError as exc:
            raise EventError(str(exc)) from None
        finally:
            del self.problems[mark:]

    def _check_size(self, event: dict[str, Any]) -> None:
        """Refuse an event listing more than `max_datasets` datasets before mapping any."""
        inputs, outputs = event.get("inputs"), event.get("outputs")
        listed = (len(inputs) if type(inputs) is list else 0) + (
            len(outputs) if type(outputs) is list else 0
        )
        if listed > self.max_datasets:
            raise EventTooLarge(
                f"lists {listed:,} datasets, over [openlineage] max_event_datasets "
                f"({self.max_datasets:,}): refused"
            )

    def _flows(
        self, reads: tuple[str, ...], writes: tuple[str, ...], at: int, via: str, where: str
    ) -> list[Flow]:
        """A FLOWS_TO from every input to every output, unless there are more than
        `max_flows` of them: a few hostile kilobytes would otherwise cost gigabytes. Over the
        cap the event is kept at dataset level (its datasets, the job's reads and writes)."""
        if len(reads) * len(writes) <= self.max_flows:
            return [Flow(src, dst, at, via) for dst in writes for src in reads]
        self.problems.append(
            f"{where}: {len(reads):,} inputs x {len(writes):,} outputs would be "
            f"{len(reads) * len(writes):,} FLOWS_TO edges, over [openlineage] max_event_flows "
            f"({self.max_flows:,}): kept its datasets and the job's reads and writes only"
        )
        return []

    def _datasets(
        self, value: Any, key: str, where: str, run: tuple[int, str], out: list[Piece]
    ) -> list[str]:
        """The urns of a list of datasets; their assets, columns and checks go to `out`."""
        at = run[0]
        if value is None:
            return []
        if not isinstance(value, list):
            raise EventError(f"{key} is not a list")
        urns: list[str] = []  # one per dataset, in order (the caller removes repeats)
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
            if "tags" in facets:
                out.extend(self._tags(facets["tags"], urn, run, spot))
            out.extend(self._assertions(dataset, urn, run, spot))
            urns.append(urn)
        return urns

    def _tags(self, facet: Any, urn: str, run: tuple[int, str], spot: str) -> list[Piece]:
        """The tags facet (TagsDatasetFacet 1-0-0): each tag a classification of the dataset,
        or of its column `field` (the spec's schema facet has no tags of its own), stated at
        the event's time by its run. An empty value states the key alone."""
        tags = facet.get("tags") if isinstance(facet, dict) else None
        if not isinstance(tags, list) or not all(map(_is_tag, tags)):
            self._facet_problem(spot, "tags", "tags must be [{key, value, source?, field?}]")
            return []
        at, run_id = run
        pieces: list[Piece] = []
        for tag in tags:
            target, field = urn, tag.get("field")
            if field:
                try:
                    target = _findable(identity.column_urn(urn, field), spot)
                except (identity.IdentityError, EventError) as exc:
                    self._facet_problem(spot, "tags", str(exc))
                    continue
                pieces.append(Column(target, urn, field, at))
            origin = f" ({tag['source']})" if tag.get("source") else ""
            reason = f"OpenLineage tags facet{origin}"
            value = tag.get("value") or None
            pieces.append(TagFact(target, tag["key"], value, SYSTEM, run_id, at, reason))
        return pieces

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
            for column in names:
                _findable(f"{urn}#{column}", spot)
            shape = ColumnShape.of(column_items(urn, names, [], 0, None))
            self._shapes["schema", urn, names] = shape
        pairs = tuple((f["name"], t if type(t := f.get("type")) is str else None) for f in fields)
        seen = self._schemas.get((urn, pairs))
        if seen is None:  # at 0, as the shape's columns: the reducer and `items` stamp times
            seen = self._schemas[urn, pairs] = SchemaSeen(urn, SYSTEM, 0, pairs)
        return [ColumnSet(shape, at, None), seen]

    def _assertions(
        self, dataset: dict[str, Any], urn: str, run: tuple[int, str], spot: str
    ) -> list[Piece]:
        """dataQualityAssertions, an input dataset facet (under `inputFacets`; some producers
        put it among `facets`): each assertion becomes the latest result of a check on the
        dataset, or on its column (written too, so the check has its target)."""
        facet = _facet(dataset, "inputFacets") or _facet(dataset, "facets")
        if facet is None:
            return []
        assertions = facet.get("assertions") if isinstance(facet, dict) else None
        if not isinstance(assertions, list) or not all(map(_is_assertion, assertions)):
            reason = "assertions must be [{assertion, success, column?, severity?, name?}]"
            self._facet_problem(spot, "dataQualityAssertions", reason)
            return []
        at, run_id = run
        pieces: list[Piece] = []
        for assertion in assertions:
            column, name = assertion.get("column"), assertion.get("name") or assertion["assertion"]
            try:
                target = identity.column_urn(urn, column) if column else urn
            except identity.IdentityError as exc:
                self._facet_problem(spot, "dataQualityAssertions", str(exc))
                continue
            if column:
                pieces.append(Column(target, urn, column, at))
            status: CheckStatus = "pass" if assertion["success"] else "fail"
            if status == "fail" and assertion.get("severity") == "warn":
                status = "warn"
            check = identity.openlineage_check_urn(target, name)
            pieces.append(CheckResult(check, SYSTEM, name, target, status, at, run_id))
        return pieces

    def _columns(
        self,
        dataset: dict[str, Any],
        urn: str,
        at: int,
        via: str,
        where: str,
        known: dict[str, None],
    ) -> list[Piece]:
        """An output's columnLineage; `known`: the datasets whose assets the event has."""
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
        pieces: list[Piece] = []
        for source in shape.sources:  # a column's source dataset must exist before its columns
            if source not in known:
                known[source] = None
                pieces.append(self._asset(source, at))
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
                    key += (self.dataset_urn(entry, ""), entry["field"], self._masked_by(entry))
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
                field = _require(entry, "field", str, column)
                links.append(ColumnLink(source, field, column, self._masked_by(entry)))
        return links

    def _masked_by(self, entry: dict[str, Any]) -> tuple[str, ...]:
        """An input field's masking, from the facet's `transformations` (spec 1-2-0): masked
        when it has DIRECT transformations and every one says `masking: true`. Each is named
        by the function its description starts with when that is a masking function, else
        by its subtype; INDIRECT ones (a filter, a join key) carry no value and are ignored."""
        steps = entry.get("transformations")
        if not isinstance(steps, list):
            return ()
        direct = [t for t in steps if isinstance(t, dict) and t.get("type") == "DIRECT"]
        if not direct or not all(t.get("masking") is True for t in direct):
            return ()
        names: dict[str, None] = {}
        for step in direct:
            word = _FUNCTION.match(str(step.get("description") or ""))
            name = word.group(1).upper() if word else ""
            if name not in self.masking:
                name = str(step.get("subtype") or "MASKING").upper()
            names[name] = None
        return tuple(names)


def _findable(key: str, where: str) -> str:
    """`key`, or an EventError when the store could never find it again: the event is refused
    before it is acknowledged (such a key was stored, but its edges were dropped)."""
    reason = too_long((key,))
    if reason is not None:
        raise EventError(f"{where}: {reason}")
    return key


def _facet(dataset: dict[str, Any], group: str) -> Any:
    facets = dataset.get(group)
    return facets.get("dataQualityAssertions") if isinstance(facets, dict) else None


def _is_tag(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("key"), str)
        and bool(value["key"])
        and all(isinstance(value.get(k), str | None) for k in ("value", "source", "field"))
    )


def _is_assertion(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("assertion"), str)
        and bool(value["assertion"])
        and isinstance(value.get("success"), bool)
        and isinstance(value.get("column"), str | None)
        and isinstance(value.get("name"), str | None)
    )


class _Cache(dict[Any, Any]):
    """A memo that starts over when full, so a harvest of endlessly new names stays small."""

    def __setitem__(self, key: Any, value: Any) -> None:
        if len(self) >= CACHE_ENTRIES:
            self.clear()
        super().__setitem__(key, value)


Piece = Item | ColumnSet | SchemaSeen


class Sighting(NamedTuple):
    """An event's values, at its time, by its run: a COMPLETE event's lineage, any event's
    checks, and the run's state."""

    at: int
    run_id: str
    pieces: list[Piece]


# --- the harvest --------------------------------------------------------------------------


def harvest_openlineage(
    store: GraphStore,
    path: Path,
    rules: FoldRules = identity.NO_FOLD_RULES,
    *,
    full: bool = False,
    on_file: Callable[[OpenLineageReport], None] | None = None,
    exclusive: bool = True,
    limits: OpenLineageSettings | None = None,
    masking: frozenset[str] = DEFAULT_NAMES,
    on_event: Callable[[Located, int | None], None] | None = None,
) -> tuple[HarvestRun, OpenLineageReport]:
    """Ingest every event under `path`. Files older than the last successful harvest of the
    same path are skipped unless `full`; the watermark is the newest file's mtime. `exclusive`
    as in `harvest_run`: `lineagegraph serve` ingests beside the CLI's harvests, not between.
    `limits`: the [openlineage] caps on one event, and whether links are followed; `masking`
    names the functions of masking transformations in column lineage; `on_event` is handed
    each event read and its time in epoch ms when the mapper read one (serve's event log)."""
    limits = limits or OpenLineageSettings()
    scope = str(path.resolve())
    since = None if full else last_watermark(store, SYSTEM, scope)
    report = OpenLineageReport()
    files = event_files(path, since, follow_links=limits.follow_links, skipped=report.problems)
    report.skipped_bad += len(report.problems)
    mapper = EventMapper(rules, report.problems, limits, masking)
    with harvest_run(store, SYSTEM, scope, exclusive=exclusive) as (run, writer):
        window: list[tuple[str, Sighting]] = []  # written every WINDOW_EVENTS: bounded memory
        newest = since or 0
        for file in files:
            newest = max(newest, _mtime_ms(file))
            for located in read_events(file, report):
                report.events += 1
                sighting = _event_pieces(located, mapper, report)
                if sighting is not None:
                    window.append((located.where, sighting))
                if on_event is not None:
                    on_event(located, sighting.at if sighting is not None else None)
                if report.events % WINDOW_EVENTS == 0:
                    _write_window(window, writer, report)
                    window = []
            report.files += 1
            if on_file:
                on_file(report)
        _write_window(window, writer, report)
        run.counts.update({
            "files": report.files, "events": report.events, "events_complete": report.complete,
            "runs_failed": report.failed_runs, "events_not_complete": report.skipped_not_complete,
            "problems": len(report.problems), "events_skipped": report.skipped_bad,
            "events_not_written": len(report.refused), "facets_ignored": mapper.ignored_facets,
        })  # fmt: skip
        run.watermark = newest or None
        if report.problems:
            run.error = f"{len(report.problems)} problems; first: {report.problems[0]}"
    return run, report


def _write_window(
    window: list[tuple[str, Sighting]], writer: GraphWriter, report: OpenLineageReport
) -> None:
    """Reduce and write a window's events. When the store refuses a statement, the window is
    written again in halves, down to the events it refuses, which are skipped and reported:
    one bad event never keeps the events around it out of the graph. (Writes are idempotent
    MERGEs, so what a refused batch wrote before failing is simply written again.)"""
    reducer = RunReducer()
    for _, sighting in window:
        reducer.add(sighting.pieces, sighting.at, sighting.run_id)
    try:
        reducer.write_run(writer)
    except QueryError as exc:
        if str(exc) == WRITE_REFUSED:  # the store takes no writes at all: no event is at fault
            raise
        writer.discard()
        if len(window) == 1:
            report.refuse(f"{window[0][0]}: not written, the store refused it: {exc}")
            return
        half = len(window) // 2
        _write_window(window[:half], writer, report)
        _write_window(window[half:], writer, report)


def _event_pieces(
    located: Located, mapper: EventMapper, report: OpenLineageReport
) -> Sighting | None:
    event = located.event
    if not isinstance(event, dict):
        report.skip(f"{located.where}: not a JSON object")
        return None
    kind = event.get("eventType")
    if kind is None and ("job" in event or "dataset" in event):
        report.skipped_not_complete += 1  # a JobEvent or DatasetEvent: nothing ran
        return None
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        report.skip(f"{located.where}: not an OpenLineage event (eventType {kind!r:.60})")
        return None
    if kind in ("FAIL", "ABORT"):
        report.failed_runs += 1
    elif kind != "COMPLETE":
        report.skipped_not_complete += 1
    try:
        if kind != "COMPLETE":  # no lineage; its checks, newest result first (reducer, store)
            return _with_state(mapper.checks(located), run_state(event))
        sighting = mapper.pieces(located)
    except EventError as exc:
        report.skip(f"{located.where}: {exc}")
        return None
    report.complete += 1
    return _with_state(sighting, run_state(event))


def run_state(event: dict[str, Any]) -> RunState | None:
    """The run state a run event tells (START, RUNNING, COMPLETE, FAIL, ABORT), or None: an
    OTHER event, or one without a readable time, run id or job (its lineage, if any, is
    judged by `EventMapper.pieces`, which names what is wrong)."""
    kind, run, job = event.get("eventType"), event.get("run"), event.get("job")
    if kind not in RUN_STATES or not isinstance(run, dict) or not isinstance(job, dict):
        return None
    run_id, namespace, name = run.get("runId"), job.get("namespace"), job.get("name")
    time = event.get("eventTime")
    if not (
        isinstance(run_id, str)
        and isinstance(namespace, str)
        and isinstance(name, str)
        and isinstance(time, str)
    ):
        return None
    try:
        at = event_time_ms(time)
        urn = identity.openlineage_job_urn(namespace, name)
    except (EventError, identity.IdentityError):
        return None
    return RunState(urn, SYSTEM, name, run_id, kind, at)


def _with_state(sighting: Sighting | None, state: RunState | None) -> Sighting | None:
    if state is None:
        return sighting
    if sighting is None:
        return Sighting(state.at, state.run_id, [state])
    return sighting._replace(pieces=[*sighting.pieces, state])


def summary(path: Path, run: HarvestRun, report: OpenLineageReport) -> str:
    """The line a person reads about a harvest of `path`."""
    return (
        f"{path}: {report.files} files, {report.events} events ({report.complete} complete, "
        f"{report.failed_runs} failed runs, {report.skipped_not_complete} other), "
        f"{len(report.problems)} problems; run {run.id}: {run.status}"
    )


@dataclass
class OpenLineageHarvester:
    """`harvest openlineage`: the event files and directories of [openlineage] paths (or
    `paths`), each only for what changed since its last harvest unless `full`."""

    paths: tuple[Path, ...] = ()
    full: bool = False
    name = "openlineage"
    section = "openlineage"
    needs = "[openlineage] paths (files or directories of OpenLineage events)"

    def not_configured(self, settings: Settings) -> str | None:
        return None if self.paths or settings.openlineage.paths else "no [openlineage] paths"

    def run(
        self, store: GraphStore, settings: Settings, *, progress: Progress
    ) -> list[HarvestReport]:
        rules = settings.identity.rules()
        reports = []
        for path in self.paths or settings.openlineage.paths:
            if not path.exists():
                raise HarvestError(f"OpenLineage path {str(path)!r} does not exist")

            def on_file(report: OpenLineageReport, path: Path = path) -> None:
                progress(Tick(str(path), report.files, "files", detail=f"{report.events:,} events"))

            run, report = harvest_openlineage(
                store,
                path,
                rules,
                full=self.full,
                on_file=on_file,
                limits=settings.openlineage,
                masking=settings.masking.names,
            )
            errors = (
                [
                    f"{len(report.refused)} events not written (the store refused them); "
                    f"first: {report.refused[0]}"
                ]
                if report.refused
                else []
            )
            reports.append(
                HarvestReport.of_run(run, report.problems, errors, summary(path, run, report))
            )
        return reports
