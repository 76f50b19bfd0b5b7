"""How the reports fetch their rows (usage_records): consumption settled per dataset in Python,
then the objects walked in chunks of whole datasets, read in parallel, on each backend."""

from __future__ import annotations

from typing import Any

import pytest
from lake import DAY, T0, Lake, report_options

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.s3.inventory_spark import write_inventory_rollups
from lineagegraph.harvest.s3.scan import Scope
from lineagegraph.identity import name_of
from lineagegraph.model import Asset
from lineagegraph.reports.tally import ancestors, usage_records
from lineagegraph.values.globs import exclusion_globs
from lineagegraph.values.pricing import Tally

AS_OF = T0 + DAY


def mixed_lake(lake: Lake) -> None:
    """Datasets of several objects and classes in buckets whose names sort apart from their
    urns ('a-b' before 'a' as urns, after it as names), consumed in each way the report knows."""
    for bucket in ("a", "a-b", "b"):
        for n, key in enumerate(["raw/x/p0.csv", "raw/x/p1.csv", "raw/y/p0.csv", "top.csv"]):
            lake.obj(bucket, key, size=100 + n, storage_class=("STANDARD", "GLACIER")[n % 2])
        lake.obj(bucket, "raw/x/_SUCCESS", size=0)  # excluded by default
    lake.read(lake.dataset("s3a://a/raw/"), at=T0)  # covers s3://a/raw/x and s3://a/raw/y
    lake.read("s3://a-b/raw/y/p0.csv", at=T0)  # one object, consumed on its own
    lake.flow(lake.dataset("s3://b/raw/x"), at=T0)
    lake.read(lake.dataset("s3://b/raw/y"), at=AS_OF - 100 * DAY)  # before the window
    lake.write()


def rollup_lake(lake: Lake) -> None:
    """mixed_lake, and an inventory's roll-ups of bucket 'r' (harvested with Spark), with names
    that look like other values ('true', '1', an empty tier) and characters that need quoting."""
    mixed_lake(lake)
    tallies: dict[tuple[str, str, str | None, bool], Tally] = {}
    for n, (dataset, storage_class, tier) in enumerate(
        [
            ("s3://r/true", "STANDARD", None),
            ("s3://r/1", "INTELLIGENT_TIERING", "ARCHIVE_ACCESS"),
            ("s3://r/ sp\u00e4ce \\'\"", "GLACIER", ""),
        ]
    ):
        lake.items.append(Asset(dataset, "Dataset", "s3", name_of(dataset), T0, {"bucket": "r"}))
        for excluded in (False, True):
            tally = tallies.setdefault((dataset, storage_class, tier, excluded), Tally())
            tally.add(size=2**40 + n, modified=T0 - n)
    lake.write()
    write_inventory_rollups(lake.store, Scope("r"), T0, exclusion_globs(), tallies)


def test_any_chunking_gives_the_rows_of_one_statement_in_its_order(lake: Lake) -> None:
    rollup_lake(lake)  # objects, then roll-ups
    for kind, by in (("orphans", "dataset-class"), ("cost", "dataset-class"), ("cost", "object")):
        lake.store.reads_at_once = 1
        whole = usage_records(lake.store, report_options(kind, by=by), per_statement=10_000)
        assert {r["harvested_as"] for r in whole} == {"object", "rollup"}, kind
        for per_statement in (1, 2, 3):
            for reads_at_once in (1, 2):
                lake.store.reads_at_once = reads_at_once
                chunked = usage_records(
                    lake.store, report_options(kind, by=by), per_statement=per_statement
                )
                assert chunked == whole, (kind, by, per_statement, reads_at_once)
        # A dataset's rows stay together, datasets in the order of their buckets' names.
        datasets = [r["dataset"] for r in whole]
        order = list(dict.fromkeys(datasets))
        assert datasets == sorted(datasets, key=order.index)
        assert [r["bucket"] for r in whole] == sorted(r["bucket"] for r in whole)


def test_consumption_is_settled_per_dataset(lake: Lake) -> None:
    mixed_lake(lake)
    found: dict[tuple[str, str], int] = {}
    for r in usage_records(lake.store, report_options("cost")):
        key = (r["dataset"], r["status"])
        found[key] = found.get(key, 0) + int(r["objects"])
    assert found[("s3://a/raw/x", "consumed")] == 3  # under the dataset read, its marker too
    assert found[("s3://a-b/raw/y", "consumed")] == 1  # the object read on its own
    assert found[("s3://b/raw/x", "consumed")] == 3  # flowed into a table
    assert found[("s3://b/raw/y", "orphaned")] == 1  # read before the window only
    assert found[("s3://a-b/raw/x", "excluded")] == 1  # its _SUCCESS marker, not consumed
    assert ("s3://a/raw/x", "orphaned") not in found
    orphans = usage_records(lake.store, report_options("orphans"))
    assert {r["status"] for r in orphans} == {"orphaned"}
    assert not {"s3://a/raw/x", "s3://a/raw/y", "s3://b/raw/x"} & {r["dataset"] for r in orphans}


def test_plain_reads_give_the_rows_of_typed_reads(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The usage statements are read `plain` (untyped values on the embedded store): they must
    return strings, integers and nulls only, or a boolean or a float would come back as text."""
    rollup_lake(lake)
    typed = lake.store.read

    def read_typed(name: str, params: Any = None, *, plain: bool = False) -> Any:
        return typed(name, params)

    for kind, by in (("orphans", "dataset-class"), ("cost", "dataset-class"), ("cost", "object")):
        plain = usage_records(lake.store, report_options(kind, by=by))
        with monkeypatch.context() as patch:
            patch.setattr(lake.store, "read", read_typed)
            assert usage_records(lake.store, report_options(kind, by=by)) == plain, (kind, by)
        assert {r["harvested_as"] for r in plain} == {"object", "rollup"}
        assert all(type(v) in (str, int, type(None)) for r in plain for v in r.values())


def test_read_each_returns_each_reads_records_in_order(store: GraphStore) -> None:
    lake = Lake(store)
    buckets = [f"b{n}" for n in range(6)]
    for bucket in buckets:
        lake.obj(bucket, f"{bucket}/x.csv")
    lake.write()
    store.reads_at_once = 2
    got = store.read_each("orphans_datasets", [{"buckets": [b]} for b in reversed(buckets)])
    assert got == [[{"dataset": f"s3://{b}/{b}"}] for b in reversed(buckets)]


def test_ancestors_are_the_urns_whose_consumption_covers_a_dataset() -> None:
    assert ancestors("s3://b/raw/orders") == ["s3://b", "s3://b/raw", "s3://b/raw/orders"]
    assert ancestors("s3://b") == ["s3://b"]
    # Names are data: empty segments and spaces stay as they are.
    assert ancestors("s3://b//x /y") == ["s3://b", "s3://b/", "s3://b//x ", "s3://b//x /y"]
