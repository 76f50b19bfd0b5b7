"""The order of a report's rows: by cost, or oldest first (`--sort oldest`), stable on ties."""

from __future__ import annotations

from itertools import chain
from typing import Any

from lineagegraph.reports.tally import Sums


def rank(
    groups: dict[tuple[Any, ...], Sums], sort: str = "cost"
) -> list[tuple[tuple[Any, ...], Sums]]:
    """Most expensive first (`sort` "oldest": oldest last-modified first, rows with no date
    last, then as by cost); ties by size, then by name, so output is stable (costs share one
    denominator, so comparing numerators is exact); on a tie, a row with no object (a
    roll-up's) last."""
    names = _missing_last if None in chain.from_iterable(groups) else tuple

    def by_cost(kv: tuple[tuple[Any, ...], Sums]) -> tuple[Any, ...]:
        return -kv[1].cost, -kv[1].bytes, names(kv[0])

    def by_age(kv: tuple[tuple[Any, ...], Sums]) -> tuple[Any, ...]:
        return kv[1].oldest is None, kv[1].oldest or 0, *by_cost(kv)

    return sorted(groups.items(), key=by_age if sort == "oldest" else by_cost)


def _missing_last(key: tuple[Any, ...]) -> list[tuple[bool, Any]]:
    """A key's names in order, a missing name (None) after every name."""
    return [(v is None, v or "") for v in key]
