"""A report as people and programs read it: its rows and totals from the sums, the layout of
each kind, and the text of a terminal table, CSV, JSON or Markdown (money, sizes and dates
formatted for people)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from operator import attrgetter
from typing import Any

from lineagegraph.output import format_rows, size_text, usd_text
from lineagegraph.reports.options import ReportOptions
from lineagegraph.reports.tally import ROLLUP, Sums
from lineagegraph.values.pricing import GB, apportion

DAY_S = 86_400


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
    return moment.isoformat()[:10]  # the same text as strftime's, cheaper


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
"""The USD columns as numerators over the costing's denominator; `listing` rounds them."""
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


def listing(
    groups: Sequence[tuple[tuple[Any, ...], Sums]],
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


AMOUNTS = ("size", "orphaned_size", "monthly_usd", "orphaned_usd")
"""The columns people read as amounts: right-aligned, never wrapped."""
_SIZES = {"gib": "size", "orphaned_gib": "orphaned_size"}


def _for_people(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], table: bool
) -> tuple[list[str], list[list[Any]]]:
    """Columns and rows as people read them: money as `$0.0230`, each size once in binary
    units (no separate byte count), days rather than seconds; in a terminal table, no bucket
    column beside a dataset urn that already names it, and no readers column when nothing was
    read."""
    dropped = {"bytes", "orphaned_bytes"} | (
        {"bucket"} if table and "dataset" in columns else set()
    )
    if table and "readers" in columns:  # a column of blanks only narrows the others
        at = list(columns).index("readers")
        if all(row[at] is None for row in rows):
            dropped.add("readers")
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
