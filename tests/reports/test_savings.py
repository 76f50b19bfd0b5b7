"""The saving arithmetic of `lineagegraph recommend` against hand calculations (USD exact):
transition fees, minimum storage durations, the 128 KiB minimum billable size, Glacier's
per-object overhead, Intelligent-Tiering's monitoring fee and floor, payback and rejection."""

from __future__ import annotations

from fractions import Fraction as F

from lineagegraph.reports.savings import (
    DAY_MS,
    Group,
    abort_uploads,
    current_actions,
    expire,
    expire_noncurrent,
    monthly,
    transition,
)
from lineagegraph.values.pricing import Tally, Usage, load_prices, monthly_costs

PRICES = load_prices()  # config/prices.toml
GIB, MIB, KIB = 2**30, 2**20, 2**10
AS_OF = 1_800_000_000_000
STD, IA, GLACIER, DEEP, IT_AIA = F("0.023"), F("0.0125"), F("0.0036"), F("0.00099"), F("0.004")


def tally(objects: int, size: int) -> Tally:
    small = objects if size < 128 * KIB else 0
    return Tally(objects, objects * size, small, small * size)


def test_large_objects_to_standard_ia_pay_back_within_the_minimum_duration() -> None:
    group = Group({"STANDARD": tally(1000, MIB)}, {"STANDARD": AS_OF - 200 * DAY_MS})
    action = transition(group, "STANDARD_IA", False, AS_OF, PRICES)

    before, after = 1000 * MIB * STD / GIB, 1000 * MIB * IA / GIB
    assert (action.monthly_before, action.monthly_after) == (before, after)
    assert action.requests_usd == F(1000) * F("0.01") / 1000  # $0.01 per 1,000 transitions
    assert action.early_usd == 0  # Standard has no minimum duration
    assert action.horizon_days == 30
    assert action.net_over_horizon == (before - after) - F("0.01")
    assert action.payback_days == F("0.01") * 30 / (before - after)  # 29.26 days
    assert action.recommended and action.why_not is None


def test_deep_archive_adds_40_kib_per_object_and_has_180_days_to_pay_back() -> None:
    group = Group({"STANDARD": tally(1000, MIB)})
    action = transition(group, "DEEP_ARCHIVE", False, AS_OF, PRICES)

    after = (1000 * MIB + 1000 * 32 * KIB) * DEEP / GIB + 1000 * 8 * KIB * STD / GIB
    assert action.monthly_after == after
    assert action.requests_usd == F("0.05")
    assert action.horizon_days == 180
    assert action.net_over_horizon == (1000 * MIB * STD / GIB - after) * 6 - F("0.05")
    assert action.recommended
    best = current_actions(group, AS_OF, PRICES)[0]
    assert (best.target, best.small_objects_too) == ("DEEP_ARCHIVE", False)  # saves the most


def test_small_objects_cost_more_in_ia_at_their_128_kib_floor_and_are_not_recommended() -> None:
    group = Group({"STANDARD": tally(10_000, 10 * KIB)})
    action = transition(group, "STANDARD_IA", True, AS_OF, PRICES)

    before = 10_000 * 10 * KIB * STD / GIB
    after = 10_000 * 128 * KIB * IA / GIB  # each billed as 128 KiB
    assert (action.monthly_before, action.monthly_after) == (before, after)
    assert action.monthly_saving == before - after < 0
    assert not action.recommended and action.payback_days is None
    assert action.why_not is not None and action.why_not.startswith("costs $")
    # By default S3 moves no object under 128 KiB: the rule without a size filter acts on none.
    assert transition(group, "STANDARD_IA", False, AS_OF, PRICES).objects == 0
    # Glacier: 32 KiB at its price and 8 KiB at Standard's per object outweigh the saving.
    glacier = transition(group, "GLACIER", True, AS_OF, PRICES)
    assert (
        glacier.monthly_after == (10_000 * 42 * KIB) * GLACIER / GIB + 10_000 * 8 * KIB * STD / GIB
    )
    assert not glacier.recommended
    assert not any(a.recommended for a in current_actions(group, AS_OF, PRICES))


