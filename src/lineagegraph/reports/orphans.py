"""The orphaned-S3 report and the S3 cost report (docs/orphans.md).

Graph statements (cypher/orphans_*.cypher, see usage_records) tally the objects per bucket,
dataset, storage class and status, whether the graph holds them one by one (:File) or as an
inventory's roll-ups (:Rollup); this module prices those tallies
(lineagegraph.values.pricing), rolls them up to the rows asked for, ranks datasets by cost and
renders the result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from itertools import chain
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, Literal

from lineagegraph import gc_pause
from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.output import format_rows, size_text, usd_text
from lineagegraph.settings import ReportSettings
from lineagegraph.store_check import require_assets
from lineagegraph.values.globs import Glob, exclusion_globs
from lineagegraph.values.pricing import (
    GB,
    SMALL_OBJECT_BYTES,
    PriceTable,
    Tally,
    Usage,
    apportion,
    default_price_table,
    load_prices,
    monthly_costs,
)

DAY_MS = 86_400_000
DAY_S = 86_400
Kind = Literal["orphans", "cost"]
GROUPINGS: dict[str, tuple[str, ...]] = {
    "dataset-class": ("bucket", "dataset", "storage_class"),
    "dataset": ("bucket", "dataset"),
    "bucket": ("bucket",),
    "class": ("storage_class",),
    "object": ("bucket", "dataset", "object", "storage_class"),
}
"""Report rows per these keys. `object` rows are single :File objects; a scope harvested as
inventory roll-ups (`harvest s3-inventory --spark`) has no objects to list, so its rows there
are its roll-ups, with no object and `harvested_as` saying so (and a note)."""
ORDERS = ("cost", "oldest")
"""How report rows are ordered: most expensive first, or oldest last-modified first (with
`--by object`, the oldest objects; a roll-up row's date is its oldest object's)."""
ORPHANED = "orphaned"
ROLLUP = "rollup"  # harvested_as of a roll-up's row
CHUNKS_PER_WORKER = 4
MIN_DATASETS_PER_STATEMENT = 500
MAX_DATASETS_PER_STATEMENT = 10_000
INTELLIGENT_TIERING = "INTELLIGENT_TIERING"


@dataclass(frozen=True)
class ReportOptions:
    """What a report covers; the CLI fills it from flags and [reports] settings."""

    kind: Kind
    as_of: int  # epoch ms: the end of the lookback window
    lookback_days: int
    excludes: Sequence[Glob]
    prices: PriceTable
    price_table: Path
    buckets: Sequence[str] = ()
    include_deleted: bool = False
    by: str = "dataset-class"
    top_n: int = 10
    sort: str = "cost"  # one of ORDERS

    @property
    def since(self) -> int:
        return self.as_of - self.lookback_days * DAY_MS


def build_options(
    settings: ReportSettings,
    kind: Kind,
    *,
    as_of: int | None = None,
    lookback_days: int | None = None,
    exclude: Iterable[str] = (),
    buckets: Sequence[str] = (),
    include_deleted: bool = False,
    by: str = "dataset-class",
    top: int | None = None,
    sort: str = "cost",
) -> ReportOptions:
    """The options of a report: what is given, else [reports] settings, else the defaults
    (now, the shipped price table); `exclude` adds to the default and configured globs."""
    price_table = settings.price_table or default_price_table()
    return ReportOptions(
        kind=kind,
        as_of=int(time.time() * 1000) if as_of is None else as_of,
        lookback_days=lookback_days or settings.lookback_days,
        excludes=exclusion_globs(settings.exclude, exclude),
        prices=load_prices(price_table),
        price_table=price_table,
        buckets=tuple(buckets),
        include_deleted=include_deleted,
        by=by,
        top_n=top or settings.top_n,
        sort=sort,
    )


@dataclass(slots=True)
class _Sums:
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
    def of(cls, record: dict[str, Any], usage: Usage, cost: int) -> _Sums:
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

    def add(self, part: _Sums) -> None:
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


def gib(size: int) -> Decimal:
    """Bytes in GiB, exactly: 2^-30 is a finite decimal (30 places at most)."""
    return (Decimal(size * 5**30).scaleb(-30)).normalize() if size else Decimal(0)


def usd(nanos: int) -> Decimal:
    """An amount of 1e-9 USD units as a Decimal with 9 places (0.069000000)."""
    return Decimal(nanos).scaleb(-9)


_MINUTES = [f"{m // 60:02}:{m % 60:02}" for m in range(24 * 60)]  # "HH:MM" of each minute
_TWO_DIGITS = [f"{s:02}" for s in range(60)]


def iso(ms: int | None) -> str | None:
    """Epoch milliseconds as UTC ISO 8601 (the reports' and JSON's time format), to the whole
    second (the format has no more). A report formats hundreds of thousands of times over far
    fewer days: the date comes from a cache, the time of day from tables."""
    if ms is None:
        return None
    day, second = divmod(ms // 1000, DAY_S)
    minute, second = divmod(second, 60)
    return f"{_date(day)}T{_MINUTES[minute]}:{_TWO_DIGITS[second]}Z"


@lru_cache(maxsize=1 << 16)  # 179 years of days
def _date(day: int) -> str:
    """The date of a day since the epoch, as strftime's `%Y-%m-%d` writes it."""
    moment = datetime.fromtimestamp(day * DAY_S, UTC)
    if moment.year < 1000:  # strftime's year, unpadded ("999-01-01"), as it always was
        return moment.strftime("%Y-%m-%d")
    return moment.isoformat()[:10]  # the same text as strftime's, in half the time


