"""Buffers model values and writes them in batches, nodes before the edges that need them.

A row whose endpoint is not in the graph yet (its asset comes in a later batch) waits and is
written again when the writer finishes; only what still has no endpoint then is dropped, and
that is counted and named, never lost in silence.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple

from lineagegraph.graph.store import GraphStore
from lineagegraph.model import (
    RANK,
    Asset,
    CheckResult,
    Column,
    ColumnFeed,
    Flow,
    Item,
    PartOf,
    RunState,
    TagFact,
    Transformation,
)
from lineagegraph.schemas import SchemaLog, SchemaSeen, Version, fields_json, fields_of, merged

# Each statement and the row fields it MERGEs on, in flush order: every statement's endpoints
# are written by an earlier one.
STATEMENTS: dict[str, tuple[str, ...]] = {
    "merge_tables": ("urn",),
    "merge_datasets": ("urn",),
    "merge_files": ("urn",),
    "merge_transformations": ("urn",),
    "merge_run_states": ("run_id",),
    "merge_columns": ("urn",),
    "merge_reads_from": ("t", "asset"),
    "merge_writes_to": ("t", "asset"),
    "merge_flows": ("src", "dst"),
    "merge_column_feeds": ("src", "dst"),
    "merge_part_of": ("file", "dataset"),
    "merge_checks": ("urn",),  # after the assets and columns they test
    "merge_tags": ("urn",),  # after the assets and columns they tag
}
ASSET_STATEMENT = {"Table": "merge_tables", "Dataset": "merge_datasets", "File": "merge_files"}
EXAMPLES = 3  # endpoints a warning names per kind of row
# Statements the reducer writes whole windows with, counted as the ones they stand for.
COUNTED_AS = {"merge_flow_runs": "merge_flows", "merge_job_runs": "merge_transformations"}


class Needs(NamedTuple):
    """What a statement MATCHes before it writes (it ends in `RETURN count(*) AS written`)."""

    what: str  # what a row writes: the count_dropped_{what} of the :HarvestRun, for messages
    ends: dict[str, str]  # row field -> label of the node it needs ("Target": asset or column)


# In the order waiting rows are written again: each after the statements writing its endpoints.
NEEDS: dict[str, Needs] = {
    "merge_columns": Needs("columns", {"asset": "Asset"}),
    "merge_reads_from": Needs("reads_from", {"t": "Transformation", "asset": "Asset"}),
    "merge_writes_to": Needs("writes_to", {"t": "Transformation", "asset": "Asset"}),
    "merge_flows": Needs("flows", {"src": "Asset", "dst": "Asset"}),
    "merge_flow_runs": Needs("flows", {"src": "Asset", "dst": "Asset"}),
    "merge_column_feeds": Needs("column_feeds", {"src": "Column", "dst": "Column"}),
    "merge_part_of": Needs("part_of", {"file": "Asset", "dataset": "Asset"}),
    "merge_checks": Needs("checks", {"target": "Target"}),
    "merge_tags": Needs("tags", {"target": "Target"}),
}


class GraphWriter:
    """Collects rows per statement; when any buffer is full, flushes all of them in order.

    Items may come in any order: a row flushed before what it needs (an edge's endpoints, a
    column's asset) waits and is written again by `finish`, after everything else. `counts`
    tallies rows written per statement, self edges skipped, and rows dropped because what they
    need never came (`dropped_{what}`, with a few endpoints named in `warnings()`).
    """

    def __init__(self, store: GraphStore, counts: Counter[str] | None = None) -> None:
        self.store = store
        self.counts: Counter[str] = counts if counts is not None else Counter()
        self._buffers: dict[str, list[dict[str, Any]]] = {name: [] for name in STATEMENTS}
        self._pending = 0
        self._waiting: dict[str, list[dict[str, Any]]] = {name: [] for name in NEEDS}
        self._keys: dict[str, tuple[str, ...]] = {}  # the MERGE key of each statement waiting
        self._missing: dict[str, list[str]] = {}  # what -> a few endpoints no node holds
        self._schemas = SchemaLog()  # written after the assets, folded into the graph's

    def add(self, item: Item | SchemaSeen) -> None:
        if isinstance(item, SchemaSeen):
            self._schemas.add(item)
            if len(self._schemas) >= self.store.batch_size:
                self.flush()
            return
        for name, row in _rows(item):
            if name == "self_edge":
                self.counts["self_edges_skipped"] += 1
                continue
            self._buffers[name].append(row)
            self._pending += 1
        if self._pending >= self.store.batch_size:
            self.flush()

    def add_all(self, items: Iterable[Item | SchemaSeen]) -> None:
        for item in items:
            self.add(item)

    def flush(self) -> None:
        for name, key in STATEMENTS.items():
            rows = self._buffers[name]
            if rows:
                self.write(name, rows, key)
                rows.clear()
        self._pending = 0
        if self._schemas:
            self._write_schemas()

    def _write_schemas(self) -> None:
        """Fold the schema versions held into the graph's: read those of the same assets and
        sources, merge (lineagegraph.schemas), write the ones that changed. Versions of an
        asset not in the graph are left out (a source may list tables no lineage names)."""
        held, self._schemas = self._schemas.versions, SchemaLog()
        keys = [{"asset": a, "source": s} for a, s in held]
        stored: dict[tuple[str, str], list[Version]] = {}
        for row in self.store.read("schema_versions_of", {"keys": keys}):
            version = Version(row["at"], row["last"], row["hash"], fields_of(row["fields"]))
            stored.setdefault((row["asset"], row["source"]), []).append(version)
        rows = []
        for (asset, source), versions in held.items():
            old = sorted(stored.get((asset, source), []), key=lambda v: v.at)
            new = merged(old, versions)
            if new != old:
                rows.append(_schema_row(asset, source, new))
        self.counts["merge_schema_versions"] += self.store.write_batches(
            "merge_schema_versions", rows, ("asset", "source")
        )

    def discard(self) -> None:
        """Drop the rows added but not written: after the store refused a batch, a caller that
        writes its values again in parts (to find the one at fault) starts from nothing."""
        for rows in self._buffers.values():
            rows.clear()
        self._pending = 0
        self._schemas.clear()

    def write(self, name: str, rows: list[dict[str, Any]], key: tuple[str, ...]) -> None:
        """Write rows of one statement now; those whose endpoints are not in the graph yet
        wait for `finish`."""
        written = self.store.write_batches(name, rows, key)
        self.counts[COUNTED_AS.get(name, name)] += written
        if written < len(rows) and name in NEEDS:
            self._waiting[name] += self._settle(name, rows, len(rows) - written, final=False)
            self._keys[name] = key

    def finish(self) -> None:
        """Flush, then write the waiting rows once more; count and name what is still missing."""
        self.flush()
        for name in NEEDS:
            rows, self._waiting[name] = self._waiting[name], []
            if rows:
                written = self.store.write_batches(name, rows, self._keys[name])
                self.counts[COUNTED_AS.get(name, name)] += written
                if written < len(rows):
                    self._settle(name, rows, len(rows) - written, final=True)

    def warnings(self) -> list[str]:
        """One line per kind of row dropped for good, naming a few endpoints not in the graph."""
        lines = []
        for what in dict.fromkeys(n.what for n in NEEDS.values()):
            if dropped := self.counts[f"dropped_{what}"]:
                examples = self._missing.get(what)
                named = f", e.g. {', '.join(examples)}" if examples else ""
                lines.append(
                    f"{what.replace('_', ' ')} not written: {dropped}, what they need "
                    f"is not in the graph{named} (count_dropped_{what})"
                )
        return lines

    def _settle(
        self, name: str, rows: list[dict[str, Any]], dropped: int, *, final: bool
    ) -> list[dict[str, Any]]:
        """The rows of `rows` with an endpoint no node holds. `dropped` rows were left out: when
        `final` they are counted as dropped and a few endpoints named; before, only those an
        endpoint written since (by another writer) no longer explains are counted."""
        needs = NEEDS[name]
        ends = [
            {"urn": u, "label": lb}
            for u, lb in {(row[f], lb) for row in rows for f, lb in needs.ends.items()}
        ]
        missing = {
            (r["urn"], r["label"]) for r in self.store.read("missing_endpoints", {"ends": ends})
        }
        lacking = [r for r in rows if any((r[f], lb) in missing for f, lb in needs.ends.items())]
        lost = dropped if final else dropped - len(lacking)
        if lost > 0:
            self.counts[f"dropped_{needs.what}"] += lost
        if final:
            examples = self._missing.setdefault(needs.what, [])
            for urn, label in sorted(missing):
                named = f"{'Asset or Column' if label == 'Target' else label} {urn!r}"
                if len(examples) < EXAMPLES and named not in examples:
                    examples.append(named)
        return lacking


def _schema_row(asset: str, source: str, versions: list[Version]) -> dict[str, Any]:
    """All the versions of one asset and source, each keyed by its asset, source and time."""
    listed = [
        {"urn": json.dumps([asset, source, v.at]), "at": v.at, "last": v.last, "hash": v.hash,
         "fields": fields_json(v.fields)}
        for v in versions
    ]  # fmt: skip
    keep = [v["urn"] for v in listed]
    return {"asset": asset, "source": source, "versions": listed, "keep": keep}


def _rows(item: Item) -> Iterable[tuple[str, dict[str, Any]]]:
    match item:
        case Asset():
            row = {"urn": item.urn, "system": item.system, "name": item.name, "seen": item.seen}
            yield ASSET_STATEMENT[item.kind], {**row, "props": item.props}
        case Flow():
            if item.src == item.dst:
                yield "self_edge", {}
                return
            via = [item.via] if item.via else []
            yield "merge_flows", {"src": item.src, "dst": item.dst, "at": item.at, "via": via}
        case Transformation():
            yield (
                "merge_transformations",
                {
                    "urn": item.urn,
                    "system": item.system,
                    "name": item.name,
                    "run_id": item.run_id,
                    "run_at": item.run_at,
                    "user": item.user,
                },
            )
            for asset in item.reads:
                yield "merge_reads_from", {"t": item.urn, "asset": asset, "at": item.run_at}
            for asset in item.writes:
                yield "merge_writes_to", {"t": item.urn, "asset": asset, "at": item.run_at}
        case Column():
            yield (
                "merge_columns",
                {
                    "urn": item.urn,
                    "asset": item.asset,
                    "name": item.name,
                    "seen": item.seen,
                },
            )
        case ColumnFeed():
            if item.src == item.dst:
                yield "self_edge", {}
                return
            via = [item.via] if item.via else []
            yield (
                "merge_column_feeds",
                {
                    "src": item.src,
                    "dst": item.dst,
                    "at": item.at,
                    "via": via,
                    "masked_by": list(item.masked_by),
                },
            )
        case PartOf():
            yield "merge_part_of", {"file": item.file, "dataset": item.dataset}
        case CheckResult():
            yield (
                "merge_checks",
                {
                    "urn": item.urn,
                    "system": item.system,
                    "name": item.name,
                    "target": item.target,
                    "status": item.status,
                    "rank": RANK[item.status],
                    "failures": item.failures,
                    "at": item.at,
                    "run_id": item.run_id,
                },
            )
        case RunState():
            yield (
                "merge_run_states",
                {
                    "job": item.job,
                    "system": item.system,
                    "name": item.name,
                    "run_id": item.run_id,
                    "state": item.state,
                    "at": item.at,
                    "terminal": item.terminal,
                },
            )
        case TagFact():
            yield (
                "merge_tags",
                {
                    "urn": json.dumps([item.source, item.key, item.target], ensure_ascii=False),
                    "target": item.target,
                    "key": item.key,
                    "value": item.value,
                    "source": item.source,
                    "by": item.by,
                    "at": item.at,
                    "reason": item.reason,
                    "removed": item.removed,
                },
            )
