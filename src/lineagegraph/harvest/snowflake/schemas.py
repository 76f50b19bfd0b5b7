"""ACCOUNT_USAGE.COLUMNS as schema versions (lineagegraph.schemas, source snowflake).

The view has a row per column and no time of its own but `DELETED`: a dropped column keeps its
row with the time it was dropped. So a drop is dated exactly (the schema just before it, with
the column, and at it, without), while a column added or retyped is seen, and dated, by the
first harvest after it (the schema as it stands, at the harvest's time). A table dropped whole
has no schema after its drop: the drop is the table's own fact (deleted_at), not a change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby
from typing import Any

from lineagegraph.harvest.snowflake.access_history import SYSTEM
from lineagegraph.identity import IdentityError, snowflake_urn_from_parts
from lineagegraph.schemas import Fields, SchemaSeen


def column_type(row: Sequence[Any]) -> str:
    """DATA_TYPE with its length, or precision and scale: TEXT(16), NUMBER(38,0)."""
    kind, length, precision, scale = row[4], row[5], row[6], row[7]
    if precision is not None:
        return f"{kind}({int(precision)},{int(scale or 0)})"
    if length is not None:
        return f"{kind}({int(length)})"
    return str(kind)


def schema_sightings(
    rows: Iterable[Sequence[Any]], account: str, now: int, problems: list[str]
) -> Iterator[SchemaSeen]:
    """The schemas the COLUMNS rows (ordered by table, as queries.COLUMNS orders them) tell:
    each table's just before and at each drop, and as it stands at `now`."""
    for (database, schema, table), grouped in groupby(rows, key=lambda r: (r[0], r[1], r[2])):
        try:
            urn = snowflake_urn_from_parts(account, database, schema, table)
        except IdentityError as exc:
            problems.append(f"{database}.{schema}.{table}: columns skipped: {exc}")
            continue
        columns = [(str(r[3]), column_type(r), _ms(r[8])) for r in grouped]
        for at in sorted({gone for *_, gone in columns if gone is not None}):
            yield SchemaSeen(urn, SYSTEM, at - 1, _present(columns, at - 1))
            after = _present(columns, at)
            if after:
                yield SchemaSeen(urn, SYSTEM, at, after)
        standing = _present(columns, None)
        if standing:
            yield SchemaSeen(urn, SYSTEM, now, standing)


def _ms(value: Any) -> int | None:
    return None if value is None else int(value)


def _present(columns: list[tuple[str, str, int | None]], at: int | None) -> Fields:
    """The columns not dropped by `at` (None: now), once per name (a column dropped and added
    again has two rows: the later one, listed after it, wins)."""
    kept = {n: kind for n, kind, gone in columns if gone is None or (at is not None and gone > at)}
    return tuple(kept.items())
