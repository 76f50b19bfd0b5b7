"""The orphaned-S3 report and the S3 cost report (docs/orphans.md).

Two graph statements (cypher/orphans_consumed_objects.cypher, then cypher/orphans_usage.cypher)
sum the objects per bucket, dataset, storage class and status; this module prices those sums
(lineagegraph.reports.pricing), rolls them up to the rows asked for, ranks datasets by cost and
renders the result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from lineagegraph.graph.store import GraphStore
from lineagegraph.output import render
from lineagegraph.reports.globs import Glob
from lineagegraph.reports.pricing import GB, PriceTable, Usage, monthly_costs

DAY_MS = 86_400_000
Kind = Literal["orphans", "cost"]
GROUPINGS: dict[str, tuple[str, ...]] = {
    "dataset-class": ("bucket", "dataset", "storage_class"),
    "dataset": ("bucket", "dataset"),
    "bucket": ("bucket",),
    "class": ("storage_class",),
}
ORPHANED = "orphaned"


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

    @property
    def since(self) -> int:
        return self.as_of - self.lookback_days * DAY_MS


@dataclass
class _Sums:
    """One report row being rolled up from the graph's rows."""

    denominator: int  # of the costs: USD per month = cost / denominator (see pricing.Costing)
    objects: int = 0
    bytes: int = 0
    cost: int = 0
    orphaned_objects: int = 0
    orphaned_bytes: int = 0
    orphaned_cost: int = 0
    oldest: int | None = None
    newest: int | None = None
    last_read: int | None = None

    def add(self, record: dict[str, Any], usage: Usage, cost: int) -> None:
        self.objects += usage.objects
        self.bytes += usage.bytes
        self.cost += cost
        if record["status"] == ORPHANED:
            self.orphaned_objects += usage.objects
            self.orphaned_bytes += usage.bytes
            self.orphaned_cost += cost
        self.oldest = _pick(min, self.oldest, record["oldest_modified"])
        self.newest = _pick(max, self.newest, record["newest_modified"])
        self.last_read = _pick(max, self.last_read, record["last_read"])

    def values(self, names: Sequence[str]) -> list[Any]:
        return [VALUES[name](self) for name in names]


VALUES: dict[str, Callable[[_Sums], Any]] = {
    "objects": lambda s: s.objects,
    "bytes": lambda s: s.bytes,
    "gib": lambda s: _gib(s.bytes),
    "monthly_usd": lambda s: _usd(s.cost, s.denominator),
    "orphaned_objects": lambda s: s.orphaned_objects,
    "orphaned_bytes": lambda s: s.orphaned_bytes,
    "orphaned_gib": lambda s: _gib(s.orphaned_bytes),
    "orphaned_usd": lambda s: _usd(s.orphaned_cost, s.denominator),
    "oldest_modified": lambda s: iso(s.oldest),
    "newest_modified": lambda s: iso(s.newest),
    "last_read": lambda s: iso(s.last_read),
}
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


def _pick(choose: Callable[[int, int], int], a: int | None, b: Any) -> int | None:
    if b is None:
        return a
    return int(b) if a is None else choose(a, int(b))


@dataclass
class Report:
    options: ReportOptions
    columns: list[str]
    rows: list[list[Any]]
    top_columns: list[str]
    top_rows: list[list[Any]]
    totals: dict[str, Any]
    warnings: list[str]

    @property
    def title(self) -> str:
        o = self.options
        if o.kind == "orphans":
            return (
                f"Orphaned S3 objects as of {iso(o.as_of)}: nothing consumed them in the "
                f"{o.lookback_days} days since {iso(o.since)}"
            )
        return f"S3 storage cost as of {iso(o.as_of)} (orphaned: not consumed since {iso(o.since)})"

    def render(self, fmt: str) -> str:
        """table, markdown and json hold the whole report; csv holds its rows only."""
        if fmt == "json":
            return json.dumps(self._document(), indent=2, ensure_ascii=False)
        if fmt == "csv":  # plain numbers (the shared renderer groups thousands in floats)
            rows = [[repr(v) if isinstance(v, float) else v for v in row] for row in self.rows]
            return render(self.columns, rows, "csv")
        o = self.options
        about = [
            f"excluded keys: {', '.join(g.text for g in o.excludes)}",
            f"prices: {o.prices.region} {o.prices.currency} per month, from {o.price_table}",
        ]
        if o.buckets:
            about.append(f"buckets: {', '.join(o.buckets)}")
        if o.include_deleted:
            about.append("deleted objects included")
        totals = ", ".join(f"{k} {v:,}" for k, v in self.totals.items())
        top = f"Top {o.top_n} datasets by monthly cost"
        if fmt == "markdown":
            return "\n\n".join(
                [
                    f"## {self.title}",
                    "\n".join(f"- {line}" for line in about),
                    render(self.columns, self.rows, fmt),
                    f"### {top}",
                    render(self.top_columns, self.top_rows, fmt),
                    f"**Total:** {totals}",
                ]
            )
        return "\n\n".join(
            [
                "\n".join([self.title, *about]),
                render(self.columns, self.rows, fmt),
                f"{top}:\n" + render(self.top_columns, self.top_rows, fmt),
                f"Total: {totals}",
            ]
        )

    def _document(self) -> dict[str, Any]:
        o = self.options
        return {
            "report": o.kind,
            "as_of": iso(o.as_of),
            "since": iso(o.since),
            "lookback_days": o.lookback_days,
            "by": o.by,
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
        }


