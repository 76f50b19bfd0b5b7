"""Column lineage of one dbt model from its compiled SQL, with sqlglot's lineage.

The compiled SQL names its upstream relations as the warehouse does (ephemeral models are
inlined as CTEs, so lineage passes through them); each source column found is mapped back to
the upstream asset's urn through the relation's (database, schema, table), compared without
case, as the SQL may quote or not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError
from sqlglot.lineage import Node, lineage

from lineagegraph.harvest.dbt.trace import Masks, RelationKey, Sources, relation_key, trace_masked

__all__ = [
    "ColumnLineageError",
    "Masks",
    "RelationKey",
    "column_lineage",
    "column_sources",
    "relation_key",
]


class ColumnLineageError(ValueError):
    """SQL that sqlglot cannot read or trace; the model keeps its table-level lineage."""


def column_sources(
    sql: str,
    dialect: str | None,
    upstream: Mapping[RelationKey, Sequence[str]],
    *,
    fast: bool = True,
) -> Sources:
    """Each output column of `sql` and the upstream (relation, column) pairs it is made from.

    `upstream` gives the columns of each relation the SQL reads, so `select *` and unqualified
    names resolve. The fast path (lineagegraph.harvest.dbt.trace) reads common SELECTs; others
    (or all, without `fast`) go through sqlglot's lineage.
    """
    return column_lineage(sql, dialect, upstream, frozenset(), fast=fast)[0]


def column_lineage(
    sql: str,
    dialect: str | None,
    upstream: Mapping[RelationKey, Sequence[str]],
    masking: frozenset[str],
    *,
    fast: bool = True,
) -> tuple[Sources, Masks]:
    """`column_sources`, and the sources that reach each column only through a function in
    `masking` (upper-case names). Only the fast path sees masking: SQL it leaves to sqlglot's
    lineage (set operations, table functions) gets plain feeds, so classifications travel on."""
    try:
        tree = parse_one(sql, dialect=dialect)
    except (SqlglotError, RecursionError, ValueError) as exc:
        raise ColumnLineageError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
    if fast:
        found = trace_masked(tree, upstream, masking)
        if found is not None:
            return found
    schema: dict[str, dict[str, dict[str, dict[str, str]]]] = {}
    for key, columns in upstream.items():
        if len(key) == 3:
            schema.setdefault(key[0], {}).setdefault(key[1], {})[key[2]] = dict.fromkeys(
                (c.lower() for c in columns), "text"
            )
    try:
        nodes = lineage(None, tree, schema, dialect=dialect, copy=False)
    except (SqlglotError, RecursionError, ValueError, KeyError) as exc:
        raise ColumnLineageError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
    assert isinstance(nodes, dict)
    return {column: _leaves(node) for column, node in nodes.items()}, {}


def _leaves(node: Node) -> list[tuple[RelationKey, str]]:
    found: list[tuple[RelationKey, str]] = []
    for step in node.walk():
        if step.downstream or not isinstance(step.source, exp.Table):
            continue
        table = step.source
        key = relation_key(table.catalog, table.db, table.name)
        pair = (key, step.name.rpartition(".")[2])
        if pair not in found:
            found.append(pair)
    return found
