"""S3 Inventory through Spark, for lakes too big for one node per object.

Spark tasks read the data files (each with its own boto3 client, so no Hadoop S3 connector is
needed) and tally them per dataset, storage class, access tier and exclusion with `Tally.add`,
the arithmetic the graph's own tallies use; the harvester writes those tallies as :Rollup
nodes, which the orphan and cost reports price exactly. The rows that are no current object
(noncurrent versions, delete markers) are tallied per dataset as the hidden cost that the
single-machine harvest stores (`HiddenTallies`: sums only, so Spark adds them up).
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from lineagegraph.errors import HarvestError
from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.harvest.s3.client import make_client
from lineagegraph.harvest.s3.inventory import DataFile, Manifest, data_file_pages
from lineagegraph.harvest.s3.scan import COUNTED_AS, HiddenTallies, S3Object, Scope
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.harvest.s3.settle import live_objects
from lineagegraph.identity import FoldRules, is_folder_marker, s3_dataset_urn_for_key, s3_file_urn
from lineagegraph.values.globs import Glob
from lineagegraph.values.pricing import Tally

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RollupKey = tuple[str, str, str | None, bool]
"""A roll-up's dataset urn, storage class, access tier (or None) and whether it is excluded."""
Rollups = dict[str, dict[str, tuple[int, int]]]
"""Objects and bytes per dataset and storage class (the :Dataset counters)."""


@dataclass
class InventoryTallies:
    """What Spark makes of an inventory: tallies per roll-up key, the objects kept one by one,
    the hidden cost per dataset, and the run's counters (objects, bytes, folder markers,
    skipped rows, noncurrent versions and delete markers)."""

    rollups: dict[RollupKey, Tally] = field(default_factory=dict)
    objects: list[tuple[str, S3Object]] = field(default_factory=list)  # (dataset, object)
    hidden: HiddenTallies = field(default_factory=HiddenTallies)
    counters: Counter[str] = field(default_factory=Counter)

    def by_class(self) -> Rollups:
        """Objects and bytes per dataset and storage class, roll-ups and objects kept one by
        one together: the :Dataset counters."""
        per: Rollups = {}
        counted = [
            (dataset, storage_class, t.objects, t.bytes)
            for (dataset, storage_class, _, _), t in self.rollups.items()
        ]
        counted += [(dataset, obj.storage_class, 1, obj.size) for dataset, obj in self.objects]
        for dataset, storage_class, objects, size in counted:
            o, b = per.setdefault(dataset, {}).get(storage_class, (0, 0))
            per[dataset][storage_class] = (o + objects, b + size)
        return per


def inventory_rollups_with_spark(
    spark: SparkSession,
    settings: S3Settings,
    manifest: Manifest,
    prefix: str,
    rules: FoldRules,
    excludes: Sequence[Glob] = (),
    singles: frozenset[str] = frozenset(),
) -> InventoryTallies:
    """Tally a verified manifest in Spark tasks: one task per data file downloads, verifies and
    tallies it (`Tally.add`, the arithmetic the graph's tallies feed too); Spark merges the
    tallies across files. Objects whose urn is in `singles` come back one by one instead.
    """
    found = InventoryTallies()
    if not manifest.files:
        return found
    job = partial(_tally_data_file, settings, manifest, prefix, rules, tuple(excludes), singles)
    rdd = spark.sparkContext.parallelize(list(manifest.files), len(manifest.files))
    try:
        pairs = rdd.flatMap(job).reduceByKey(_combine).collect()
    except Exception as exc:  # Py4J/PythonException: the task's own message is in the text
        raise HarvestError(f"Spark could not aggregate {manifest.url}: {task_error(exc)}") from None
    for (kind, *key), value in pairs:
        if kind == "rollup":
            found.rollups[tuple(key)] = value  # type: ignore[index]
            found.counters["objects"] += value.objects
            found.counters["bytes"] += value.bytes
        elif kind == "object":
            found.objects.append(value)
            found.counters["objects"] += 1
            found.counters["bytes"] += value[1].size
        elif kind == "hidden":
            dataset, prop = key
            found.hidden.props.setdefault(dataset, Counter())[prop] = value
            found.hidden.touched.add(dataset)
        else:
            found.counters[key[0]] += value
    return found


