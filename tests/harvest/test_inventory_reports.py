"""The orphan and cost reports give the same numbers, to the exact amount, whether an S3
Inventory was harvested object by object or tallied by Spark (local[1]) into roll-ups.

One generated lake (two buckets, every storage class and Intelligent-Tiering access tier,
objects under, at and over 128 KiB, Spark markers the default exclusions drop, folder markers)
is written twice, to buckets `a-*` and `b-*` of the same moto server; `a-*` is harvested per
object, `b-*` with Spark, both get the same lineage (a dataset read, one object read on its
own, a flow), and the reports of each half are compared with the bucket names swapped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.client import BaseClient
from s3_fixtures import InventoryRow, datasets, files, new_bucket, s3_settings, write_inventory

from lineagegraph.errors import HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.s3.harvester import (
    harvest_s3,
    harvest_s3_inventory,
    harvest_s3_inventory_spark,
)
from lineagegraph.identity import name_of
from lineagegraph.model import Asset, Flow, Transformation
from lineagegraph.reports.options import DAY_MS, GROUPINGS, ReportOptions, build_options
from lineagegraph.reports.orphans import run_report
from lineagegraph.reports.presentation import Report
from lineagegraph.settings import ReportSettings
from lineagegraph.values.globs import exclusion_globs
from lineagegraph.values.pricing import SMALL_OBJECT_BYTES, default_price_table, load_prices

CREATED = 1_717_200_000_000  # 2024-06-01: the inventory's creation time
READ_AT = CREATED + DAY_MS
AS_OF = CREATED + 2 * DAY_MS
TABLE = "snowflake://acme/DB.S.T"
CLASSES = [
    ("STANDARD", None), ("STANDARD_IA", None), ("ONEZONE_IA", None), ("GLACIER_IR", None),
    ("GLACIER", None), ("DEEP_ARCHIVE", None), ("REDUCED_REDUNDANCY", None),
    ("INTELLIGENT_TIERING", None), ("INTELLIGENT_TIERING", "FREQUENT"),
    ("INTELLIGENT_TIERING", "INFREQUENT"), ("INTELLIGENT_TIERING", "ARCHIVE_INSTANT_ACCESS"),
    ("INTELLIGENT_TIERING", "ARCHIVE_ACCESS"), ("INTELLIGENT_TIERING", "DEEP_ARCHIVE"),
]  # fmt: skip
SIZES = [0, 1, SMALL_OBJECT_BYTES - 1, SMALL_OBJECT_BYTES, SMALL_OBJECT_BYTES + 1, 5 * 2**30]
DATASETS = [
    "sales/dt=2024-05-0{day}/part-{n}.parquet",
    "raw/{n}.csv",
    "events/e-{n}.json",
    "cold/archive/{n}.bin",
]
ALL_FIELDS = ("LastModifiedDate", "ETag", "StorageClass", "IntelligentTieringAccessTier")


def lake_rows(bucket_index: int, with_fields: bool) -> list[list[InventoryRow]]:
    """Two data files of objects; without the optional fields every object is STANDARD."""
    rows = []
    for n, ((storage_class, tier), size) in enumerate(
        (c, s) for c in CLASSES for s in SIZES[bucket_index:]
    ):
        key = DATASETS[n % len(DATASETS)].format(day=n % 3 + 1, n=n)
        modified = datetime.fromtimestamp((CREATED - (n + 1) * DAY_MS) / 1000, UTC)
        rows.append(InventoryRow(key, size, storage_class, modified.isoformat(), access_tier=tier))
    rows += [
        InventoryRow("sales/dt=2024-05-01/_SUCCESS", 0),
        InventoryRow("raw/_temporary/0/part-x.csv", 2 * SMALL_OBJECT_BYTES, "STANDARD_IA"),
        InventoryRow("raw/", 0),
    ]
    if not with_fields:
        for row in rows:
            row.storage_class, row.access_tier = "STANDARD", None
    return [rows[::2], rows[1::2]]


def write_lineage(store: GraphStore, bucket: str) -> None:
    """A Spark job reads the sales dataset and one raw object; events flow into a table. The
    assets are named as the Spark harvester names them (datasets by path)."""
    one, events = f"s3://{bucket}/raw/1.csv", f"s3://{bucket}/events"
    writer = GraphWriter(store)
    writer.add_all([
        Asset(f"s3://{bucket}/sales", "Dataset", "s3", "sales", READ_AT),
        Asset(one, "Dataset", "s3", name_of(one), READ_AT),
        Transformation("spark://etl/daily", "spark", "daily", "run-1", READ_AT,
                       reads=(f"s3://{bucket}/sales", one)),
        Asset(events, "Dataset", "s3", "events", READ_AT),
        Asset(TABLE, "Table", "snowflake", name_of(TABLE), READ_AT),
        Flow(events, TABLE, READ_AT),
    ])  # fmt: skip
    writer.flush()


def report(
    store: GraphStore, buckets: Sequence[str], kind: Any, by: str, sort: str = "cost"
) -> Report:
    options = build_options(
        ReportSettings(), kind, as_of=AS_OF, buckets=buckets, by=by, top=100, sort=sort
    )
    return run_report(store, options)


def counters(store: GraphStore, bucket: str, renames: dict[str, str]) -> dict[str, Any]:
    """Each dataset's objects and bytes (per class too), by urn with bucket names swapped."""
    found = {}
    for urn, props in datasets(store, bucket).items():
        for old, new in renames.items():
            urn = urn.replace(old, new)
        found[urn] = {k: v for k, v in props.items() if k.startswith(("objects", "bytes"))}
    return found


