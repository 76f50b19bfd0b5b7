"""Monthly S3 storage cost from a TOML price table (docs/orphans.md).

Objects are tallied per dataset and storage class (`Tally`: objects, bytes, and the objects
under 128 KiB with their bytes, which is all S3's per-object rules need). The graph tallies
the objects it holds one by one (cypher/orphans_usage.cypher); a Spark job tallies an S3
Inventory into roll-ups with `Tally.add` (lineagegraph.harvest.s3.inventory_spark). Either way
`Usage.of` is the one place that applies minimum sizes and per-object fees, and
`monthly_costs` turns usages into dollars. The arithmetic is exact (fractions of the table's
decimal prices), so tests can state the expected cost to the last digit.
"""

from __future__ import annotations

import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from importlib import resources
from itertools import pairwise
from math import lcm
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lineagegraph.errors import ConfigError

GB = 2**30
"""AWS bills storage per GB-month of 2^30 bytes."""
SMALL_OBJECT_BYTES = 131_072
"""The one size S3's per-object rules turn on: the minimum billable size of the IA classes and
Glacier Instant Retrieval, and the smallest object Intelligent-Tiering monitors (and charges
for). Tallies count the objects under it, so roll-ups price as exactly as objects do."""
TIER_SEPARATOR = "/"
"""`INTELLIGENT_TIERING/ARCHIVE`: a storage class and the access tier an inventory gives."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tier(_Strict):
    up_to_gb: int | None = Field(None, gt=0, description="Upper bound of the tier; none: the last.")
    usd_per_gb_month: Decimal = Field(ge=0)


class ClassPrice(_Strict):
    """The price of one storage class; `tiers` or a flat `usd_per_gb_month`."""

    usd_per_gb_month: Decimal | None = Field(None, ge=0)
    tiers: tuple[Tier, ...] | None = None
    min_billable_bytes: int = Field(0, ge=0)
    overhead_bytes: int = Field(0, ge=0)
    standard_overhead_bytes: int = Field(0, ge=0)
    monitoring_usd_per_1000_objects: Decimal = Field(Decimal(0), ge=0)
    monitoring_min_bytes: int = Field(0, ge=0)
    transition_usd_per_1000_requests: Decimal | None = Field(
        None, ge=0, description="Lifecycle transition into this class; none: not a target."
    )
    min_storage_days: int = Field(
        0, ge=0, description="Storage shorter than this is billed as this long."
    )

    @model_validator(mode="after")
    def _one_price(self) -> ClassPrice:
        for name in ("min_billable_bytes", "monitoring_min_bytes"):
            if getattr(self, name) not in (0, SMALL_OBJECT_BYTES):
                raise ValueError(
                    f"{name} must be 0 or {SMALL_OBJECT_BYTES} (S3's 128 KiB): objects are "
                    "tallied below that size only"
                )
        if (self.usd_per_gb_month is None) == (self.tiers is None):
            raise ValueError("give either usd_per_gb_month or tiers")
        if self.tiers is not None:
            limits = [tier.up_to_gb for tier in self.tiers[:-1]]
            if not self.tiers or self.tiers[-1].up_to_gb is not None or None in limits:
                raise ValueError("every tier but the last needs up_to_gb; the last has none")
            if any(a >= b for a, b in pairwise(limit or 0 for limit in limits)):
                raise ValueError("tiers' up_to_gb must increase")
        return self

    def tier_bounds(self) -> list[tuple[int | None, Fraction]]:
        """(upper bound in bytes or None, USD per GB-month), in order."""
        if self.tiers is None:
            return [(None, Fraction(self.usd_per_gb_month or 0))]
        return [
            (None if t.up_to_gb is None else t.up_to_gb * GB, Fraction(t.usd_per_gb_month))
            for t in self.tiers
        ]


class PriceTable(_Strict):
    region: str
    currency: str = "USD"
    standard_class: str = Field(
        "STANDARD", description="Prices unknown classes and standard_overhead_bytes."
    )
    classes: dict[str, ClassPrice]

    @model_validator(mode="after")
    def _standard_is_priced(self) -> PriceTable:
        if self.standard_class not in self.classes:
            raise ValueError(f"standard_class {self.standard_class!r} has no [classes] entry")
        return self

    def priced_as(self, name: str) -> tuple[str, bool]:
        """The [classes] entry that prices `name`, and whether that is the intended price.

        `CLASS/TIER` (an Intelligent-Tiering access tier) without an entry of its own is priced
        as CLASS: intended for the Frequent Access tier, which CLASS's entry prices. Any other
        class missing from the table is priced as standard_class (not intended: warned).
        """
        if name in self.classes:
            return name, True
        storage_class, _, tier = name.partition(TIER_SEPARATOR)
        if tier and storage_class in self.classes:
            return storage_class, tier == FREQUENT_TIER
        return self.standard_class, False


def default_price_table() -> Path:
    """config/prices.toml inside an installed wheel, else the source tree's top-level one."""
    packaged = Path(str(resources.files("lineagegraph"))) / "config" / "prices.toml"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[3] / "config" / "prices.toml"


