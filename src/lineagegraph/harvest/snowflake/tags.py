"""ACCOUNT_USAGE.TAG_REFERENCES to classification facts (docs/snowflake.md#tags).

Snowflake keeps no time of setting or unsetting a tag: an unset tag's row just leaves the view.
So each harvest reads the view whole (one row per tag and object: small), compares it with the
tags the graph holds from Snowflake for this account, and writes only the difference
(harvest/tag_changes.py): a tag no longer listed is withdrawn at the harvest time. Rows of
dropped objects are not read: the object's DROP (ACCESS_HISTORY) is its own fact, and its tags
stay as they were.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.snowflake.access_history import SYSTEM, TABLE_DOMAINS
from lineagegraph.harvest.tag_changes import tag_changes
from lineagegraph.identity import IdentityError, column_urn, name_of, snowflake_urn_from_parts
from lineagegraph.model import Column, TagFact

TagKey = Literal["name", "qualified"]
_COLUMN_DOMAIN = "column"


@dataclass(frozen=True)
class TagReference:
    """One tag set on a table-like object or a column, with the urns it lands on."""

    table: str
    domain: str  # the table's domain as Snowflake names it (TABLE, VIEW, ...)
    column: str | None  # the column's urn, for a tag on a column
    column_name: str | None
    key: str
    value: str | None
    reason: str


def tag_key(database: str, schema: str, name: str, form: TagKey) -> str:
    """The classification key of a Snowflake tag: its name in lower case (unquoted names are
    stored in upper case, so `PII` matches dbt's and by-hand `pii`), or its qualified name as
    stored (DB.SCHEMA.NAME), which tells apart namesakes in different schemas."""
    return f"{database}.{schema}.{name}" if form == "qualified" else name.lower()


def references(
    rows: Iterable[Sequence[Any]], account: str, form: TagKey, counts: Counter[str]
) -> list[TagReference]:
    """TagReferences of queries.TAG_REFERENCES rows, in their order. Rows on other objects
    (databases, schemas, warehouses) are counted and skipped; a key stated twice on one target
    (namesakes under `name`) keeps the first and counts the others."""
    found: list[TagReference] = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        tag_db, tag_schema, tag_name, value, db, schema, table, column, domain, method = row
        domain = str(domain or "").lower()
        if domain != _COLUMN_DOMAIN and domain not in TABLE_DOMAINS:
            counts["tags_on_other_objects"] += 1
            continue
        try:
            table_urn = snowflake_urn_from_parts(account, db, schema, table)
            target = column_urn(table_urn, column) if domain == _COLUMN_DOMAIN else table_urn
        except IdentityError:
            counts["tags_skipped"] += 1
            continue
        key = tag_key(tag_db, tag_schema, tag_name, form)
        if (target, key) in seen:
            counts["tags_clashing"] += 1
            continue
        seen.add((target, key))
        how = f", {str(method).lower()}" if method else ""
        found.append(
            TagReference(
                table=table_urn,
                domain="Table" if domain == _COLUMN_DOMAIN else domain.capitalize(),
                column=target if domain == _COLUMN_DOMAIN else None,
                column_name=column if domain == _COLUMN_DOMAIN else None,
                key=key,
                value=value or None,  # a tag set to '' states its key alone
                reason=f"Snowflake tag {tag_db}.{tag_schema}.{tag_name}{how}",
            )
        )
    return found


def write_tags(
    found: Sequence[TagReference],
    store: GraphStore,
    writer: GraphWriter,
    account_prefix: str,
    *,
    now: int,
    run_id: str,
    counts: Counter[str],
) -> None:
    """Write what changed since the tags the graph holds from Snowflake under `account_prefix`
    (harvest/tag_changes.py): new or changed tags, with the tables and columns they land on,
    then withdrawals."""
    stated = [
        TagFact(ref.column or ref.table, ref.key, ref.value, SYSTEM, run_id, now, ref.reason)
        for ref in found
    ]
    changed, removed = tag_changes(
        store,
        SYSTEM,
        stated,
        prefix=account_prefix,
        at=now,
        by=run_id,
        gone="no longer in TAG_REFERENCES",
    )
    targets = {fact.target for fact in changed}
    landing = [ref for ref in found if (ref.column or ref.table) in targets]
    # Tables no query touched yet: created when missing, never marked seen (the view lags a
    # DROP by up to hours, and a late tag row must not undelete a table).
    ensure = {
        r.table: {
            "urn": r.table,
            "system": SYSTEM,
            "name": name_of(r.table),
            "seen": now,
            "props": {"domain": r.domain},
        }
        for r in landing
    }
    store.write_batches("snowflake_ensure_tables", ensure.values(), ("urn",))
    for ref in landing:
        if ref.column is not None and ref.column_name is not None:
            writer.add(Column(ref.column, ref.table, ref.column_name, now))
    writer.add_all([*changed, *removed])
    writer.flush()
    counts["tags"] += len(found)
    counts["tags_stated"] += len(changed)
    counts["tags_removed"] += len(removed)
