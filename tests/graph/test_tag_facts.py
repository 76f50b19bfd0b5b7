"""Classification facts and masked column lineage as the writer stores them: a tag stated by a
source is one node per (source, key, target), the newest statement wins in any order, a removal
is kept as a time, and a FEEDS edge remembers whether any sighting copied the value plainly."""

from __future__ import annotations

import itertools

import pytest

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Column, ColumnFeed, Item, TagFact

T0 = 1_700_000_000_000
TABLE = Asset("snowflake://acme/DB.S. Kunden\t", "Table", "snowflake", " Kunden\t", T0)
EMAIL = Column(f"{TABLE.urn}#E-Mail ✉", TABLE.urn, "E-Mail ✉", T0)
HASHED = Asset("snowflake://acme/DB.S.HASHED", "Table", "snowflake", "HASHED", T0)
HASHED_EMAIL = Column(f"{HASHED.urn}#EMAIL", HASHED.urn, "EMAIL", T0)


def write(store: GraphStore, items: list[Item]) -> GraphWriter:
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.finish()
    return writer


def tags(store: GraphStore) -> list[list[object]]:
    return store.execute(
        "MATCH (g:Tag)-[:TAGS]->(t) RETURN t.urn, g.source, g.key, g.value, g.by, g.reason,"
        " g.at, g.first_seen, g.removed_at ORDER BY g.source, g.key",
        write=False,
    ).rows


def fact(at: int, value: str | None, *, by: str = "ana", removed: bool = False) -> TagFact:
    return TagFact(EMAIL.urn, "pii", value, "manual", by, at, f"reason at {at}", removed)


def test_a_tag_written_before_its_column_lands_once_on_it(store: GraphStore) -> None:
    writer = write(store, [fact(T0, "email"), EMAIL, TABLE])
    assert writer.counts["merge_tags"] == 1
    assert not [k for k in writer.counts if k.startswith("dropped_")]
    assert tags(store) == [
        [EMAIL.urn, "manual", "pii", "email", "ana", f"reason at {T0}", T0, T0, None]
    ]


def test_a_tag_on_nothing_is_counted_as_dropped(store: GraphStore) -> None:
    writer = write(store, [TagFact("snowflake://acme/DB.S.NONE", "pii", None, "manual", "a", T0)])
    assert writer.counts["dropped_tags"] == 1
    assert "tags not written: 1" in writer.warnings()[0]
    assert tags(store) == []


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_the_newest_statement_wins_in_any_order(store: GraphStore, order: tuple[int, ...]) -> None:
    statements = [
        fact(T0, "email", by="ana"),
        fact(T0 + 10, None, by="bo", removed=True),
        fact(T0 + 20, "contact", by="cy"),
    ]
    write(store, [TABLE, EMAIL])
    for i in order:  # one statement per run, as separate harvests would send them
        write(store, [statements[i]])
    newest = [EMAIL.urn, "manual", "pii", "contact", "cy", f"reason at {T0 + 20}", T0 + 20, T0]
    assert tags(store) == [[*newest, None]]


def test_a_newer_removal_is_kept_as_a_time_and_a_replay_changes_nothing(
    store: GraphStore,
) -> None:
    write(store, [TABLE, EMAIL, fact(T0, "email")])
    write(store, [fact(T0 + 5, "email", by="bo", removed=True)])
    removed = tags(store)
    assert removed[0][8] == T0 + 5
    write(store, [fact(T0, "email"), fact(T0 + 5, "email", by="bo", removed=True)])
    assert tags(store) == removed


def test_sources_state_the_same_key_apart(store: GraphStore) -> None:
    snowflake = TagFact(EMAIL.urn, "pii", "email", "snowflake", "query 01a", T0)
    write(store, [TABLE, EMAIL, fact(T0, "contact"), snowflake])
    assert [(row[1], row[3]) for row in tags(store)] == [
        ("manual", "contact"),
        ("snowflake", "email"),
    ]


def test_feeds_remember_masking_and_any_plain_copy(store: GraphStore) -> None:
    def feed() -> list[object]:
        rows = store.execute(
            "MATCH (:Column)-[e:FEEDS]->(:Column) RETURN e.masked_by, e.plain", write=False
        ).rows
        assert len(rows) == 1
        return rows[0]

    base = [TABLE, EMAIL, HASHED, HASHED_EMAIL]
    write(store, [*base, ColumnFeed(EMAIL.urn, HASHED_EMAIL.urn, T0, "q1", ("SHA2",))])
    assert feed() == [["SHA2"], False]
    write(store, [ColumnFeed(EMAIL.urn, HASHED_EMAIL.urn, T0 + 1, "q2", ("MD5", "SHA2"))])
    assert feed() == [["SHA2", "MD5"], False]
    write(store, [ColumnFeed(EMAIL.urn, HASHED_EMAIL.urn, T0 + 2, "q3")])
    assert feed() == [["SHA2", "MD5"], True]
    write(store, [ColumnFeed(EMAIL.urn, HASHED_EMAIL.urn, T0 + 3, "q1", ("SHA2",))])
    assert feed() == [["SHA2", "MD5"], True]  # once copied plainly, a feed carries identity