def _harvested_as(rollup: bool) -> str:
    return ROLLUP if rollup else "object"


VALUES: dict[str, tuple[str, Callable[[Any], Any] | None]] = {
    "objects": ("objects", None),
    "bytes": ("bytes", None),
    "gib": ("bytes", gib),
    "orphaned_objects": ("orphaned_objects", None),
    "orphaned_bytes": ("orphaned_bytes", None),
    "orphaned_gib": ("orphaned_bytes", gib),
    "oldest_modified": ("oldest", iso),
    "newest_modified": ("newest", iso),
    "last_read": ("last_read", iso),
    "harvested_as": ("rollup", _harvested_as),
}
"""Each value of a row: the attribute of its sums it shows, and how (None: as it is)."""
MONEY: dict[str, str] = {"monthly_usd": "cost", "orphaned_usd": "orphaned_cost"}
"""The USD columns as numerators over the costing's denominator; `_listing` rounds them."""
# Per kind: the values of each row, of each top dataset, and of the totals.
LAYOUT: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "orphans": (
        (
            "objects",
            "bytes",
            "gib",
            "monthly_usd",
            "oldest_modified",
            "newest_modified",
            "last_read",
        ),
        ("objects", "gib", "monthly_usd", "last_read"),
        ("objects", "bytes", "gib", "monthly_usd"),
    ),
    "cost": (
        (
            "objects",
            "bytes",
            "gib",
            "monthly_usd",
            "orphaned_objects",
            "orphaned_gib",
            "orphaned_usd",
            "last_read",
        ),
        ("objects", "gib", "monthly_usd", "orphaned_usd", "last_read"),
        (
            "objects",
            "bytes",
            "gib",
            "monthly_usd",
            "orphaned_objects",
            "orphaned_bytes",
            "orphaned_usd",
        ),
    ),
}


@dataclass
class Report:
    options: ReportOptions
    columns: list[str]
    rows: list[list[Any]]
    top_columns: list[str]
    top_rows: list[list[Any]]
    totals: dict[str, Any]
    warnings: list[str]
    notes: list[str]

    @property
    def title(self) -> str:
        o = self.options
        if o.kind == "orphans":
            return (
                f"Orphaned S3 objects as of {iso(o.as_of)}: nothing consumed them in the "
                f"{o.lookback_days} days since {iso(o.since)}"
            )
        return f"S3 storage cost as of {iso(o.as_of)} (orphaned: not consumed since {iso(o.since)})"

    def render(self, fmt: str, width: int | None = None) -> str:
        """table, markdown and json hold the whole report; csv holds its rows only. A table
        fits `width` (the terminal's, for the CLI) without breaking a name."""
        if fmt == "json":  # exact amounts as decimal strings: a JSON number reads as a float
            return json.dumps(self._document(), indent=2, ensure_ascii=False, default=_exact)
        if fmt == "csv":
            return format_rows(self.columns, self.rows, "csv")
        o = self.options
        about = [
            f"excluded keys: {', '.join(g.text for g in o.excludes)}",
            f"prices: {o.prices.region} {o.prices.currency} per month, from {o.price_table}",
        ]
        if o.buckets:
            about.append(f"buckets: {', '.join(o.buckets)}")
        if o.include_deleted:
            about.append("deleted objects included")
        if o.sort == "oldest":
            about.append("rows: oldest last-modified first")
        about += self.notes
        table = fmt == "table"
        total = _total_line(self.totals)
        rows, top_rows = (
            format_rows(*_for_people(c, r, table), fmt, right_aligned=AMOUNTS, width=width)
            for c, r in ((self.columns, self.rows), (self.top_columns, self.top_rows))
        )
        top = f"Top {o.top_n} datasets by monthly cost"
        if fmt == "markdown":
            return "\n\n".join(
                [
                    f"## {self.title}",
                    "\n".join(f"- {line}" for line in about),
                    rows,
                    f"### {top}",
                    top_rows,
                    f"**Total:** {total}",
                ]
            )
        return "\n\n".join(
            ["\n".join([self.title, *about]), rows, f"{top}:\n{top_rows}", f"Total: {total}"]
        )

    def _document(self) -> dict[str, Any]:
        o = self.options
        return {
            "report": o.kind,
            "as_of": iso(o.as_of),
            "since": iso(o.since),
            "lookback_days": o.lookback_days,
            "by": o.by,
            "sort": o.sort,
            "excludes": [g.text for g in o.excludes],
            "buckets": list(o.buckets),
            "include_deleted": o.include_deleted,
            "price_table": {
                "path": str(o.price_table),
                "region": o.prices.region,
                "currency": o.prices.currency,
            },
            "totals": self.totals,
            "rows": _records(self.columns, self.rows),
            "top_datasets": _records(self.top_columns, self.top_rows),
            "warnings": self.warnings,
            "notes": self.notes,
        }