def run_report(store: GraphStore, options: ReportOptions) -> Report:
    """Query the graph, price what it returns and build the report.

    Two statements: the objects consumed on their own (few) first, so that the sums over every
    object can look a dataset's up by urn instead of searching for it.
    """
    window = {"as_of": options.as_of, "since": options.since}
    touched = store.read("orphans_consumed_objects", window)
    records = store.read(
        "orphans_usage",
        {
            **window,
            "touched": touched,
            "buckets": list(options.buckets),
            "include_deleted": options.include_deleted,
            "with_consumed": options.kind == "cost",
            "exclude": [glob.program for glob in options.excludes],
            **options.prices.query_params(),
        },
    )
    usages = [
        Usage(
            r["storage_class"],
            int(r["objects"]),
            int(r["bytes"] or 0),
            int(r["billable_bytes"] or 0),
            int(r["monitored_objects"] or 0),
        )
        for r in records
    ]
    costing = monthly_costs(usages, options.prices)
    priced = list(zip(records, usages, costing.numerators, strict=True))
    key, denominator = GROUPINGS[options.by], costing.denominator
    rows = _rank(_roll_up(priced, key, denominator))
    top = _rank(_roll_up(priced, GROUPINGS["dataset"], denominator))[: options.top_n]
    everything = _roll_up(priced, (), denominator).get((), _Sums(denominator))
    warnings = [
        f"storage class {name!r} ({objects:,} object{'s' * (objects != 1)}) is not in the "
        f"price table {options.price_table}; priced as {options.prices.standard_class}"
        for name, objects in sorted(costing.unpriced.items())
    ]
    rows_of, top_of, totals_of = LAYOUT[options.kind]
    return Report(
        options=options,
        columns=[*key, *rows_of],
        rows=[[*k, *sums.values(rows_of)] for k, sums in rows],
        top_columns=[*GROUPINGS["dataset"], *top_of],
        top_rows=[[*k, *sums.values(top_of)] for k, sums in top],
        totals=dict(zip(totals_of, everything.values(totals_of), strict=True)),
        warnings=warnings,
    )


def _roll_up(
    priced: Iterable[tuple[dict[str, Any], Usage, int]], key: tuple[str, ...], denominator: int
) -> dict[tuple[Any, ...], _Sums]:
    groups: dict[tuple[Any, ...], _Sums] = {}
    for record, usage, cost in priced:
        group = tuple(record[k] for k in key)
        sums = groups.get(group)
        if sums is None:
            sums = groups[group] = _Sums(denominator)
        sums.add(record, usage, cost)
    return groups


def _rank(groups: dict[tuple[Any, ...], _Sums]) -> list[tuple[tuple[Any, ...], _Sums]]:
    """Most expensive first; ties by size, then by name, so output is stable (costs share one
    denominator, so comparing numerators is exact)."""
    return sorted(groups.items(), key=lambda kv: (-kv[1].cost, -kv[1].bytes, kv[0]))


def _records(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row, strict=True)) for row in rows]


def _gib(size: int) -> float:
    return round(size / GB, 3)


def _usd(cost: int, denominator: int) -> float:
    return round(cost / denominator, 4)


def iso(ms: int | None) -> str | None:
    """Epoch milliseconds as UTC ISO 8601 (the reports' and JSON's time format)."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
