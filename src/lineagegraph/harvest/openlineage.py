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

import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from lineagegraph import identity
from lineagegraph.errors import HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.identity import FoldRules
from lineagegraph.model import Asset, AssetKind, Column, Flow, Item, Scalar, Transformation
from lineagegraph.pipeline import HarvestRun, harvest_run, last_watermark
from lineagegraph.spark.lineage import ColumnLink, column_items

log = logging.getLogger(__name__)
SYSTEM = "openlineage"
FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", "")  # "": the file transport's log_file_path
# Namespaces of storage: their datasets are :Dataset nodes; everything else is a :Table.
STORAGE_SYSTEMS = frozenset(
    {"s3", "file", "gs", "gcs", "hdfs", "abfs", "abfss", "wasb", "wasbs", "dbfs", "spark"}
)
KNOWN_FACETS = frozenset({"columnLineage", "symlinks", "schema"})
BATCH_EVENTS = 2000  # events per write batch; assets repeated within one are written twice


class EventError(ValueError):
    """An event (or a facet of it) that does not follow the OpenLineage spec."""


@dataclass
class OpenLineageReport:
    files: int = 0
    events: int = 0
    complete: int = 0
    failed_runs: int = 0
    skipped_not_complete: int = 0
    problems: list[str] = field(default_factory=list)


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