@gc_pause.paused()  # hundreds of thousands of rows: see lineagegraph.gc_pause
def run_report(store: GraphStore, options: ReportOptions) -> Report:
    """Query the graph (usage_records), price what it returns and build the report."""
    records = usage_records(store, options)
    if not records:
        require_assets(store, "orphans_shapes", "S3 objects", "s3")
    usages = [Usage.of(r["storage_class"], tally_of(r), options.prices) for r in records]
    costing = monthly_costs(usages, options.prices)
    key, denominator = GROUPINGS[options.by], costing.denominator
    parts = [_Sums.of(r, u, c) for r, u, c in zip(records, usages, costing.numerators, strict=True)]
    by_dataset = _roll_up(records, parts, GROUPINGS["dataset"])
    by_row = _roll_up(records, parts, key, use_up=True)  # last: it uses the parts up
    everything = _Sums()
    for sums in by_dataset.values():
        everything.add(sums)
    rows, datasets = _rank(by_row, options.sort), _rank(by_dataset)
    warnings = [
        f"storage class {name!r} ({objects:,} object{'s' * (objects != 1)}) is not in the "
        f"price table {options.price_table}; priced as {options.prices.priced_as(name)[0]}"
        for name, objects in sorted(costing.unpriced.items())
    ]
    warnings += _rollup_warnings(store, options)
    rows_of, top_of, totals_of = LAYOUT[options.kind]
    if options.by == "object":
        rows_of = (*rows_of, "harvested_as")
    [totals] = _listing([((), everything)], totals_of, denominator)
    return Report(
        options=options,
        columns=[*key, *rows_of],
        rows=_listing(rows, rows_of, denominator),
        top_columns=[*GROUPINGS["dataset"], *top_of],
        top_rows=_listing(datasets, top_of, denominator, options.top_n),
        totals=dict(zip(totals_of, totals, strict=True)),
        warnings=warnings,
        notes=_tier_notes(usages) + _rollup_notes(records, options),
    )


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
    covered ones), in chunks of whole datasets (`per_statement` each, else see `_chunk_size`)
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
    datasets = []
    for row in store.read("orphans_datasets", {"buckets": list(options.buckets)}):
        hits = [consumed[a] for a in ancestors(row["dataset"]) if a in consumed]
        covered = any(hit["live"] for hit in hits)
        if covered and options.kind != "cost":
            continue  # nothing of it is orphaned
        reads = [hit["last"] for hit in hits if hit["last"] is not None]
        datasets.append(
            {
                "dataset": row["dataset"],
                "bucket": bucket_of(row["dataset"]),
                "covered": covered,
                "last": max(reads, default=None),
                "own": own.get(row["dataset"], []),
            }
        )
    statement = {
        "as_of": options.as_of,
        "include_deleted": options.include_deleted,
        "with_consumed": options.kind == "cost",
        "by_object": options.by == "object",
        "exclude": [glob.program for glob in options.excludes],
        "small": SMALL_OBJECT_BYTES,
    }
    size = per_statement or _chunk_size(len(datasets), store.reads_at_once)
    parts = [{**statement, "datasets": part} for part in chunks(datasets, size)]
    return [
        row
        for shape, usage in (("objects", "orphans_usage"), ("rollups", "orphans_rollup_usage"))
        if shape in shapes
        for rows in store.read_each(usage, parts, plain=True)
        for row in rows
    ]


