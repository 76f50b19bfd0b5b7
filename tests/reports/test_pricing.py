"""Exact monthly storage cost: every class, minimums, overheads, tiers and the monitoring fee.

Expected values are worked out by hand from the price table's decimal prices (USD per GB-month,
GB = 2^30 bytes); `Fraction("0.023")` is exactly 23/1000, so the comparisons are exact.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineagegraph.errors import ConfigError
from lineagegraph.values.pricing import (
    GB,
    NANO,
    PriceTable,
    Tally,
    Usage,
    apportion,
    default_price_table,
    load_prices,
    monthly_costs,
    tiered_cost,
)

TB = 1024 * GB  # AWS's tiers count 1 TB as 1,024 GB
KIB = 1024
STANDARD = Fraction("0.023")


@pytest.fixture(scope="module")
def prices() -> PriceTable:
    return load_prices()


def usage(
    storage_class: str, objects: int, size: int, billable: int | None = None, monitored: int = 0
) -> Usage:
    return Usage(storage_class, objects, size, size if billable is None else billable, monitored)


def cost(prices: PriceTable, *usages: Usage) -> list[Fraction]:
    return monthly_costs(usages, prices).costs


def test_shipped_table_holds_the_us_east_1_list_prices(prices: PriceTable) -> None:
    c = prices.classes
    assert (prices.region, prices.currency, prices.standard_class) == (
        "us-east-1",
        "USD",
        "STANDARD",
    )
    assert c["STANDARD"].tier_bounds() == [
        (50 * TB, Fraction("0.023")),
        (500 * TB, Fraction("0.022")),
        (None, Fraction("0.021")),
    ]
    assert c["INTELLIGENT_TIERING"].tier_bounds() == c["STANDARD"].tier_bounds()
    flat = {name: p.tier_bounds() for name, p in c.items() if p.tiers is None}
    assert flat == {
        "STANDARD_IA": [(None, Fraction("0.0125"))],
        "ONEZONE_IA": [(None, Fraction("0.01"))],
        "GLACIER_IR": [(None, Fraction("0.004"))],
        "GLACIER": [(None, Fraction("0.0036"))],
        "DEEP_ARCHIVE": [(None, Fraction("0.00099"))],
        "INTELLIGENT_TIERING/INFREQUENT": [(None, Fraction("0.0125"))],
        "INTELLIGENT_TIERING/ARCHIVE_INSTANT_ACCESS": [(None, Fraction("0.004"))],
        "INTELLIGENT_TIERING/ARCHIVE": [(None, Fraction("0.0036"))],
        "INTELLIGENT_TIERING/DEEP_ARCHIVE": [(None, Fraction("0.00099"))],
    }
    assert {n for n, p in c.items() if p.min_billable_bytes == 131_072} == {
        "STANDARD_IA",
        "ONEZONE_IA",
        "GLACIER_IR",
    }
    assert {
        n: (p.overhead_bytes, p.standard_overhead_bytes) for n, p in c.items() if p.overhead_bytes
    } == {
        name: (32 * KIB, 8 * KIB)
        for name in (
            "GLACIER",
            "DEEP_ARCHIVE",
            "INTELLIGENT_TIERING/ARCHIVE",
            "INTELLIGENT_TIERING/DEEP_ARCHIVE",
        )
    }
    it = c["INTELLIGENT_TIERING"]
    assert (it.monitoring_usd_per_1000_objects, it.monitoring_min_bytes) == (
        Fraction("0.0025"),
        128 * KIB,
    )
    assert {n for n, p in c.items() if p.monitoring_usd_per_1000_objects} == {
        n for n in c if n.startswith("INTELLIGENT_TIERING")
    }


@pytest.mark.parametrize(
    ("storage_class", "size", "expected"),
    [
        ("STANDARD", 1 * GB, Fraction("0.023")),
        ("STANDARD_IA", 2 * GB, Fraction("0.025")),
        ("ONEZONE_IA", 3 * GB, Fraction("0.03")),
        ("GLACIER_IR", 4 * GB, Fraction("0.016")),
        ("INTELLIGENT_TIERING", 1 * GB, Fraction("0.023")),
    ],
)
def test_each_class_at_its_price(
    prices: PriceTable, storage_class: str, size: int, expected: Fraction
) -> None:
    assert cost(prices, usage(storage_class, 10, size)) == [expected]


def test_minimum_billable_size_comes_in_as_billable_bytes(prices: PriceTable) -> None:
    # Three 10-byte IA objects are billed as 3 x 128 KiB = 3/8192 GB (the graph sums that).
    [ia] = cost(prices, usage("STANDARD_IA", 3, 30, billable=3 * 128 * KIB))
    assert ia == Fraction("0.0125") * 3 / 8192


def test_glacier_overhead_32_kib_at_its_price_8_kib_at_standard(prices: PriceTable) -> None:
    [glacier] = cost(prices, usage("GLACIER", 1, 1 * GB))
    assert glacier == Fraction("0.0036") * (GB + 32 * KIB) / GB + STANDARD * (8 * KIB) / GB
    # 1,000 empty Deep Archive objects still cost their 40 KiB each.
    [deep] = cost(prices, usage("DEEP_ARCHIVE", 1000, 0))
    assert deep == Fraction("0.00099") * 1000 * 32 * KIB / GB + STANDARD * 1000 * 8 * KIB / GB


def test_standard_volume_tiers(prices: PriceTable) -> None:
    standard = prices.classes["STANDARD"]
    assert tiered_cost(50 * TB, standard) == 51_200 * Fraction("0.023")
    assert tiered_cost(60 * TB, standard) == 51_200 * Fraction("0.023") + 10_240 * Fraction(
        "0.022"
    )  # 1,177.60 + 225.28
    assert tiered_cost(600 * TB, standard) == Fraction(
        "13465.6"
    )  # + 460,800 x 0.022 + 102,400 x 0.021
    assert tiered_cost(0, standard) == 0


def test_tiers_apply_to_the_reports_standard_total(prices: PriceTable) -> None:
    # 40 TB + 20 TB: the 10 TB above 50 TB are at 0.022, and each row pays its share.
    a, b = cost(prices, usage("STANDARD", 1, 40 * TB), usage("STANDARD", 1, 20 * TB))
    total = Fraction("1402.88")
    assert (a, b) == (total * 2 / 3, total / 3)


def test_unknown_class_priced_as_standard_joins_the_standard_total(prices: PriceTable) -> None:
    costing = monthly_costs(
        [usage("STANDARD", 5, 50 * TB), usage("REDUCED_REDUNDANCY", 7, 10 * TB)], prices
    )
    assert costing.costs == [Fraction("1402.88") * 5 / 6, Fraction("1402.88") / 6]
    assert costing.unpriced == {"REDUCED_REDUNDANCY": 7}


def test_glacier_standard_overhead_joins_the_standard_total(prices: PriceTable) -> None:
    # 131,072 empty GLACIER objects carry 131,072 x 8 KiB = 1 GB at Standard, on top of exactly
    # 50 TB of STANDARD: that GB falls in the 0.022 tier, shared by the two rows by size.
    standard, glacier = cost(prices, usage("STANDARD", 1, 50 * TB), usage("GLACIER", 131_072, 0))
    pool = 51_200 * Fraction("0.023") + Fraction("0.022")
    assert standard == pool * 51_200 / 51_201
    assert glacier == pool / 51_201 + Fraction("0.0036") * 131_072 * 32 * KIB / GB


def test_intelligent_tiering_monitoring_fee(prices: PriceTable) -> None:
    # 3,000 objects in 1 GB, 2,000 of them monitored (>= 128 KiB): 2 x 0.0025 on top.
    [it] = cost(prices, usage("INTELLIGENT_TIERING", 3000, 1 * GB, monitored=2000))
    assert it == Fraction("0.023") + Fraction("0.005")


def test_no_usage_costs_nothing(prices: PriceTable) -> None:
    assert monthly_costs([], prices).costs == []
    assert cost(prices, usage("GLACIER", 0, 0)) == [0]


def test_the_default_table_is_the_shipped_file() -> None:
    assert default_price_table().name == "prices.toml"
    assert default_price_table().is_file()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("region = [", "is not valid TOML"),
        (
            'region = "x"\n[classes.STANDARD]\nusd_per_gb_month = 0.02\nbogus = 1\n',
            "classes.STANDARD.bogus: Extra inputs are not permitted",
        ),
        (
            'region = "x"\n[classes.GLACIER]\nusd_per_gb_month = 0.004\n',
            "standard_class 'STANDARD' has no [classes] entry",
        ),
        ('region = "x"\n[classes.STANDARD]\n', "give either usd_per_gb_month or tiers"),
        (
            'region = "x"\n[classes.STANDARD]\nusd_per_gb_month = -1\n',
            "classes.STANDARD.usd_per_gb_month: Input should be greater than or equal to 0",
        ),
        (
            'region = "x"\n[classes.STANDARD]\ntiers = [{up_to_gb = 10, usd_per_gb_month = 1}]\n',
            "the last has none",
        ),
        (
            'region = "x"\n[classes.STANDARD]\ntiers = [{up_to_gb = 10, usd_per_gb_month = 1}, '
            "{up_to_gb = 5, usd_per_gb_month = 1}, {usd_per_gb_month = 1}]\n",
            "tiers' up_to_gb must increase",
        ),
        ("[classes.STANDARD]\nusd_per_gb_month = 0.02\n", "region: Field required"),
        (
            'region = "x"\n[classes.STANDARD]\nusd_per_gb_month = 0.02\n'
            "min_billable_bytes = 65536\n",
            "min_billable_bytes must be 0 or 131072",
        ),
    ],
)
def test_a_bad_price_table_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="price table") as err:
        load_prices(path)
    assert str(path) in str(err.value)
    assert message in str(err.value)


def test_a_missing_price_table_says_which_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read price table .*nope\.toml.*price_table"):
        load_prices(tmp_path / "nope.toml")


def test_an_override_table_replaces_the_prices(tmp_path: Path) -> None:
    path = tmp_path / "eu.toml"
    path.write_text('region = "eu-west-1"\n[classes.STANDARD]\nusd_per_gb_month = 0.024\n')
    prices = load_prices(path)
    costing = monthly_costs([usage("STANDARD", 1, GB), usage("GLACIER", 1, GB)], prices)
    assert costing.costs == [Fraction("0.024"), Fraction("0.024")]
    assert costing.unpriced == {"GLACIER": 1}


@given(
    st.lists(st.integers(min_value=0, max_value=10**15), min_size=1, max_size=30),
    st.integers(min_value=1, max_value=10**12),
)
def test_apportioned_amounts_add_up_and_stay_within_a_unit(
    numerators: list[int], denominator: int
) -> None:
    parts = apportion(numerators, denominator)
    total = Fraction(sum(numerators), denominator) * NANO
    assert sum(parts) == round(total + Fraction(1, 10**30))  # the total, rounded (half up)
    for part, numerator in zip(parts, numerators, strict=True):
        assert abs(part - Fraction(numerator, denominator) * NANO) < 1


def test_apportion_rounds_thirds_so_they_add_up() -> None:
    assert apportion([1, 1, 1], 3, 10) == [4, 3, 3]
    assert apportion([2, 2, 2], 3, 1) == [1, 1, 0]  # 2/3 each: the total 2 goes to the first two
    assert apportion([0, 0], 7) == [0, 0]


def test_tallies_merge_and_price_like_their_objects(prices: PriceTable) -> None:
    """Usage.of over tallies equals the per-object rules, however the objects were grouped."""
    sizes = [0, 10, 128 * KIB - 1, 128 * KIB, 3 * GB]
    one, left, right = Tally(), Tally(), Tally()
    for i, size in enumerate(sizes):
        one.add(size, 1000 + i)
        (left if i % 2 else right).add(size, 1000 + i)
    merged = left.merge(right)
    assert merged == one == Tally(5, 128 * KIB * 2 + 9 + 3 * GB, 3, 128 * KIB + 9, 1000, 1004)
    ia = Usage.of("STANDARD_IA", merged, prices)
    assert ia.billable_bytes == sum(max(size, 128 * KIB) for size in sizes)
    it = Usage.of("INTELLIGENT_TIERING/INFREQUENT", merged, prices)
    assert (it.billable_bytes, it.monitored_objects) == (merged.bytes, 2)
    assert Usage.of("STANDARD", merged, prices).monitored_objects == 0
    assert Tally().merge(Tally(1, 5, 1, 5, None, None)).oldest is None


def test_access_tiers_priced_by_their_entry_or_the_class(prices: PriceTable) -> None:
    assert prices.priced_as("INTELLIGENT_TIERING/ARCHIVE") == ("INTELLIGENT_TIERING/ARCHIVE", True)
    assert prices.priced_as("INTELLIGENT_TIERING/FREQUENT") == ("INTELLIGENT_TIERING", True)
    assert prices.priced_as("INTELLIGENT_TIERING/NEW_TIER") == ("INTELLIGENT_TIERING", False)
    assert prices.priced_as("EXPRESS_ONEZONE") == ("STANDARD", False)
    # The archive tiers carry Glacier's 40 KiB per object and the monitoring fee.
    [archive] = cost(prices, usage("INTELLIGENT_TIERING/ARCHIVE", 1000, GB, monitored=1000))
    overhead = Fraction("0.0036") * 1000 * 32 * KIB + Fraction("0.023") * 1000 * 8 * KIB
    assert archive == (Fraction("0.0036") * GB + overhead) / GB + Fraction("0.0025")