def as_seen(result: Report, renames: dict[str, str]) -> dict[str, Any]:
    """The report's numbers with bucket names swapped, so the two halves compare."""

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            for old, new in renames.items():
                value = value.replace(old, new)
        return value

    return {
        "rows": [[swap(v) for v in row] for row in result.rows],
        "top": [[swap(v) for v in row] for row in result.top_rows],
        "totals": result.totals,
        "warnings": result.warnings,
        "notes": result.notes,
    }


@pytest.mark.parametrize(
    ("file_format", "with_fields"),
    [("CSV", True), ("Parquet", True), ("CSV", False), ("Parquet", False)],
)
def test_reports_from_objects_and_from_rollups_are_equal(
    store: GraphStore,
    moto: BaseClient,
    moto_endpoint: str,
    spark: Any,
    file_format: str,
    with_fields: bool,
) -> None:
    settings = s3_settings(moto_endpoint)
    fields = ALL_FIELDS if with_fields else ()
    halves: dict[str, list[str]] = {"a": [], "b": []}
    manifests: dict[str, list[str]] = {"a": [], "b": []}
    for i in range(2):
        for half in halves:
            bucket = new_bucket(moto, f"{half}{i}")
            halves[half].append(bucket)
            manifests[half].append(
                write_inventory(
                    moto,
                    bucket,
                    lake_rows(i, with_fields),
                    created=CREATED,
                    file_format=file_format,
                    fields=fields,
                )
            )
    for url in manifests["a"]:
        harvest_s3_inventory(store, settings, url)
    for url in manifests["b"]:
        report_b = harvest_s3_inventory_spark(store, settings, url, spark)
        assert report_b.status == "success"
    for bucket in halves["a"] + halves["b"]:
        write_lineage(store, bucket)
    for url in manifests["b"]:  # the next day's harvest finds the object read on its own
        harvest_s3_inventory_spark(store, settings, url, spark)

    b_files = files(store, halves["b"][0])
    assert list(b_files) == ["raw/1.csv"]  # the rest are roll-ups
    renames = dict(zip(halves["b"], halves["a"], strict=True))
    for b, a in renames.items():  # the datasets' counters count both shapes alike
        assert counters(store, b, {b: a}) == counters(store, a, {}), b
    for kind in ("orphans", "cost"):
        for by in (by for by in GROUPINGS if by != "object"):  # object: the shapes differ
            per_object = report(store, halves["a"], kind, by)
            from_rollups = report(store, halves["b"], kind, by)
            assert as_seen(from_rollups, renames) == as_seen(per_object, {}), (kind, by)
        check_object_rows(store, halves, renames, kind)
    cost = report(store, halves["a"], "cost", "class")
    assert cost.totals["objects"] > 100 and cost.totals["orphaned_objects"] < cost.totals["objects"]
    if with_fields:
        classes = {row[0] for row in cost.rows}
        assert {"GLACIER", "INTELLIGENT_TIERING/ARCHIVE", "INTELLIGENT_TIERING"} <= classes
        assert cost.notes and "Frequent Access" in cost.notes[0]
        assert any("REDUCED_REDUNDANCY" in w for w in cost.warnings)


