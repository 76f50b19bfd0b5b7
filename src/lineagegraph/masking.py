"""Functions whose result carries no identity: a column computed only through one of them
(`SHA2(email)`, `COUNT(email)`) is masked, and classifications stop there
(docs/lineage.md#masked-column-lineage).

One list for every source: SQL (dbt's compiled SQL, Snowflake query text, read with sqlglot),
Spark's plan expressions and OpenLineage's column lineage facet all name functions, and each
harvester asks `MaskingSettings.names` whether a name masks. Configurable in `[masking]`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, field_validator

from lineagegraph.settings_base import Section

if TYPE_CHECKING:  # sqlglot is imported by the SQL readers that call these, not by every command
    from sqlglot import exp

# Hashes (Snowflake and Spark spellings; sqlglot reads SHA2_HEX as SHA2 and SHA1 as SHA) and the
# aggregates whose result says how many, never who.
DEFAULT_FUNCTIONS = (
    "SHA2",
    "SHA2_HEX",
    "SHA2_BINARY",
    "SHA1",
    "SHA1_HEX",
    "SHA1_BINARY",
    "SHA",
    "MD5",
    "MD5_HEX",
    "MD5_BINARY",
    "MD5_NUMBER_LOWER64",
    "MD5_NUMBER_UPPER64",
    "HASH",
    "HASH_AGG",
    "XXHASH64",
    "MURMUR3HASH",
    "CRC32",
    "COUNT",
    "COUNT_IF",
    "APPROX_COUNT_DISTINCT",
    "APPROX_DISTINCT",
    "HLL",
)

DEFAULT_NAMES = frozenset(DEFAULT_FUNCTIONS)


class MaskingSettings(Section):
    """Which functions mask the columns they compute."""

    functions: list[str] = Field(
        default_factory=lambda: list(DEFAULT_FUNCTIONS),
        description="Functions whose result carries no identity (hashes, COUNT), in any case; "
        "a column computed only through one of them does not inherit classifications. Name "
        "your masking UDFs here too.",
    )

    @field_validator("functions")
    @classmethod
    def _names(cls, functions: list[str]) -> list[str]:
        bad = [f for f in functions if not f.strip()]
        if bad:
            raise ValueError("an empty function name")
        return functions

    @property
    def names(self) -> frozenset[str]:
        return frozenset(f.strip().upper() for f in self.functions)


def function_names(node: exp.Expr) -> list[str]:
    """The names SQL may spell a sqlglot function node with (SHA and SHA1 are one node)."""
    from sqlglot import exp

    if isinstance(node, exp.Anonymous):
        return [str(node.name).upper()]
    names = [n.upper() for n in getattr(type(node), "_sql_names", None) or []]
    return names or [node.sql_name().upper()]


def masking_between(ref: exp.Expr, top: exp.Expr, masking: frozenset[str]) -> tuple[str, ...]:
    """The masking functions `ref` sits inside, up to and including `top` (its projection):
    outermost last, each once."""
    from sqlglot import exp

    found: list[str] = []
    node = ref
    while node is not top and node.parent is not None:
        node = node.parent
        if isinstance(node, exp.Func):
            hit = next((n for n in function_names(node) if n in masking), None)
            if hit is not None and hit not in found:
                found.append(hit)
    return tuple(found)


def along(outer: tuple[str, ...], inner: tuple[str, ...]) -> tuple[str, ...]:
    """The masking functions on a path: what an inner step applied, then the outer ones."""
    return tuple(dict.fromkeys((*inner, *outer)))


def either(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    """Two ways one source reaches a column: masked only if both are; plain (`()`) wins."""
    return along(a, b) if a and b else ()
