"""Which source columns reach a written column only through masking functions, read from the
query text: ACCESS_HISTORY's `directSources` name the columns but not the functions between.

The SELECT of a `CREATE TABLE ... AS SELECT` or an `INSERT INTO t [(columns)] SELECT` is traced
with the dbt harvester's fast path (lineagegraph.harvest.dbt.trace: through CTEs and
subqueries). Anything else (MERGE, UPDATE, set operations, an INSERT without a column list into
a `SELECT *`) gives no masks: its feeds stay plain, so classifications travel on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from lineagegraph.harvest.dbt.trace import RelationKey, relation_key, trace_masked
from lineagegraph.identity import IdentityError, parse_snowflake_name
from lineagegraph.masking import either

# written column (lower case) -> (source table's name, source column), both lower case -> fns
Masks = dict[str, dict[tuple[str, str], tuple[str, ...]]]


def table_name(object_name: str) -> str:
    """The last part of a table named by Snowflake's metadata, lower-cased, as the SQL may
    name it unqualified; '' for a name that does not parse."""
    try:
        return parse_snowflake_name(object_name, from_metadata=True)[-1].lower()
    except IdentityError:
        return ""


def query_masks(
    text: str, masking: frozenset[str], read: Mapping[str, Sequence[str]] | None = None
) -> Masks:
    """The masked sources of each column a query writes; `read` gives the columns of each table
    it reads (by metadata name), so `*` and unqualified names across a join resolve."""
    try:
        tree = parse_one(text, dialect="snowflake")
    except (SqlglotError, RecursionError, ValueError):
        return {}
    select = _select(tree)
    if select is None:
        return {}
    found = trace_masked(select, _upstream(read or {}), masking)
    if found is None:
        return {}
    sources, masks = found
    out: Masks = {}
    for name, pairs in sources.items():
        mine = out.setdefault(name.lower(), {})
        for key, column in pairs:
            fns = masks.get(name, {}).get((key, column), ())
            pair = (key[-1], column)  # one table read under two names is one source
            mine[pair] = either(mine[pair], fns) if pair in mine else fns
    return {t: {p: f for p, f in pairs.items() if f} for t, pairs in out.items()}


def _select(tree: exp.Expr) -> exp.Select | None:
    """The SELECT whose outputs are written, its projections named as the columns they write:
    an INSERT's column list names them by position (unnamed `MD5(x)` included)."""
    if isinstance(tree, exp.Create) and isinstance(tree.expression, exp.Select):
        return tree.expression
    if not isinstance(tree, exp.Insert) or not isinstance(tree.expression, exp.Select):
        return None
    select = tree.expression
    if not isinstance(tree.this, exp.Schema):
        return select  # its own names: right only when they match the table's, else no masks
    targets = [c.name for c in tree.this.expressions]
    projections = select.expressions
    if len(targets) != len(projections) or any(p.find(exp.Star) for p in projections):
        return None
    named = select.copy()
    named.set(
        "expressions",
        [
            exp.alias_(p.this if isinstance(p, exp.Alias) else p.copy(), t, quoted=True)
            for p, t in zip(projections, targets, strict=True)
        ],
    )
    return named


def _upstream(read: Mapping[str, Sequence[str]]) -> dict[RelationKey, Sequence[str]]:
    """Each table read under every name the SQL may give it: NAME, SCHEMA.NAME, DB.SCHEMA.NAME."""
    found: dict[RelationKey, Sequence[str]] = {}
    for name, columns in read.items():
        try:
            parts = parse_snowflake_name(name, from_metadata=True)
        except IdentityError:
            continue
        for start in range(len(parts)):
            found[relation_key(*([None] * (3 - len(parts[start:]))), *parts[start:])] = columns
    return found