def per_class(result: Report, renames: dict[str, str]) -> dict[tuple[str, ...], list[int]]:
    """`--by object` rows summed per bucket, dataset and class: (objects, bytes)."""
    at = {name: result.columns.index(name) for name in ("objects", "bytes")}
    sums: dict[tuple[str, ...], list[int]] = {}
    for row in result.rows:
        key = (renames.get(row[0], row[0]), as_seen_text(row[1], renames), row[3])
        found = sums.setdefault(key, [0, 0])
        found[0] += row[at["objects"]]
        found[1] += row[at["bytes"]]
    return sums


def as_seen_text(text: str, renames: dict[str, str]) -> str:
    for old, new in renames.items():
        text = text.replace(old, new)
    return text


def check_object_rows(
    store: GraphStore, halves: dict[str, list[str]], renames: dict[str, str], kind: Any
) -> None:
    """`--by object`: a row per object where objects were harvested, a row per roll-up (no
    object, harvested_as 'rollup', and a note naming its datasets) where they were not; both
    add up to the same totals and to the same sums per dataset and class."""
    per_object = report(store, halves["a"], kind, "object")
    from_rollups = report(store, halves["b"], kind, "object")
    assert per_object.columns[:4] == ["bucket", "dataset", "object", "storage_class"]
    assert per_object.columns[-1] == "harvested_as"
    assert {(row[2] is None, row[-1]) for row in per_object.rows} == {(False, "object")}
    assert all(row[4] == 1 for row in per_object.rows)  # objects: one per row
    assert len({row[2] for row in per_object.rows}) == len(per_object.rows)
    assert per_object.totals == from_rollups.totals
    assert per_class(from_rollups, renames) == per_class(per_object, {})
    shapes = {(row[2] is None, row[-1]) for row in from_rollups.rows}
    assert (True, "rollup") in shapes and (True, "object") not in shapes
    assert not any("per-object detail" in note for note in per_object.notes)
    [note] = [note for note in from_rollups.notes if "no per-object detail" in note]
    assert all(bucket in note for bucket in halves["b"]) and "without --spark" in note
    if kind == "orphans":  # roll-ups sort by their oldest object's date; no date: last
        oldest = report(store, halves["b"], kind, "object", sort="oldest")
        at = oldest.columns.index("oldest_modified")
        dates = [row[at] for row in from_rollups.rows]
        assert [row[at] for row in oldest.rows] == sorted(dates, key=lambda d: (d is None, d))
        assert sorted(map(str, oldest.rows)) == sorted(map(str, from_rollups.rows))
        assert note in oldest.notes and oldest.totals == from_rollups.totals
    if kind == "cost":  # the object read on its own stays an object in the roll-up scope
        one = f"s3://{halves['b'][0]}/raw/1.csv"
        assert [row[-1] for row in from_rollups.rows if row[2] == one] == ["object"]
        rendered = from_rollups.render("csv").splitlines()
        assert rendered[0].startswith("bucket,dataset,object,storage_class,")
        assert rendered[0].endswith(",harvested_as")
        assert any(line.endswith(",rollup") for line in rendered[1:])
        document = json.loads(from_rollups.render("json"))
        assert note in document["notes"] and note in from_rollups.render("table")


def test_a_scope_harvested_per_object_refuses_rollups(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, spark: Any
) -> None:
    source = new_bucket(moto)
    url = write_inventory(moto, source, [[InventoryRow("t/a.csv", 10)]])
    settings = s3_settings(moto_endpoint)
    harvest_s3_inventory(store, settings, url)
    with pytest.raises(HarvestError, match="holds 1 objects harvested one by one"):
        harvest_s3_inventory_spark(store, settings, url, spark)


