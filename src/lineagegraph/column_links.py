"""Column lineage as links, and the graph values they make: shared by the Spark agent
(lineagegraph.spark) and the OpenLineage harvester (its columnLineage facet), below both.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from lineagegraph import identity
from lineagegraph.model import Column, ColumnFeed, Item


@dataclass(frozen=True)
class ColumnLink:
    """Column `source_column` of the input `source` feeds the output's column `column`."""

    source: str  # the input's urn
    source_column: str
    column: str  # the output's column
    masked_by: tuple[str, ...] = ()  # the masking functions between them (lineagegraph.masking)


def column_items(
    output: str, columns: Iterable[str], links: Iterable[ColumnLink], at: int, via: str | None
) -> Iterator[Item]:
    """Columns of the output and of the sources that feed them, and the FEEDS between them.

    A column whose name cannot be part of a urn (it contains '#') is left out.
    """
    made: set[str] = set()

    def column(asset: str, name: str) -> str | None:
        try:
            urn = identity.column_urn(asset, name)
        except identity.IdentityError:
            return None
        if urn not in made:
            made.add(urn)
            columns_out.append(Column(urn, asset, name, at))
        return urn

    columns_out: list[Column] = []
    feeds: list[ColumnFeed] = []
    for name in columns:
        column(output, name)
    for link in links:
        src, dst = column(link.source, link.source_column), column(output, link.column)
        if src and dst:
            feeds.append(ColumnFeed(src, dst, at, via, link.masked_by))
    yield from columns_out
    yield from feeds
