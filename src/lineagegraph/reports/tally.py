"""The tally of a report: the usage rows the graph's statements return (cypher/orphans_*.cypher),
whether the graph holds the objects one by one (:File) or as an inventory's roll-ups (:Rollup),
and their sums per report row."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.reports.options import ReportOptions
from lineagegraph.values.pricing import SMALL_OBJECT_BYTES, Tally, Usage

ORPHANED = "orphaned"
CONSUMED = "consumed"
HIDDEN = "hidden"  # status of a hidden cost's row: neither orphaned nor consumed
ROLLUP = "rollup"  # harvested_as of a roll-up's row
HIDDEN_LABELS = {
    "noncurrent": "noncurrent versions",
    "upload": "incomplete uploads",
    "delete_marker": "delete markers",
}
"""How a hidden cost's row names itself after its class: `STANDARD (noncurrent versions)`."""
_HIDDEN_KEY = re.compile(
    r"hidden_(noncurrent|upload)_(small_objects|small_bytes|objects|bytes)_(.+)"
)
CHUNKS_PER_WORKER = 4
MIN_DATASETS_PER_STATEMENT = 500
MAX_DATASETS_PER_STATEMENT = 10_000
READERS_SHOWN = 3  # readers named per dataset; the rest are counted


def usage_records(
    store: GraphStore, options: ReportOptions, *, per_statement: int | None = None
) -> list[dict[str, Any]]:
    """The rows the report `options` asks for: those of cypher/orphans_usage.cypher (objects
    held one by one, one row per key, in its order), then those of orphans_rollup_usage (one
    per inventory roll-up: two may share a key, and run_report sums them). A statement runs
    only when the graph holds its shape (orphans_shapes).

    Consumption is settled per dataset here: one scan of the consuming edges
    (orphans_consumed_assets, few rows) and of the datasets (orphans_datasets), then dict
    look-ups of each dataset's ancestors, cheaper than looking them up in the graph once per
    dataset and ancestor. Only the datasets the report needs are walked (the orphan report skips
    covered ones; `recommend` gets one row of no objects for each), in chunks of whole
    datasets (`per_statement` each, else see `_chunk_size`)
    that the store reads `reads_at_once` at a time: the rows come back in the same order.
    """
    shapes = {row["shape"] for row in store.read("orphans_shapes")}
    window = {"as_of": options.as_of, "since": options.since}
    consumed = _consumed_assets(store.read("orphans_consumed_assets", window))
    own: dict[str, list[dict[str, Any]]] = {}
    for urn, asset in consumed.items():
        if asset["dataset"] is not None:
            own.setdefault(asset["dataset"], []).append(
                {"urn": urn, "live": asset["live"], "last": asset["last"]}
            )
    datasets, readers, covered_rows = [], {}, []
    for row in store.read("orphans_datasets", {"buckets": list(options.buckets)}):
        hits = [consumed[a] for a in ancestors(row["dataset"]) if a in consumed]
        covered = any(hit["live"] for hit in hits)
        if covered and options.kind == "recommend":  # all it needs to know: no rule here
            covered_rows.append({**_covered(row["dataset"]), "readers": readers_text(hits)})
            continue
        if covered and options.kind != "cost":
            continue  # nothing of it is orphaned
        reads = [hit["last"] for hit in hits if hit["last"] is not None]
        objects = own.get(row["dataset"], [])
        datasets.append(
            {
                "dataset": row["dataset"],
                "bucket": bucket_of(row["dataset"]),
                "covered": covered,
                "last": max(reads, default=None),
                "own": objects,
            }
        )
        readers[row["dataset"]] = readers_text([*hits, *(consumed[o["urn"]] for o in objects)])
    statement = {
        "as_of": options.as_of,
        "include_deleted": options.include_deleted,
        "with_consumed": options.kind != "orphans",
        "by_object": options.by == "object",
        "exclude": [glob.program for glob in options.excludes],
        "small": SMALL_OBJECT_BYTES,
    }
    size = per_statement or _chunk_size(len(datasets), store.reads_at_once)
    parts = [{**statement, "datasets": part} for part in chunks(datasets, size)]
    records = [
        row
        for shape, usage in (("objects", "orphans_usage"), ("rollups", "orphans_rollup_usage"))
        if shape in shapes
        for rows in store.read_each(usage, parts, plain=True)
        for row in rows
    ]
    if options.kind != "orphans":
        urns = [
            {"datasets": [d["dataset"] for d in part["datasets"]], "as_of": options.as_of}
            for part in parts
        ]
        for rows in store.read_each("cost_hidden_usage", urns):
            records += hidden_records(rows)
    for record in records:
        record["readers"] = readers[record["dataset"]]
    return records + covered_rows