def test_an_older_report_never_replaces_newer_rollups(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, spark: Any
) -> None:
    source = new_bucket(moto)
    settings = s3_settings(moto_endpoint)
    newer = write_inventory(moto, source, [[InventoryRow("t/a.csv", 10)]], created=CREATED)
    older = write_inventory(moto, source, [[InventoryRow("t/a.csv", 99)]], created=CREATED - 1)
    harvest_s3_inventory_spark(store, settings, newer, spark)
    with pytest.raises(HarvestError, match="already has roll-ups of a newer inventory"):
        harvest_s3_inventory_spark(store, settings, older, spark)
    again = harvest_s3_inventory_spark(store, settings, newer, spark)  # the same one: replaced
    assert again.status == "success"
    result = report(store, [source], "cost", "bucket")
    assert (result.totals["objects"], result.totals["bytes"]) == (1, 10)


def test_include_deleted_counts_deleted_objects_but_never_replaced_rollups(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, spark: Any
) -> None:
    """A newer inventory without `t2/y.csv`: harvested per object, the object is soft-deleted
    and --include-deleted counts it again; as roll-ups, the older roll-ups are replaced (counting
    them would count `t1/x.csv` twice), so the flag adds nothing there and a note says why."""
    settings = s3_settings(moto_endpoint, max_delete_share=1.0)  # half the objects go
    first = [[InventoryRow("t1/x.csv", 10), InventoryRow("t2/y.csv", 20)]]
    buckets = {}
    for shape in ("objects", "rollups"):
        bucket = buckets[shape] = new_bucket(moto, shape[:4])
        older = write_inventory(moto, bucket, first, created=CREATED - DAY_MS)
        newer = write_inventory(moto, bucket, [[InventoryRow("t1/x.csv", 10)]], created=CREATED)
        for url in (older, newer):
            if shape == "objects":
                harvest_s3_inventory(store, settings, url)
            else:
                harvest_s3_inventory_spark(store, settings, url, spark)

    def totals(shape: str, include_deleted: bool, as_of: int = AS_OF) -> tuple[int, int]:
        options = ReportOptions(
            kind="cost",
            as_of=as_of,
            lookback_days=90,
            excludes=exclusion_globs(),
            prices=load_prices(),
            price_table=default_price_table(),
            by="object",
            buckets=[buckets[shape]],
            include_deleted=include_deleted,
        )
        result = run_report(store, options)
        notes[shape, include_deleted] = result.notes
        return result.totals["objects"], result.totals["bytes"]

    notes: dict[tuple[str, bool], list[str]] = {}
    assert totals("objects", False) == totals("rollups", False) == (1, 10)
    assert totals("objects", True) == (2, 30)
    assert totals("rollups", True) == (1, 10)
    [note] = [n for n in notes["rollups", True] if n.startswith("--include-deleted")]
    assert f"s3://{buckets['rollups']}/t1" in note and "newest inventory" in note
    assert not any(n.startswith("--include-deleted") for n in notes["objects", True])
    assert not any(n.startswith("--include-deleted") for n in notes["rollups", False])
    between = CREATED - DAY_MS // 2  # before the newer inventory: the older one counts
    assert totals("objects", False, between) == totals("rollups", True, between) == (2, 30)


def test_a_listing_replaces_the_rollups_of_its_scope(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, spark: Any
) -> None:
    """Roll-ups, then a listing of the same bucket: the objects count once, as objects."""
    source = new_bucket(moto)
    settings = s3_settings(moto_endpoint)
    url = write_inventory(moto, source, [[InventoryRow("t/a.csv", 3), InventoryRow("t/b.csv", 4)]])
    harvest_s3_inventory_spark(store, settings, url, spark)
    moto.put_object(Bucket=source, Key="t/a.csv", Body=b"abc")
    moto.put_object(Bucket=source, Key="t/b.csv", Body=b"abcd")
    assert harvest_s3(store, settings, source).status == "success"
    now = int(time.time() * 1000)
    options = ReportOptions(
        kind="cost",
        as_of=now,
        lookback_days=90,
        excludes=exclusion_globs(),
        prices=load_prices(),
        price_table=default_price_table(),
        buckets=[source],
        by="object",
    )
    result = run_report(store, options)
    assert (result.totals["objects"], result.totals["bytes"]) == (2, 7)
    assert {row[-1] for row in result.rows} == {"object"}  # the roll-ups stopped counting
    before = run_report(store, replace(options, as_of=CREATED + DAY_MS))  # the inventory's day
    assert {row[-1] for row in before.rows} == {"rollup"} and before.totals["bytes"] == 7