def _consumed_assets(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The rows of orphans_consumed_assets per asset: consumed in the window when any of its
    edges is (`live`), read last at the latest of theirs (`last`)."""
    assets: dict[str, dict[str, Any]] = {}
    for row in rows:
        seen = assets.get(row["urn"])
        if seen is None:
            assets[row["urn"]] = {**row, "live": bool(row["live"])}
            continue
        seen["live"] = seen["live"] or bool(row["live"])
        if row["last"] is not None and (seen["last"] is None or row["last"] > seen["last"]):
            seen["last"] = row["last"]
    return assets


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


def _tier_notes(usages: Sequence[Usage]) -> list[str]:
    """Say when Intelligent-Tiering objects were priced without their access tier."""
    untiered = sum(
        u.objects for u in usages if u.storage_class == INTELLIGENT_TIERING and u.objects
    )
    if not untiered:
        return []
    return [
        f"{untiered:,} Intelligent-Tiering object{'s' * (untiered != 1)} without an access tier "
        "(an S3 listing, or an inventory without IntelligentTieringAccessTier) priced as "
        "Frequent Access: an upper bound"
    ]


def _rollup_notes(records: Sequence[dict[str, Any]], options: ReportOptions) -> list[str]:
    """Say which datasets were harvested as roll-ups when that limits what was asked: per-object
    rows (`--by object`), or deleted objects (`--include-deleted`)."""
    if options.by != "object" and not options.include_deleted:
        return []
    rolled = sorted({r["dataset"] for r in records if r["harvested_as"] == ROLLUP})
    if not rolled:
        return []
    buckets = sorted({bucket_of(urn) for urn in rolled})
    named = ", ".join(rolled[:5]) + (f" and {len(rolled) - 5:,} more" if len(rolled) > 5 else "")
    which = (
        f"the datasets harvested as S3 Inventory roll-ups (harvest s3-inventory --spark): "
        f"{len(rolled):,} in {', '.join(buckets)} ({named})"
    )
    notes = []
    if options.by == "object":
        notes.append(
            f"no per-object detail for {which}: their rows are per storage class, with no "
            "object and harvested_as 'rollup'; the totals include them. Harvest those scopes "
            "without --spark for per-object rows"
        )
    if options.include_deleted:
        notes.append(
            f"--include-deleted adds nothing for {which}: a newer inventory replaces a roll-up "
            "and does not say which objects went, so their figures are the newest inventory's "
            "as of this report's time"
        )
    return notes


def _rollup_warnings(store: GraphStore, options: ReportOptions) -> list[str]:
    """Roll-ups split excluded objects off when they were harvested: say so when this report
    asks for other exclusions."""
    asked = "\n".join(g.text for g in options.excludes)
    warnings = []
    for row in store.read("orphans_rollup_excludes", {"as_of": options.as_of}):
        if row["excludes"] != asked:
            used = ", ".join(str(row["excludes"] or "").split("\n")) or "none"
            warnings.append(
                f"{int(row['rollups']):,} inventory roll-ups were harvested with the exclusions "
                f"{used}, not this report's: their excluded objects follow those; harvest the "
                "inventory again with the same [reports] exclude to match"
            )
    return warnings


def _listing(
    groups: Sequence[tuple[tuple[Any, ...], _Sums]],
    names: Sequence[str],
    denominator: int,
    first: int | None = None,
) -> list[list[Any]]:
    """One row per group (the `first` groups only, when given): its key, then the named values.
    USD amounts are rounded to 1e-9 over all groups together (pricing.apportion), so the rows
    of a whole listing add up to its total exactly."""
    sums = [s for _, s in groups]
    shown = sums[:first]

    def column(name: str) -> list[Any]:
        if name in MONEY:
            amounts = apportion(list(map(attrgetter(MONEY[name]), sums)), denominator)
            return [usd(n) for n in amounts[:first]]
        attribute, how = VALUES[name]
        values = map(attrgetter(attribute), shown)
        return list(values if how is None else map(how, values))

    columns = [column(name) for name in names]
    return [[*key, *values] for (key, _), *values in zip(groups[:first], *columns, strict=True)]


def _roll_up(
    records: Sequence[dict[str, Any]],
    parts: Sequence[_Sums],
    key: tuple[str, ...],
    *,
    use_up: bool = False,
) -> dict[tuple[Any, ...], _Sums]:
    """The parts (one per record) summed per the records' values of `key`. With `use_up`, a
    group's first part becomes its sums (most rows of a report are one record's): the parts
    are not to be read again."""
    group_of = itemgetter(*key) if len(key) > 1 else lambda record: (record[key[0]],)
    groups: dict[tuple[Any, ...], _Sums] = {}
    for record, part in zip(records, parts, strict=True):
        group = group_of(record)
        sums = groups.get(group)
        if sums is not None:
            sums.add(part)
        elif use_up:
            groups[group] = part
        else:
            sums = groups[group] = _Sums()
            sums.add(part)
    return groups


def _rank(
    groups: dict[tuple[Any, ...], _Sums], sort: str = "cost"
) -> list[tuple[tuple[Any, ...], _Sums]]:
    """Most expensive first (`sort` "oldest": oldest last-modified first, rows with no date
    last, then as by cost); ties by size, then by name, so output is stable (costs share one
    denominator, so comparing numerators is exact); on a tie, a row with no object (a
    roll-up's) last."""
    names = _missing_last if None in chain.from_iterable(groups) else tuple

    def by_cost(kv: tuple[tuple[Any, ...], _Sums]) -> tuple[Any, ...]:
        return -kv[1].cost, -kv[1].bytes, names(kv[0])

    def by_age(kv: tuple[tuple[Any, ...], _Sums]) -> tuple[Any, ...]:
        return kv[1].oldest is None, kv[1].oldest or 0, *by_cost(kv)

    return sorted(groups.items(), key=by_age if sort == "oldest" else by_cost)


def _missing_last(key: tuple[Any, ...]) -> list[tuple[bool, Any]]:
    """A key's names in order, a missing name (None) after every name."""
    return [(v is None, v or "") for v in key]


AMOUNTS = ("size", "orphaned_size", "monthly_usd", "orphaned_usd")
"""The columns people read as amounts: right-aligned, never wrapped."""
_SIZES = {"gib": "size", "orphaned_gib": "orphaned_size"}


def _for_people(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], table: bool
) -> tuple[list[str], list[list[Any]]]:
    """Columns and rows as people read them: money as `$0.0230`, each size once in binary
    units (no separate byte count), days rather than seconds; in a terminal table, no bucket
    column beside a dataset urn that already names it."""
    dropped = {"bytes", "orphaned_bytes"} | (
        {"bucket"} if table and "dataset" in columns else set()
    )
    keep = [i for i, name in enumerate(columns) if name not in dropped]

    def shown(name: str) -> Callable[[Any], Any] | None:
        """How a column's values are shown (None: as they are)."""
        if name in MONEY:
            return usd_text
        if name in _SIZES:
            return lambda gib: size_text(int(gib * GB))
        if name.endswith(("_modified", "_read")):
            return lambda moment: moment[:10]
        return None

    # Column by column (a report may have 200,000 rows): one decision per column, not per cell.
    shown_columns = []
    for i in keep:
        values = [row[i] for row in rows]
        how = shown(columns[i])
        shown_columns.append(
            values if how is None else [v if v is None else how(v) for v in values]
        )
    return (
        [_SIZES.get(columns[i], columns[i]) for i in keep],
        [list(row) for row in zip(*shown_columns, strict=True)] if keep else [[] for _ in rows],
    )


def _total_line(totals: dict[str, Any]) -> str:
    """`objects 3, bytes 4,294,967,296 (4.00 GiB), monthly_usd $0.0726`: the exact byte count
    with its size in binary units (no separate GiB), money as money."""
    shown = []
    for name, value in totals.items():
        if name in _SIZES:
            continue
        if name.endswith("bytes"):
            shown.append(f"{name} {value:,} ({size_text(value)})")
        else:
            shown.append(f"{name} {usd_text(value) if name in MONEY else f'{value:,}'}")
    return ", ".join(shown)


def _exact(value: Any) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _records(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row, strict=True)) for row in rows]


def parse_time(text: str) -> int:
    """`--as-of`: epoch milliseconds, or an ISO 8601 date or time (UTC unless it says).

    >>> parse_time("2024-06-30"), parse_time("2024-06-30T12:00:00+02:00")
    (1719705600000, 1719741600000)
    >>> parse_time("1719705600000")
    1719705600000
    """
    if text.strip().isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"not a time: {text!r} (give a date like 2024-06-30, a time like "
            "2024-06-30T12:00:00Z, or epoch milliseconds)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)