def read_events(path: Path, problems: list[str]) -> Iterator[Located]:
    """The events of one file; unparseable lines are reported in `problems` and skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: unreadable: {exc}")
        return
    if text.lstrip().startswith("{\n") or text.lstrip().startswith("[") or (
        text.count("\n") <= 1 and text.strip()
    ):  # fmt: skip
        # one (pretty-printed) event per file, or a JSON array of events
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}")
            return
        events = document if isinstance(document, list) else [document]
        for index, event in enumerate(events):
            yield Located(f"{path}" + (f"[{index}]" if isinstance(document, list) else ""), event)
        return
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield Located(f"{path}:{number}", json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: malformed JSON: {exc.msg}")


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

    def dataset_urn(self, dataset: Any, where: str) -> str:
        namespace = _require(dataset, "namespace", str, where)
        name = _require(dataset, "name", str, where)
        try:
            return identity.openlineage_urn(namespace, name, self.rules)
        except identity.IdentityError as exc:
            raise EventError(f"{where}: {exc}") from None

    def items(self, located: Located) -> list[Item]:
        """The graph values of one COMPLETE event."""
        event, where = located.event, located.where
        at = event_time_ms(_require(event, "eventTime", str, where))
        run_id = _require(_require(event, "run", dict, where), "runId", str, f"{where} run")
        job = _require(event, "job", dict, where)
        try:
            job_urn = identity.openlineage_job_urn(
                _require(job, "namespace", str, f"{where} job"),
                _require(job, "name", str, f"{where} job"),
            )
        except identity.IdentityError as exc:
            raise EventError(f"{where}: {exc}") from None
        out: list[Item] = []
        reads = self._datasets(event.get("inputs"), "inputs", where, at, out)
        writes = self._datasets(event.get("outputs"), "outputs", where, at, out)
        out.append(Transformation(job_urn, SYSTEM, job["name"], run_id, at, None,
                                  tuple(reads), tuple(writes)))  # fmt: skip
        out.extend(Flow(src, dst, at, job_urn) for dst in writes for src in reads)
        for dataset, urn in zip(event.get("outputs") or [], writes, strict=False):
            out.extend(self._columns(dataset, urn, at, job_urn, where, out))
        return out

    def _datasets(self, value: Any, key: str, where: str, at: int, out: list[Item]) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise EventError(f"{where}: {key} is not a list")
        urns: list[str] = []
        for index, dataset in enumerate(value):
            spot = f"{where} {key}[{index}]"
            urn = self.dataset_urn(dataset, spot)
            facets = dataset.get("facets") or {}
            if not isinstance(facets, dict):
                raise EventError(f"{spot}: facets is not an object")
            self.ignored_facets += sum(1 for name in facets if name not in KNOWN_FACETS)
            alias = self._symlinks(facets, spot)
            props: dict[str, Scalar] = {"ol_symlinks": alias} if alias else {}
            out.append(Asset(urn, _kind(urn), identity.system_of(urn), identity.name_of(urn),
                             at, props))  # fmt: skip
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

    def _schema(self, facets: dict[str, Any], urn: str, at: int, spot: str) -> list[Item]:
        facet = facets.get("schema")
        if facet is None:
            return []
        fields = facet.get("fields") if isinstance(facet, dict) else None
        if not isinstance(fields, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in fields
        ):
            self._facet_problem(spot, "schema", "fields must be [{name, type}]")
            return []
        return list(column_items(urn, [f["name"] for f in fields], [], at, None))

    def _columns(
        self, dataset: dict[str, Any], urn: str, at: int, via: str, where: str, out: list[Item]
    ) -> list[Item]:
        facet = (dataset.get("facets") or {}).get("columnLineage")
        if facet is None:
            return []
        spot = f"{where} output {dataset.get('name')!r}"
        fields = facet.get("fields") if isinstance(facet, dict) else None
        if not isinstance(fields, dict):
            self._facet_problem(spot, "columnLineage", "fields must be an object")
            return []
        links: list[ColumnLink] = []
        try:
            for column, spec in fields.items():
                inputs = spec.get("inputFields") if isinstance(spec, dict) else None
                if not isinstance(inputs, list):
                    raise EventError(f"fields.{column}.inputFields is not a list")
                for entry in inputs:
                    source = self.dataset_urn(entry, f"fields.{column}")
                    links.append(ColumnLink(source, _require(entry, "field", str, column), column))
        except EventError as exc:
            self._facet_problem(spot, "columnLineage", str(exc))
            return []
        known = {item.urn for item in out if isinstance(item, Asset)}
        assets: list[Item] = [
            Asset(s, _kind(s), identity.system_of(s), identity.name_of(s), at)
            for s in sorted({link.source for link in links} - known)
        ]  # a column's source dataset must exist before its columns
        return assets + list(column_items(urn, [], links, at, via))


# --- the harvest --------------------------------------------------------------------------


def compact(items: Iterable[Item]) -> list[Item]:
    """Fewer rows for the same graph: an asset or column seen many times in one batch is
    written at its earliest and its latest sighting only, earliest first (so first_seen and
    last_seen hold), with the properties of every sighting. This keeps FalkorDB's
    one-key-per-statement rounds few. Edges and runs are kept: their counters need each one."""
    items = list(items)
    low: dict[str, int] = {}
    high: dict[str, int] = {}
    props: dict[str, dict[str, Any]] = {}
    rest: list[Item] = []
    for index, item in enumerate(items):
        if not isinstance(item, Asset | Column):
            rest.append(item)
            continue
        key = f"{type(item).__name__}:{item.urn}"
        if key not in low or item.seen < items[low[key]].seen:  # type: ignore[union-attr]
            low[key] = index
        if key not in high or item.seen >= items[high[key]].seen:  # type: ignore[union-attr]
            high[key] = index
        if isinstance(item, Asset) and item.props:
            props.setdefault(key, {}).update(item.props)
    kept = [low[k] for k in low] + [high[k] for k in low if high[k] != low[k]]
    nodes = []
    for index in kept:
        item = items[index]
        key = f"{type(item).__name__}:{item.urn}"  # type: ignore[union-attr]
        if isinstance(item, Asset) and key in props:
            item = replace(item, props=props[key])
        nodes.append(item)
    return nodes + rest


def harvest_openlineage(
    store: GraphStore,
    path: Path,
    rules: FoldRules = identity.NO_FOLD_RULES,
    *,
    full: bool = False,
    on_file: Callable[[OpenLineageReport], None] | None = None,
) -> tuple[HarvestRun, OpenLineageReport]:
    """Ingest every event under `path`. Files older than the last successful harvest of the
    same path are skipped unless `full`; the watermark is the newest file's mtime."""
    scope = str(path.resolve())
    since = None if full else last_watermark(store, SYSTEM, scope)
    files = event_files(path, since)
    report = OpenLineageReport()
    mapper = EventMapper(rules, report.problems)
    with harvest_run(store, SYSTEM, scope) as (run, writer):
        batch: list[Item] = []
        newest = since or 0
        for file in files:
            newest = max(newest, _mtime_ms(file))
            for located in read_events(file, report.problems):
                report.events += 1
                batch.extend(_event_items(located, mapper, report))
                if report.events % BATCH_EVENTS == 0:
                    writer.add_all(compact(batch))
                    batch.clear()
            report.files += 1
            if on_file:
                on_file(report)
        writer.add_all(compact(batch))
        writer.flush()
        run.counts.update({
            "files": report.files, "events": report.events, "events_complete": report.complete,
            "runs_failed": report.failed_runs, "events_not_complete": report.skipped_not_complete,
            "problems": len(report.problems), "facets_ignored": mapper.ignored_facets,
        })  # fmt: skip
        run.watermark = newest or None
        if report.problems:
            run.error = f"{len(report.problems)} problems; first: {report.problems[0]}"
    return run, report


def _event_items(located: Located, mapper: EventMapper, report: OpenLineageReport) -> list[Item]:
    event = located.event
    if not isinstance(event, dict):
        report.problems.append(f"{located.where}: not a JSON object")
        return []
    kind = event.get("eventType")
    if kind is None:  # a DatasetEvent or JobEvent: no run, nothing ran
        report.skipped_not_complete += 1
        return []
    if kind in ("FAIL", "ABORT"):
        report.failed_runs += 1
        return []
    if kind != "COMPLETE":
        report.skipped_not_complete += 1
        return []
    try:
        items = mapper.items(located)
    except EventError as exc:
        report.problems.append(f"{located.where}: {exc}")
        return []
    report.complete += 1
    return items