def test_a_saving_that_does_not_pay_back_its_requests_within_90_days_is_rejected() -> None:
    group = Group({"STANDARD": tally(1000, 200 * KIB)})
    action = transition(group, "GLACIER", False, AS_OF, PRICES)

    before = 1000 * 200 * KIB * STD / GIB
    after = 1000 * 232 * KIB * GLACIER / GIB + 1000 * 8 * KIB * STD / GIB
    assert action.monthly_saving == before - after > 0
    assert action.requests_usd == F("0.03")
    assert action.net_over_horizon == (before - after) * 3 - F("0.03") < 0
    assert action.payback_days == F("0.03") * 30 / (before - after)  # about 263 days
    assert not action.recommended
    assert "longer than the 90-day minimum storage duration" in (action.why_not or "")


def test_intelligent_tiering_settles_in_archive_instant_access_with_its_fee_and_floor() -> None:
    group = Group({"STANDARD": Tally(3, 2 * MIB + 2 * KIB, 1, 2 * KIB)})  # 2 of 1 MiB, 1 of 2 KiB
    action = transition(group, "INTELLIGENT_TIERING", True, AS_OF, PRICES)

    monitoring = 2 * F("0.0025") / 1000  # the 2 KiB object is not monitored
    after = 2 * MIB * IT_AIA / GIB + monitoring + 2 * KIB * STD / GIB
    assert action.monthly_after == after
    assert action.requests_usd == 3 * F("0.01") / 1000
    assert action.horizon_days == 30  # no minimum storage duration


def test_leaving_a_class_before_its_minimum_duration_is_charged_the_days_short() -> None:
    ten_days_old = AS_OF - 10 * DAY_MS
    group = Group({"STANDARD_IA": tally(100, MIB)}, {"STANDARD_IA": ten_days_old})
    action = transition(group, "DEEP_ARCHIVE", False, AS_OF, PRICES)
    now = 100 * MIB * IA / GIB
    assert action.early_usd == now * 20 / 30  # 30-day minimum, 10 days served

    gone = expire(group, AS_OF, PRICES)
    assert (gone.monthly_saving, gone.early_usd) == (now, now * 20 / 30)


def test_noncurrent_versions_delete_markers_and_uploads() -> None:
    group = Group(
        {},
        noncurrent={"STANDARD": tally(4, MIB), "GLACIER_IR": tally(1, 10)},
        uploads={"STANDARD": Tally(2, 6 * MIB)},
        delete_markers=Tally(3, 30, 3, 30),
    )
    versions = expire_noncurrent(group, PRICES)
    glacier_ir = 128 * KIB * F("0.004") / GIB  # 10 bytes billed as 128 KiB
    assert versions.monthly_saving == 4 * MIB * STD / GIB + glacier_ir + 30 * STD / GIB
    assert versions.early_usd == glacier_ir * 90 / 30  # its age unknown: the whole 90 days
    assert versions.objects == 8
    uploads = abort_uploads(group, PRICES)
    assert (uploads.monthly_saving, uploads.one_time) == (6 * MIB * STD / GIB, 0)
    assert uploads.recommended and uploads.payback_days == 0


def test_a_prefix_is_priced_as_the_cost_report_prices_one_row() -> None:
    big = Tally(3, 60 * 2**40, 1, 10)  # 60 TiB: across Standard's first volume tier
    for storage_class in [*PRICES.classes, "REDUCED_REDUNDANCY"]:
        for t in (big, tally(7, 10 * KIB), tally(2, 3 * MIB)):
            usage = Usage.of(storage_class, t, PRICES)
            assert monthly(storage_class, t, PRICES) == monthly_costs([usage], PRICES).costs[0]