def load_prices(path: Path | None = None) -> PriceTable:
    """Read a price table (the shipped us-east-1 one by default); errors name file and key."""
    path = path or default_price_table()
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
    except OSError as exc:
        raise ConfigError(
            f"cannot read price table {str(path)!r}: {exc.strerror or exc}; "
            "check [reports] price_table"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"price table {str(path)!r} is not valid TOML: {exc}") from None
    try:
        return PriceTable.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid price table {str(path)!r}: {problems}") from None


FREQUENT_TIER = "FREQUENT"
"""The Intelligent-Tiering access tier an inventory names for objects priced as the class."""


@dataclass(slots=True)
class Tally:
    """Objects of one dataset, storage class and status: what pricing needs of them, summed."""

    objects: int = 0
    bytes: int = 0
    small_objects: int = 0  # objects under SMALL_OBJECT_BYTES
    small_bytes: int = 0  # their bytes
    oldest: int | None = None  # last-modified times, epoch ms
    newest: int | None = None

    def add(self, size: int, modified: int | None) -> None:
        """Count one object in."""
        self.objects += 1
        self.bytes += size
        if size < SMALL_OBJECT_BYTES:
            self.small_objects += 1
            self.small_bytes += size
        if modified is not None:
            self.oldest = modified if self.oldest is None else min(self.oldest, modified)
            self.newest = modified if self.newest is None else max(self.newest, modified)

    def merge(self, other: Tally) -> Tally:
        """Both tallies as one (Spark sums the tallies of its tasks with this)."""
        return Tally(
            self.objects + other.objects,
            self.bytes + other.bytes,
            self.small_objects + other.small_objects,
            self.small_bytes + other.small_bytes,
            _either(min, self.oldest, other.oldest),
            _either(max, self.newest, other.newest),
        )