def _covered(dataset: str) -> dict[str, Any]:
    """For `recommend`: a consumed dataset as one row of no objects, its own not walked."""
    return {
        "bucket": bucket_of(dataset), "dataset": dataset, "object": None, "storage_class": None,
        "status": CONSUMED, "harvested_as": "object", "objects": 0, "bytes": 0,
        "small_objects": 0, "small_bytes": 0, "oldest_modified": None,
        "newest_modified": None, "last_read": None,
    }  # fmt: skip


def hidden_records(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The rows of cost_hidden_usage as usage rows of their own: one per dataset, kind of
    hidden cost and storage class, with status `hidden`, named `CLASS (what)` and priced as
    CLASS (`priced_as`). Delete markers are billed as their keys' bytes at S3 Standard."""
    for row in rows:
        props, dataset = row["props"], row["dataset"]
        found: dict[tuple[str, str], dict[str, int]] = {}
        for name, value in props.items():
            match = _HIDDEN_KEY.fullmatch(name)
            if match and value:
                kind, what, storage_class = match.groups()
                found.setdefault((kind, storage_class), {})[what] = int(value)
        markers = int(props.get("hidden_delete_markers") or 0)
        if markers:
            marker_bytes = int(props.get("hidden_delete_marker_bytes") or 0)
            found["delete_marker", "STANDARD"] = {
                "objects": markers, "bytes": marker_bytes,
                "small_objects": markers, "small_bytes": marker_bytes,
            }  # fmt: skip
        for (kind, storage_class), tally in sorted(found.items()):
            if not tally.get("objects"):
                continue
            oldest = props.get("hidden_upload_oldest") if kind == "upload" else None
            yield {
                "bucket": bucket_of(dataset), "dataset": dataset, "object": None,
                "storage_class": f"{storage_class} ({HIDDEN_LABELS[kind]})",
                "priced_as": storage_class, "status": HIDDEN, "hidden_kind": kind,
                "harvested_as": "object",
                "objects": tally["objects"], "bytes": tally.get("bytes", 0),
                "small_objects": tally.get("small_objects", 0),
                "small_bytes": tally.get("small_bytes", 0),
                "oldest_modified": oldest, "newest_modified": None, "last_read": None,
            }  # fmt: skip


def _consumed_assets(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The rows of orphans_consumed_assets per asset: consumed in the window when any of its
    edges is (`live`), read last at the latest of theirs (`last`), and its readers with the
    last read of each (`readers`)."""
    assets: dict[str, dict[str, Any]] = {}
    for row in rows:
        seen = assets.get(row["urn"])
        if seen is None:
            seen = assets[row["urn"]] = {**row, "live": bool(row["live"]), "readers": {}}
        else:
            seen["live"] = seen["live"] or bool(row["live"])
            if row["last"] is not None and (seen["last"] is None or row["last"] > seen["last"]):
                seen["last"] = row["last"]
        if row["reader"] is not None:
            known = seen["readers"].get(row["reader"])
            seen["readers"][row["reader"]] = max(known or 0, row["last"] or 0)
    return assets


def readers_text(assets: Iterable[dict[str, Any]]) -> str | None:
    """Who read these assets (a dataset, those above it, its objects read on their own), last
    reader first, at most READERS_SHOWN named; None when nothing did."""
    last: dict[str, int] = {}
    for asset in assets:
        for reader, at in asset["readers"].items():
            last[reader] = max(last.get(reader, at), at)
    if not last:
        return None
    names = sorted(last, key=lambda name: (-last[name], name))
    more = len(names) - READERS_SHOWN
    return ", ".join(names[:READERS_SHOWN]) + (f" and {more} more" if more > 0 else "")


def bucket_of(urn: str) -> str:
    """The bucket an S3 urn names: `s3://bucket/...`."""
    return urn.split("/")[2]


def ancestors(urn: str) -> list[str]:
    """The urns a consuming edge of which covers this dataset: its bucket's, each one above it,
    its own (containment stops at segments), built as the graph builds S3 urns.

    >>> ancestors("s3://b/raw/orders")
    ['s3://b', 's3://b/raw', 's3://b/raw/orders']
    """
    parts = urn.split("/")
    return ["s3://" + "/".join(parts[2:n]) for n in range(3, len(parts) + 1)]


def _chunk_size(datasets: int, workers: int) -> int:
    """Datasets per statement: a few statements per worker, so one slow chunk (a dataset of
    millions of objects) leaves the others busy, but none bigger than MAX_DATASETS_PER_STATEMENT
    (its parameters) nor smaller than MIN_DATASETS_PER_STATEMENT (a statement's own cost)."""
    even = -(-datasets // (CHUNKS_PER_WORKER * max(1, workers)))
    return max(MIN_DATASETS_PER_STATEMENT, min(MAX_DATASETS_PER_STATEMENT, even))


def tally_of(record: dict[str, Any]) -> Tally:
    """The tally in a row of cypher/orphans_usage.cypher or orphans_rollup_usage.cypher."""
    return Tally(
        int(record["objects"]),
        int(record["bytes"] or 0),
        int(record["small_objects"] or 0),
        int(record["small_bytes"] or 0),
    )


@dataclass(slots=True)
class Sums:
    """One report row being rolled up from the graph's rows."""

    objects: int = 0
    bytes: int = 0
    cost: int = 0  # over the costing's denominator (see pricing.Costing)
    orphaned_objects: int = 0
    orphaned_bytes: int = 0
    orphaned_cost: int = 0
    oldest: int | None = None
    newest: int | None = None
    last_read: int | None = None
    rollup: bool = False  # under --by object: a roll-up's row (no object named)

    @classmethod
    def of(cls, record: dict[str, Any], usage: Usage, cost: int) -> Sums:
        """The sums of one row of the graph's."""
        orphaned = record["status"] == ORPHANED
        oldest, newest, last_read = (
            record["oldest_modified"],
            record["newest_modified"],
            record["last_read"],
        )
        return cls(
            usage.objects,
            usage.bytes,
            cost,
            usage.objects if orphaned else 0,
            usage.bytes if orphaned else 0,
            cost if orphaned else 0,
            None if oldest is None else int(oldest),  # times are epoch ms (inlined: hot)
            None if newest is None else int(newest),
            None if last_read is None else int(last_read),
            record["harvested_as"] == ROLLUP,
        )

    def add(self, part: Sums) -> None:
        """Count `part` in (the hot loop of a report: inlined, no helper calls)."""
        self.objects += part.objects
        self.bytes += part.bytes
        self.cost += part.cost
        self.orphaned_objects += part.orphaned_objects
        self.orphaned_bytes += part.orphaned_bytes
        self.orphaned_cost += part.orphaned_cost
        if part.oldest is not None and (self.oldest is None or part.oldest < self.oldest):
            self.oldest = part.oldest
        if part.newest is not None and (self.newest is None or part.newest > self.newest):
            self.newest = part.newest
        if part.last_read is not None and (
            self.last_read is None or part.last_read > self.last_read
        ):
            self.last_read = part.last_read
        self.rollup = self.rollup or part.rollup


def roll_up(
    records: Sequence[dict[str, Any]],
    parts: Sequence[Sums],
    key: tuple[str, ...],
    *,
    use_up: bool = False,
) -> dict[tuple[Any, ...], Sums]:
    """The parts (one per record) summed per the records' values of `key`. With `use_up`, a
    group's first part becomes its sums (most rows of a report are one record's): the parts
    are not to be read again."""
    group_of = itemgetter(*key) if len(key) > 1 else lambda record: (record[key[0]],)
    groups: dict[tuple[Any, ...], Sums] = {}
    for record, part in zip(records, parts, strict=True):
        group = group_of(record)
        sums = groups.get(group)
        if sums is not None:
            sums.add(part)
        elif use_up:
            groups[group] = part
        else:
            sums = groups[group] = Sums()
            sums.add(part)
    return groups
