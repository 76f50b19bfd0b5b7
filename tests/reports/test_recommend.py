"""Which prefixes `recommend` proposes rules for: those no reader consumed in the window and
nothing flowed from (the orphan report's test), each with the datasets under it; and how its
rules merge with a bucket's own."""

from __future__ import annotations

import pytest
from lake import DAY, T0, Lake, report_options

from lineagegraph.errors import UsageError
from lineagegraph.graph.store import GraphStore
from lineagegraph.reports.recommend import Policy, merged, recommend, rule_id, rules_of
from lineagegraph.values.pricing import GB


def test_only_prefixes_nobody_consumed_get_rules(lake: Lake, store: GraphStore) -> None:
    lake.obj("lake", "raw/orders/part-0.csv", size=2 * GB)
    lake.obj("lake", "raw/orders/dt=2023-01-01/part-1.csv", size=GB)  # folds into raw/orders
    lake.obj("lake", "raw/events/2024/x.json", size=GB, storage_class="GLACIER")
    lake.obj("lake", "marts/sales/part-0.parquet", size=GB)
    lake.read(lake.dataset("s3a://lake/marts/"), at=T0 - DAY)  # read above it: consumed
    lake.obj("lake", "exports/x.csv", size=GB)
    lake.flow("s3://lake/exports", at=T0 - DAY)  # flowed downstream: consumed
    lake.obj("lake", "arch/a.csv", size=GB)
    lake.obj("lake", "arch/hot/b.csv", size=GB)
    lake.read("s3://lake/arch/hot", at=T0 - DAY)  # a dataset under arch/ is read
    lake.obj("lake", "old/a.csv", size=GB)
    lake.read("s3://lake/old", at=T0 - 100 * DAY)  # before the 90-day window
    lake.obj("lake", "top.csv", size=GB)
    lake.write()

    found = recommend(store, report_options("recommend"), Policy())

    by_prefix = {item.prefix: item for item in found.items}
    assert set(by_prefix) == {"raw/orders/", "raw/events/2024/", "old/"}
    assert by_prefix["old/"].last_read == T0 - 100 * DAY
    assert by_prefix["raw/orders/"].datasets == ["s3://lake/raw/orders"]
    chosen = by_prefix["raw/orders/"].chosen
    assert chosen is not None and (chosen.target, chosen.objects) == ("DEEP_ARCHIVE", 2)
    skipped = {s["dataset"]: s["why"] for s in found.skipped}
    assert skipped == {
        "s3://lake": "objects at the bucket's root: a rule would cover the whole bucket",
        "s3://lake/arch": "s3://lake/arch/hot under it was consumed in the window",
    }
    # Most saved first.
    savings = [item.monthly_saving for item in found.items]
    assert savings == sorted(savings, reverse=True)
    # Only Standard-IA asked for: Glacier objects cannot go back to it; nothing for them.
    ia = recommend(store, report_options("recommend"), Policy(classes=("STANDARD_IA",)))
    events = {item.prefix: item for item in ia.items}["raw/events/2024/"]
    assert events.chosen is None and events.alternatives == []
    assert rules_of(events, ia.policy) == []
    soon = Policy(classes=("STANDARD_IA",), transition_days=0)
    orders = {i.prefix: i for i in recommend(store, report_options("recommend"), soon).items}
    [rule] = rules_of(orders["raw/orders/"], soon)
    assert rule["Transitions"] == [{"Days": 30, "StorageClass": "STANDARD_IA"}]  # S3's minimum
    with pytest.raises(UsageError, match="--to GLACER: not a class"):
        recommend(store, report_options("recommend"), Policy(classes=("GLACER",)))


def test_merging_keeps_every_rule_and_replaces_only_its_own(lake: Lake, store: GraphStore) -> None:
    lake.obj("lake", "cold/a.bin", size=GB)
    lake.write()
    found = recommend(
        store, report_options("recommend"), Policy(allow_expire=True, expire_days=400)
    )
    [item] = found.items
    assert item.chosen is not None and item.chosen.kind == "expire"  # saves all it costs
    [rule] = rules_of(item, found.policy)
    assert rule == {
        "ID": rule_id("objects", "cold/"),
        "Filter": {"Prefix": "cold/"},
        "Status": "Enabled",
        "Expiration": {"Days": 400},
    }
    theirs = {"ID": "theirs", "Filter": {"Prefix": ""}, "Status": "Enabled"}
    stale = {**rule, "Expiration": {"Days": 1}}
    assert merged([theirs, stale], [rule]) == [theirs, rule]
    assert merged([theirs], [rule]) == [theirs, rule]
    no_id = {"Filter": {"Prefix": "x/"}, "Status": "Disabled"}
    assert merged([no_id], [rule]) == [no_id, rule]