def _either(choose: Callable[[int, int], int], a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else choose(a, b)


class Usage(NamedTuple):
    """Objects of one storage class as prices see them (a tuple: a report makes one per row of
    hundreds of thousands, and a frozen dataclass takes twice as long to make)."""

    storage_class: str
    objects: int
    bytes: int
    billable_bytes: int  # each object counted at least at its class's min_billable_bytes
    monitored_objects: int  # objects of at least the class's monitoring_min_bytes

    @classmethod
    def of(cls, storage_class: str, tally: Tally, prices: PriceTable) -> Usage:
        """The usage of a tally: the one place minimum sizes and monitored objects are worked
        out, for objects the graph holds one by one and for roll-ups alike."""
        price = prices.classes[prices.priced_as(storage_class)[0]]
        billable = tally.bytes
        if price.min_billable_bytes:  # validated: 0 or SMALL_OBJECT_BYTES
            billable += tally.small_objects * price.min_billable_bytes - tally.small_bytes
        monitored = 0
        if price.monitoring_usd_per_1000_objects:
            small = tally.small_objects if price.monitoring_min_bytes else 0
            monitored = tally.objects - small
        return cls(storage_class, tally.objects, tally.bytes, billable, monitored)


@dataclass(frozen=True)
class Costing:
    """USD per month of each usage, in order, as exact integers over one shared denominator
    (adding them up is integer addition, not Fraction arithmetic: a large report has tens of
    thousands of rows, rolled up three ways)."""

    numerators: list[int]
    denominator: int
    unpriced: Counter[str] = field(default_factory=Counter)  # unknown class -> objects

    @property
    def costs(self) -> list[Fraction]:
        return [Fraction(n, self.denominator) for n in self.numerators]


def monthly_costs(usages: Sequence[Usage], prices: PriceTable) -> Costing:
    """The monthly cost of each usage row.

    Volume tiers apply to the total of all rows billed at a class's price (for Standard, that
    includes the Standard-priced overhead of Glacier objects and unknown classes); each row
    then pays its share of that total's cost, so rows add up to the report's total.
    """
    standard = prices.standard_class
    unpriced: Counter[str] = Counter()
    # Per usage: the class it is priced as, its bytes at that price and its bytes at standard's.
    pooled: list[tuple[str, int, int]] = []
    totals: defaultdict[str, int] = defaultdict(int)
    for usage in usages:
        name, intended = prices.priced_as(usage.storage_class)
        if not intended:
            unpriced[usage.storage_class] += usage.objects
        price = prices.classes[name]
        own = usage.billable_bytes + usage.objects * price.overhead_bytes
        at_standard = usage.objects * price.standard_overhead_bytes
        totals[name] += own
        totals[standard] += at_standard
        pooled.append((name, own, at_standard))
    # A row pays its pool's cost per byte for its bytes, plus its class's fee per object.
    usd_per_byte = {
        pool: tiered_cost(size, prices.classes[pool]) / size
        for pool, size in totals.items()
        if size
    }
    usd_per_object = {
        name: Fraction(price.monitoring_usd_per_1000_objects) / 1000
        for name, price in prices.classes.items()
    }
    rates = [*usd_per_byte.values(), *usd_per_object.values()]
    denominator = lcm(*(rate.denominator for rate in rates))

    def scaled(rate: Fraction) -> int:
        return rate.numerator * (denominator // rate.denominator)

    # A pool of no bytes has no rate: every size in it is 0.
    per_byte = defaultdict(int, {pool: scaled(rate) for pool, rate in usd_per_byte.items()})
    per_object = {name: scaled(rate) for name, rate in usd_per_object.items()}
    at_standard_rate = per_byte[standard]
    numerators = [
        usage.monitored_objects * per_object[name] + own * per_byte[name] + std * at_standard_rate
        for usage, (name, own, std) in zip(usages, pooled, strict=True)
    ]
    return Costing(numerators, denominator, unpriced)


def tiered_cost(size: int, price: ClassPrice) -> Fraction:
    """USD per month for `size` bytes through the class's volume tiers."""
    cost = Fraction()
    lower = 0
    for upper, usd_per_gb in price.tier_bounds():
        top = size if upper is None else min(size, upper)
        if top > lower:
            cost += (top - lower) * usd_per_gb
        if upper is None or size <= upper:
            break
        lower = upper
    return cost / GB


NANO = 10**9
"""Machine formats carry USD in units of 1e-9 (see `apportion`)."""


def apportion(numerators: Sequence[int], denominator: int, scale: int = NANO) -> list[int]:
    """Amounts of numerator/denominator USD as integers of 1/scale USD, each within one unit of
    the exact amount and adding up to the exact total rounded to the nearest unit.

    Rounding each amount on its own would let a sum of rows drift from the total by a unit per
    row; largest-remainder rounding hands the units the floors leave over to the amounts that
    lost the most, so any listing of the rows adds up to the total exactly.

    >>> apportion([1, 1, 1], 3, 10)  # three thirds of a dollar, in dimes
    [4, 3, 3]
    """
    floors = [n * scale // denominator for n in numerators]
    remainders = [n * scale % denominator for n in numerators]
    total = sum(numerators) * scale
    rounded_total = (2 * total + denominator) // (2 * denominator)  # half up
    short = rounded_total - sum(floors)
    # Largest remainders first, ties in order (a stable sort keeps it when reversed).
    for i in sorted(range(len(floors)), key=remainders.__getitem__, reverse=True)[:short]:
        floors[i] += 1
    return floors
