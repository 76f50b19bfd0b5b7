"""A fast path for the common shape of dbt SQL: SELECTs over tables, CTEs and subqueries.

sqlglot's `lineage` qualifies the whole query and walks a graph per output column, too slow
for a dbt project of thousands of models (figures: docs/benchmarks.md). This module
reads the parsed tree directly: each projection's column references, resolved through table
aliases, CTEs and subqueries, down to the relations read. Anything it does not handle exactly
(set operations, table functions, scalar subqueries, a column it cannot place) returns None,
and the caller uses sqlglot's lineage instead; the tests check both agree.

It also says which sources reach a column only through masking functions (lineagegraph.masking:
`SHA2(email)`, `COUNT(id)`), following them through CTEs and subqueries.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from sqlglot import exp

from lineagegraph.masking import along, either, masking_between

RelationKey = tuple[str, ...]
Pairs = list[tuple[RelationKey, str]]
Sources = dict[str, Pairs]  # output column -> the (relation, column) pairs it is made from
# output column -> each masked source pair -> the masking functions on its way (outermost last)
Masks = dict[str, dict[tuple[RelationKey, str], tuple[str, ...]]]
# output column -> {(relation, column): masking functions on the way, () for a plain copy}
_Traced = dict[str, dict[tuple[RelationKey, str], tuple[str, ...]]]
# FROM and JOIN items by lower-cased alias: a table's key (a tuple), or a derived table's
# outputs (a dict, lower-cased names).
_Scope = dict[str, RelationKey | _Traced]


class _Unsupported(Exception):
    """A shape the fast path leaves to sqlglot's lineage."""


def relation_key(database: str | None, schema: str | None, table: str) -> RelationKey:
    """A relation's lower-cased (database, schema, table), the way SQL may name it."""
    return tuple(p.lower() for p in (database, schema, table) if p)


def trace(tree: exp.Expr, upstream: Mapping[RelationKey, Sequence[str]]) -> Sources | None:
    """Each output column of a parsed query and the relation columns it is made from; None
    when the query has a shape this fast path does not read."""
    found = trace_masked(tree, upstream, frozenset())
    return None if found is None else found[0]


def trace_masked(
    tree: exp.Expr, upstream: Mapping[RelationKey, Sequence[str]], masking: frozenset[str]
) -> tuple[Sources, Masks] | None:
    """`trace`, and for each output column the sources that reach it only through functions
    named in `masking` (upper case), with those functions."""
    try:
        traced = _Tracer(upstream, masking).select(tree, {})
    except _Unsupported:
        return None
    sources = {name: list(pairs) for name, pairs in traced.items()}
    masks = {
        name: {pair: fns for pair, fns in pairs.items() if fns} for name, pairs in traced.items()
    }
    return sources, {name: found for name, found in masks.items() if found}


class _Tracer:
    def __init__(
        self, upstream: Mapping[RelationKey, Sequence[str]], masking: frozenset[str]
    ) -> None:
        self.upstream = {key: [c.lower() for c in cols] for key, cols in upstream.items()}
        self.masking = masking
        self._done: dict[int, _Traced] = {}  # a CTE's outputs, traced once

    def select(self, node: exp.Expr, ctes: dict[str, exp.Expr]) -> _Traced:
        if not isinstance(node, exp.Select):
            raise _Unsupported(type(node).__name__)
        known = id(node)
        if known in self._done:
            return self._done[known]
        scope = dict(ctes)
        for cte in (node.args.get("with_") or exp.With(expressions=[])).expressions:
            scope[cte.alias_or_name.lower()] = cte.this
        sources = self._sources(node, scope)
        out: _Traced = {}
        for projection in node.expressions:
            for name, pairs in self._projection(projection, sources):
                out[name] = pairs
        self._done[known] = out
        return out

    def _sources(self, node: exp.Select, scope: dict[str, exp.Expr]) -> _Scope:
        """FROM and JOIN relations by alias: a table (its key) or a derived one (its outputs)."""
        found: _Scope = {}
        items = [node.args.get("from_"), *(node.args.get("joins") or [])]
        for item in items:
            if item is None:
                continue
            source = item.this
            alias = source.alias_or_name.lower()
            nested = ("joins", "laterals", "pivots")
            if any(source.args.get(k) for k in nested):
                raise _Unsupported("nested joins, LATERAL or PIVOT")
            if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
                cte = scope.get(source.name.lower()) if not source.db else None
                if cte is not None:
                    found[alias] = _lowered(self.select(cte, scope))
                else:
                    found[alias] = relation_key(source.catalog, source.db, source.name)
            elif isinstance(source, exp.Subquery):
                found[alias] = _lowered(self.select(source.this, scope))
            else:
                raise _Unsupported(type(source).__name__)
        if not found or any(node.args.get(k) for k in ("laterals", "pivots", "exclude")):
            raise _Unsupported("no FROM, or LATERAL, PIVOT or EXCLUDE")
        return found

    def _projection(
        self, projection: exp.Expr, sources: _Scope
    ) -> Iterator[tuple[str, dict[tuple[RelationKey, str], tuple[str, ...]]]]:
        star: exp.Expr | None = projection if isinstance(projection, exp.Star) else None
        if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
            star = projection
        if star is not None:
            inner = star.this if isinstance(star, exp.Column) else star
            if any(inner.args.get(k) for k in ("except_", "replace", "rename", "ilike")):
                raise _Unsupported("star modifiers")
            chosen = [star.table.lower()] if isinstance(star, exp.Column) else list(sources)
            for alias in chosen:
                for column in self._columns_of(sources, alias):
                    yield column, self._resolve(alias, column, sources)
            return
        name = projection.alias_or_name
        if not name or projection.find(exp.Subquery, exp.Select):
            raise _Unsupported("an unnamed projection or a subquery in it")
        pairs: dict[tuple[RelationKey, str], tuple[str, ...]] = {}
        for ref in projection.find_all(exp.Column):
            alias = ref.table.lower() if ref.table else self._owner(ref.name, sources)
            outer = masking_between(ref, projection, self.masking) if self.masking else ()
            for pair, inner in self._resolve(alias, ref.name.lower(), sources).items():
                path = along(outer, inner)
                pairs[pair] = either(pairs[pair], path) if pair in pairs else path
        yield name, pairs

    def _columns_of(self, sources: _Scope, alias: str) -> list[str]:
        if alias not in sources:
            raise _Unsupported(f"unknown alias {alias}")
        source = sources[alias]
        if isinstance(source, dict):
            return list(source)
        columns = self.upstream.get(source)
        if not columns:
            raise _Unsupported("* over a relation of unknown columns")
        return columns

    def _owner(self, column: str, sources: _Scope) -> str:
        """The one source an unqualified column can come from."""
        if len(sources) == 1:
            return next(iter(sources))
        owners = [a for a in sources if column.lower() in self._columns_of(sources, a)]
        if len(owners) != 1:
            raise _Unsupported(f"cannot place column {column}")
        return owners[0]

    def _resolve(
        self, alias: str, column: str, sources: _Scope
    ) -> dict[tuple[RelationKey, str], tuple[str, ...]]:
        if alias not in sources:
            raise _Unsupported(f"unknown alias {alias}")
        source = sources[alias]
        if isinstance(source, tuple):
            return {(source, column): ()}
        if column not in source:
            raise _Unsupported(f"{column} is not an output of {alias}")
        return source[column]


def _lowered(outputs: _Traced) -> _Traced:
    return {name.lower(): pairs for name, pairs in outputs.items()}
