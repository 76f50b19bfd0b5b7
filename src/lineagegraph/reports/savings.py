"""What a lifecycle action saves a month, and what it costs once (docs/reports.md,
"Recommendations"): the arithmetic of `lineagegraph recommend`, on tallies, with no graph.

Every amount is an exact Fraction of USD from the price table (lineagegraph.values.pricing),
each action priced on its own (Standard's volume tiers from the first tier). An action is
recommended only when it saves money a month and pays its one-time cost back within its
horizon: the target class's minimum storage duration (at least 30 days), since the objects are
billed that long in their new class whatever happens next. The reason it is not is said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from lineagegraph.errors import ConfigError
from lineagegraph.output import usd_text
from lineagegraph.values.pricing import GB, PriceTable, Tally, Usage

MONTH_DAYS = 30
"""AWS prorates storage per day; a month here is 30 days (minimum durations are in days)."""
DAY_MS = 86_400_000
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "STANDARD": (
        "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER_IR", "GLACIER",
        "DEEP_ARCHIVE",
    ),
    "STANDARD_IA": ("ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER_IR", "GLACIER", "DEEP_ARCHIVE"),
    "INTELLIGENT_TIERING": ("ONEZONE_IA", "GLACIER_IR", "GLACIER", "DEEP_ARCHIVE"),
    "ONEZONE_IA": ("GLACIER", "DEEP_ARCHIVE"),
    "GLACIER_IR": ("GLACIER", "DEEP_ARCHIVE"),
    "GLACIER": ("DEEP_ARCHIVE",),
}  # fmt: skip
"""The lifecycle transitions S3 supports, from each class (its "waterfall"); an object of a
class not listed here (or already in the target) stays where it is."""
SETTLED_TIER = "INTELLIGENT_TIERING/ARCHIVE_INSTANT_ACCESS"
"""Where Intelligent-Tiering keeps an object of at least 128 KiB that nobody reads (after 90
days without access); smaller objects stay in its Frequent Access tier and are not monitored."""


@dataclass(frozen=True)
class Group:
    """What one prefix holds, per storage class: current objects with the newest last-modified
    time of each class (epoch ms; None: unknown), and the hidden cost."""

    current: Mapping[str, Tally]
    newest: Mapping[str, int | None] = field(default_factory=dict)
    noncurrent: Mapping[str, Tally] = field(default_factory=dict)
    uploads: Mapping[str, Tally] = field(default_factory=dict)
    delete_markers: Tally = field(default_factory=Tally)


@dataclass(frozen=True)
class Action:
    """One lifecycle action on a prefix and its money: amounts held as integers of 1/TICKS USD
    (exact; compared and summed without Fractions), read as USD Fractions."""

    kind: str  # transition, expire, expire-noncurrent, abort-uploads
    target: str | None  # the class of a transition
    small_objects_too: bool  # a transition of objects under 128 KiB too (a size filter)
    objects: int  # the objects (versions, uploads) it acts on
    bytes: int
    before: int  # a month now
    after: int  # a month after
    requests: int  # transition requests, once
    early: int  # minimum storage duration charges, once
    horizon_days: int

    @property
    def monthly_before(self) -> Fraction:
        return Fraction(self.before, TICKS)

    @property
    def monthly_after(self) -> Fraction:
        return Fraction(self.after, TICKS)

    @property
    def requests_usd(self) -> Fraction:
        return Fraction(self.requests, TICKS)

    @property
    def early_usd(self) -> Fraction:
        return Fraction(self.early, TICKS)

    @property
    def monthly_saving(self) -> Fraction:
        return Fraction(self.before - self.after, TICKS)

    @property
    def one_time(self) -> Fraction:
        return Fraction(self.requests + self.early, TICKS)

    @property
    def net_over_horizon(self) -> Fraction:
        return self.monthly_saving * self.horizon_days / MONTH_DAYS - self.one_time

    @property
    def payback_days(self) -> Fraction | None:
        """Days until the saving has paid the one-time cost (None: it never does)."""
        saving = self.before - self.after
        if saving <= 0:
            return None
        return Fraction((self.requests + self.early) * MONTH_DAYS, saving)

    @property
    def recommended(self) -> bool:
        saving = self.before - self.after
        net = saving * self.horizon_days - (self.requests + self.early) * MONTH_DAYS
        return self.objects > 0 and saving > 0 and net > 0

    @property
    def why_not(self) -> str | None:
        """Why it is not recommended, in words; None when it is."""
        if self.objects == 0:
            return "nothing to act on"
        if self.monthly_saving == 0:
            return "saves nothing a month"
        if self.monthly_saving < 0:
            return (
                f"costs {usd_text(usd(-self.monthly_saving))} a month more than now (minimum "
                "billable size, per-object overhead or monitoring fee)"
            )
        if self.net_over_horizon <= 0:
            return (
                f"its one-time {usd_text(usd(self.one_time))} (transition requests, minimum "
                f"storage duration) takes {float(self.payback_days or 0):,.0f} days to pay "
                f"back, longer than the {self.horizon_days}-day minimum storage duration"
            )
        return None


def usd(amount: Fraction) -> Decimal:
    """USD to 1e-9, rounded half to even (the JSON's exact decimal strings)."""
    return Decimal(round(amount * 10**9)).scaleb(-9)


UNIT = GB * 10**12
"""A month's cost is an integer of 1/UNIT USD: exact for prices of up to 9 decimal places (a
fee per 1,000 objects is then 1e-12 per object); a table with more stops with a ConfigError."""
PER_MONTH = MONTH_DAYS * DAY_MS
TICKS = UNIT * PER_MONTH
"""An action's amounts are integers of 1/TICKS USD, so the minimum duration charges (a
month's cost x days short / 30, the days in milliseconds) are exact integers too: a prefix
prices some hundred tallies, and Fractions were most of the time."""


def monthly(storage_class: str, tally: Tally, prices: PriceTable) -> Fraction:
    """USD a month of a tally in a class, priced on its own: what `monthly_costs` gives a
    single usage (tests/reports/test_savings.py checks both agree)."""
    return Fraction(units(storage_class, tally, prices), UNIT)


def units(storage_class: str, tally: Tally, prices: PriceTable) -> int:
    """`monthly` in 1/UNIT USD: the bytes through their class's tiers, the Standard-priced
    overhead through Standard's, the monitoring fee per object; remembered, since a prefix
    prices the same tallies for every target."""
    if not tally.objects:
        return 0
    key = (id(prices), storage_class, tally.objects, tally.bytes, tally.small_objects,
           tally.small_bytes)  # fmt: skip
    known = _UNITS.get(key)
    if known is not None and known[0] is prices:
        return known[1]
    usage = Usage.of(storage_class, tally, prices)
    name = prices.priced_as(storage_class)[0]
    price = prices.classes[name]
    rates = _rates(prices)
    pools = {name: usage.billable_bytes + usage.objects * price.overhead_bytes}
    standard = prices.standard_class
    pools[standard] = pools.get(standard, 0) + usage.objects * price.standard_overhead_bytes
    cost = usage.monitored_objects * rates[name][1]
    for pool, size in pools.items():
        lower = 0
        for upper, rate in rates[pool][0]:  # tiered_cost's walk, in integers
            top = size if upper is None else min(size, upper)
            if top > lower:
                cost += (top - lower) * rate
            if upper is None or size <= upper:
                break
            lower = upper
    if len(_UNITS) >= _REMEMBERED:
        _UNITS.clear()
    _UNITS[key] = (prices, cost)
    return cost


Rates = tuple[list[tuple[int | None, int]], int, int]


def _rates(prices: PriceTable) -> dict[str, Rates]:
    """Per class: its tiers (upper bound in bytes, 1/UNIT USD per byte-month), its monitoring
    fee per object (1/UNIT USD a month) and its transition fee per object (1/UNIT USD), worked
    out once per table."""
    known = _RATES.get(id(prices))
    if known is not None and known[0] is prices:
        return known[1]
    rates = {}
    for name, price in prices.classes.items():
        tiers = [(upper, _whole(rate * UNIT / GB, name)) for upper, rate in price.tier_bounds()]
        fee = _whole(Fraction(price.monitoring_usd_per_1000_objects) * UNIT / 1000, name)
        moving = Fraction(price.transition_usd_per_1000_requests or 0) * UNIT / 1000
        rates[name] = (tiers, fee, _whole(moving, name))
    _RATES[id(prices)] = (prices, rates)
    return rates


def _whole(scaled: Fraction, name: str) -> int:
    if scaled.denominator != 1:
        raise ConfigError(
            f"price table: a price of {name} has more than 9 decimal places; give at most 9"
        )
    return int(scaled)


_RATES: dict[int, tuple[PriceTable, dict[str, Rates]]] = {}
_UNITS: dict[tuple[Any, ...], tuple[PriceTable, int]] = {}
_REMEMBERED = 65_536


def large_part(tally: Tally) -> Tally:
    """The objects of at least 128 KiB: what a lifecycle transition moves by default (S3 does
    not transition smaller objects unless a rule's size filter says so)."""
    return Tally(tally.objects - tally.small_objects, tally.bytes - tally.small_bytes)


def early_charge(
    storage_class: str, now: int, newest: int | None, as_of: int, prices: PriceTable
) -> int:
    """The minimum storage duration charge (1/TICKS USD) for taking objects costing `now`
    (1/UNIT USD a month) out of their class: the days short of the class's minimum at its
    price, counted from the newest object's last-modified time (as if every object had
    entered its class then; unknown: now)."""
    price = prices.classes.get(prices.priced_as(storage_class)[0])
    if price is None or not price.min_storage_days or not now:
        return 0
    age_ms = max(0, as_of - newest) if newest is not None else 0
    return now * max(0, price.min_storage_days * DAY_MS - age_ms)


def transition(
    group: Group, target: str, small_too: bool, as_of: int, prices: PriceTable
) -> Action:
    """Transition the prefix's current objects to `target` (those of at least 128 KiB unless
    `small_too`). Objects that S3 cannot move there (already in it, or colder) stay."""
    price = prices.classes[target]
    before = after = early = objects = size = 0
    for storage_class, tally in group.current.items():
        if target not in TRANSITIONS.get(storage_class, ()):
            continue
        moving = tally if small_too else large_part(tally)
        if not moving.objects:
            continue
        now = units(storage_class, moving, prices)
        before += now
        after += _settled(target, moving, prices)
        early += early_charge(storage_class, now, group.newest.get(storage_class), as_of, prices)
        objects, size = objects + moving.objects, size + moving.bytes
    fee = _rates(prices)[target][2]
    horizon = max(price.min_storage_days, MONTH_DAYS)
    return Action(
        "transition", target, small_too, objects, size, before * PER_MONTH, after * PER_MONTH,
        fee * objects * PER_MONTH, early, horizon,
    )  # fmt: skip


def _settled(target: str, tally: Tally, prices: PriceTable) -> int:
    """A month of `tally` once it settled in `target` (1/UNIT USD): Intelligent-Tiering keeps
    unread objects of at least 128 KiB in its Archive Instant Access tier (paying the
    monitoring fee) and smaller ones in Frequent Access (no fee); other classes as they are."""
    if target != "INTELLIGENT_TIERING" or SETTLED_TIER not in prices.classes:
        return units(target, tally, prices)
    small = Tally(tally.small_objects, tally.small_bytes, tally.small_objects, tally.small_bytes)
    return units(SETTLED_TIER, large_part(tally), prices) + units(target, small, prices)


def expire(group: Group, as_of: int, prices: PriceTable) -> Action:
    """Expire (delete) the prefix's current objects: saves all they cost, less the minimum
    storage duration charges of classes that have one."""
    before = early = 0
    for storage_class, tally in group.current.items():
        now = units(storage_class, tally, prices)
        before += now
        early += early_charge(storage_class, now, group.newest.get(storage_class), as_of, prices)
    objects = sum(t.objects for t in group.current.values())
    size = sum(t.bytes for t in group.current.values())
    return Action(
        "expire", None, True, objects, size, before * PER_MONTH, 0, 0, early, MONTH_DAYS,
    )  # fmt: skip


def expire_noncurrent(group: Group, prices: PriceTable) -> Action:
    """Expire noncurrent versions (and the delete markers left alone after): saves what they
    cost; versions in a class with a minimum duration are charged the whole of it (their age
    in the class is not known: an upper bound)."""
    before = early = 0
    for storage_class, tally in group.noncurrent.items():
        now = units(storage_class, tally, prices)
        before += now
        early += early_charge(storage_class, now, None, 0, prices)
    before += units("STANDARD", group.delete_markers, prices)
    objects = sum(t.objects for t in group.noncurrent.values()) + group.delete_markers.objects
    size = sum(t.bytes for t in group.noncurrent.values()) + group.delete_markers.bytes
    return Action(
        "expire-noncurrent", None, True, objects, size, before * PER_MONTH, 0, 0, early,
        MONTH_DAYS,
    )  # fmt: skip


def abort_uploads(group: Group, prices: PriceTable) -> Action:
    """Abort incomplete multipart uploads: saves what their parts cost, for free."""
    before = sum(units(c, t, prices) for c, t in group.uploads.items())
    objects = sum(t.objects for t in group.uploads.values())
    size = sum(t.bytes for t in group.uploads.values())
    return Action(
        "abort-uploads", None, True, objects, size, before * PER_MONTH, 0, 0, 0, MONTH_DAYS,
    )  # fmt: skip


def targets(prices: PriceTable, wanted: Sequence[str] = ()) -> list[str]:
    """The classes a transition may go to: those the price table gives a transition fee (and,
    when `wanted` is given, only those)."""
    known = [
        name
        for name, price in prices.classes.items()
        if price.transition_usd_per_1000_requests is not None
    ]
    return [name for name in known if not wanted or name in wanted]


def current_actions(
    group: Group,
    as_of: int,
    prices: PriceTable,
    *,
    classes: Sequence[str] = (),
    allow_expire: bool = False,
) -> list[Action]:
    """Every action on the current objects, evaluated (transitions to each target with and
    without objects under 128 KiB; expiry only when allowed), best first: recommended ones by
    monthly saving, then the rest by net over their horizon."""
    actions = [
        transition(group, target, small_too, as_of, prices)
        for target in targets(prices, classes)
        for small_too in (False, True)
    ]
    if allow_expire:
        actions.append(expire(group, as_of, prices))
    actions = [a for a in actions if a.objects]
    return sorted(actions, key=lambda a: (not a.recommended, a.after - a.before))