def _tally_data_file(
    settings: S3Settings,
    manifest: Manifest,
    prefix: str,
    rules: FoldRules,
    excludes: tuple[Glob, ...],
    singles: frozenset[str],
    data_file: DataFile,
) -> list[tuple[tuple[Any, ...], Any]]:
    """Runs in a Spark task: one data file as (("rollup", *RollupKey), Tally),
    (("object", urn), S3Object), (("hidden", dataset, property), n) and (("count", counter),
    n) pairs."""
    client = make_client(settings)
    counts: Counter[str] = Counter()
    tallies: dict[tuple[Any, ...], Tally] = {}
    objects: list[tuple[tuple[Any, ...], Any]] = []
    hidden = HiddenTallies()
    for page in data_file_pages(client, manifest, data_file, prefix, settings.page_size):
        counts.update(page.skipped)
        for item in filter(hidden.billed, page.hidden):
            hidden.add(s3_dataset_urn_for_key(manifest.source_bucket, item.key, rules), item)
            counts[COUNTED_AS[item.kind]] += 1
        for obj in page.objects:
            if is_folder_marker(obj.key, obj.size):
                counts["folder_markers"] += 1
                continue
            urn = s3_file_urn(manifest.source_bucket, obj.key)
            dataset = s3_dataset_urn_for_key(manifest.source_bucket, obj.key, rules)
            if urn in singles:
                objects.append((("object", urn), (dataset, obj)))
                continue
            excluded = any(glob.matches(obj.key) for glob in excludes)
            key = ("rollup", dataset, obj.storage_class, obj.access_tier, excluded)
            tallies.setdefault(key, Tally()).add(obj.size, obj.last_modified)
    sums = [
        (("hidden", d, prop), n) for d, props in hidden.props.items() for prop, n in props.items()
    ]
    return [*tallies.items(), *objects, *sums, *((("count", c), n) for c, n in counts.items())]


def _combine(a: Any, b: Any) -> Any:
    """Merge two values of one key: tallies and counts add up; an object is kept once."""
    if isinstance(a, Tally):
        return a.merge(b)
    if isinstance(a, int):
        return a + b
    return a


def task_error(exc: Exception) -> str:
    """Our own message out of a Spark task failure's long Java/Python text."""
    text = str(exc)
    found = re.findall(r"(?:HarvestError|IdentityError): ([^\n]+)", text)
    if found:
        return found[-1]
    return text.strip().splitlines()[0][:500] if text.strip() else type(exc).__name__


def objects_read_one_by_one(store: GraphStore, scope: Scope, created: int) -> frozenset[str]:
    """The urns under the scope that lineage reads on their own. Refuses a report older than
    the scope's roll-ups, and a scope already harvested object by object (its roll-ups would
    count those objects a second time)."""
    [row] = store.read("s3_scope_rollups_newest", {"bucket": scope.bucket, "prefix": scope.prefix})
    if row["newest"] is not None and int(row["newest"]) > created:
        raise HarvestError(
            f"{scope.url} already has roll-ups of a newer inventory (created "
            f"{_iso(int(row['newest']))}) than this one ({_iso(created)}): harvest the newest "
            "report"
        )
    root = s3_file_urn(scope.bucket, scope.prefix) if scope.prefix else f"s3://{scope.bucket}/"
    found = store.read("s3_scope_read_objects", {"root": root})
    present = live_objects(store, scope)
    if present > sum(1 for row in found if row["object"]):
        raise HarvestError(
            f"{scope.url} holds {present:,} objects harvested one by one (harvest s3, or "
            "s3-inventory without --spark); roll-ups of it would count them twice. Keep "
            "harvesting this scope without --spark, or harvest it with --spark into another "
            "graph (--graph)"
        )
    return frozenset(row["urn"] for row in found)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_inventory_rollups(
    store: GraphStore,
    scope: Scope,
    seen: int,
    excludes: Sequence[Glob],
    rollups: dict[RollupKey, Tally],
) -> None:
    """Replace the scope's roll-ups with these (reports --as-of an earlier time still read the
    ones they replace)."""
    params = {"bucket": scope.bucket, "prefix": scope.prefix, "seen": seen}
    store.run("s3_supersede_rollups", params)
    rows = [
        {"dataset": dataset, "storage_class": storage_class, "access_tier": tier,
         "excluded": excluded, "objects": t.objects, "bytes": t.bytes,
         "small_objects": t.small_objects, "small_bytes": t.small_bytes,
         "oldest_modified": t.oldest, "newest_modified": t.newest}
        for (dataset, storage_class, tier, excluded), t in rollups.items()
    ]  # fmt: skip
    texts = "\n".join(glob.text for glob in excludes)
    for chunk in chunks(rows, store.batch_size):
        store.run("s3_write_rollups", {**params, "rows": chunk, "excludes": texts})


def spark_session(master: str, app: str = "lineagegraph-s3-inventory") -> SparkSession:
    """A Spark session for `--spark MASTER`. Local masters run their Python tasks with this
    interpreter (PySpark reads only PYSPARK_PYTHON for that, else `python3`, which may lack
    lineagegraph)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise HarvestError("--spark needs pyspark: pip install 'lineagegraph[spark]'") from None
    builder = SparkSession.builder.master(master).appName(app)
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.ui.enabled", "false")
    return builder.getOrCreate()
