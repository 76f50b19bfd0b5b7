"""What an orphan or cost report covers (docs/reports.md): its options, from the CLI's flags,
serve's query parameters or api's arguments, else [reports] settings, else the defaults."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from lineagegraph.settings import ReportSettings
from lineagegraph.values.globs import Glob, exclusion_globs
from lineagegraph.values.pricing import PriceTable, default_price_table, load_prices

DAY_MS = 86_400_000
Kind = Literal["orphans", "cost", "recommend"]
"""`recommend` tallies as the cost report does, but only the datasets nothing consumed."""
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
