"""Snowflake tags: ACCOUNT_USAGE.TAG_REFERENCES read with each harvest (fakesnow's server behind
the real connector), written as classification facts on the urns ACCESS_HISTORY gives, and a
tag unset in Snowflake withdrawn at the next harvest."""

from __future__ import annotations

from typing import Any

from snowflake_fixtures import (
    ACCOUNT,
    HOUR,
    NOW,
    AccountUsage,
    Query,
    accessed,
    dump_graph,
    masked_by_policy,
    modified,
    snowflake_settings,
    urn,
)

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.snowflake.harvester import SnowflakeReport, connect, harvest, summary
from lineagegraph.identity import snowflake_urn
from lineagegraph.questions.tags import derive_all
from lineagegraph.tags_settings import TagSettings

CUSTOMERS, HASHED = "RAW.PUBLIC.CUSTOMERS", "ANALYTICS.CORE.HASHED"
CONTACTS = "ANALYTICS.CORE.CONTACTS"
KUNDEN = "RAW.PUBLIC.Kunden Ä"  # never queried, a space and a non-ASCII letter in its name
PII, LEVEL = "GOV.TAGS.PII", "GOV.TAGS.CONFIDENTIALITY"


def run(store: GraphStore, server: dict[str, Any], now: int, **cfg: Any) -> SnowflakeReport:
    settings = snowflake_settings(server, **cfg)
    connection = connect(settings.snowflake)
    try:
        return harvest(store, settings, connection, now=now)
    finally:
        connection.close()


def tags(store: GraphStore) -> list[list[Any]]:
    return store.execute(
        "MATCH (g:Tag)-[:TAGS]->(t) RETURN t.urn, labels(t)[0], g.key, g.value, g.source,"
        " g.reason, g.at, g.removed_at ORDER BY t.urn, g.key",
        write=False,
    ).rows


def scenario(au: AccountUsage) -> None:
    au.add(
        Query(
            "q1",
            NOW - 5 * HOUR,
            direct=[accessed(CUSTOMERS, "EMAIL")],
            modified=[modified(HASHED, {"EMAIL_HASH": [(CUSTOMERS, "EMAIL")]})],
            text="create or replace table analytics.core.hashed as"
            " select sha2(lower(email), 256) as email_hash from raw.public.customers",
            query_type="CREATE_TABLE_AS_SELECT",
        ),
        Query(
            "q2",
            NOW - 4 * HOUR,
            direct=[accessed(CUSTOMERS, "EMAIL", "ID")],
            modified=[
                modified(
                    CONTACTS,
                    {
                        "EMAIL": [(CUSTOMERS, "EMAIL")],
                        "MAILS": [(CUSTOMERS, "EMAIL")],
                        "KEY": [(CUSTOMERS, "ID"), (CUSTOMERS, "EMAIL")],
                    },
                )
            ],
            text="insert into analytics.core.contacts (email, mails, key)"
            " select c.email, count(distinct c.email), c.id || md5(c.email)"
            " from customers as c group by c.email, c.id",
            query_type="INSERT",
        ),
    )
    au.set_tag(PII, "email", CUSTOMERS, "EMAIL")
    au.set_tag(LEVEL, "restricted", CUSTOMERS)
    au.set_tag(PII, "", KUNDEN, "E-Mail ✉", apply_method="CLASSIFIED")
    au.set_tag(LEVEL, "internal", "RAW.PUBLIC.GONE", deleted_at=NOW - HOUR)
    au.set_tag(LEVEL, "internal", "RAW.PUBLIC.CUSTOMERS", domain="DATABASE")  # not an asset


def test_table_and_column_tags_land_on_the_harvested_urns(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    scenario(account_usage)
    report = run(store, fakesnow_server, NOW)
    # the urn ACCESS_HISTORY's objectName for it gives
    kunden = snowflake_urn(ACCOUNT, 'RAW.PUBLIC."Kunden Ä"', from_metadata=True)
    assert tags(store) == [
        [
            urn(CUSTOMERS),
            "Asset",
            "confidentiality",
            "restricted",
            "snowflake",
            f"Snowflake tag {LEVEL}, manual",
            NOW,
            None,
        ],
        [
            urn(CUSTOMERS) + "#EMAIL",
            "Column",
            "pii",
            "email",
            "snowflake",
            f"Snowflake tag {PII}, manual",
            NOW,
            None,
        ],
        [
            kunden + "#E-Mail ✉",
            "Column",
            "pii",
            None,
            "snowflake",
            f"Snowflake tag {PII}, classified",
            NOW,
            None,
        ],
    ]
    # the tagged column is the one ACCESS_HISTORY feeds from
    feeds = store.execute(
        "MATCH (a:Column)-[:FEEDS]->(b:Column {urn: $b}) RETURN a.urn",
        {"b": urn(HASHED) + "#EMAIL_HASH"},
        write=False,
    ).rows
    assert feeds == [[urn(CUSTOMERS) + "#EMAIL"]]
    assert (report.counts["tags"], report.counts["tags_stated"]) == (3, 3)
    assert report.counts["tags_on_other_objects"] == 1
    assert report.counts["tags_removed"] == 0
    assert "3 tags (3 new or changed, 0 unset)" in summary(report)


def test_a_rerun_writes_nothing_and_an_unset_tag_is_withdrawn(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    scenario(account_usage)
    run(store, fakesnow_server, NOW)
    before = dump_graph(store)
    again = run(store, fakesnow_server, NOW + HOUR)
    assert (again.counts["tags"], again.counts["tags_stated"], again.counts["tags_removed"]) == (
        3,
        0,
        0,
    )
    assert dump_graph(store)[0] == before[0]  # no tag node moved

    account_usage.unset_tag(PII, CUSTOMERS, "EMAIL")
    account_usage.unset_tag(LEVEL, CUSTOMERS)
    account_usage.set_tag(LEVEL, "confidential", CUSTOMERS)
    later = run(store, fakesnow_server, NOW + 2 * HOUR)
    assert (later.counts["tags_stated"], later.counts["tags_removed"]) == (1, 1)
    by_target = {(row[0], row[2]): row for row in tags(store)}
    email = by_target[(urn(CUSTOMERS) + "#EMAIL", "pii")]
    assert (email[3], email[6], email[7]) == ("email", NOW + 2 * HOUR, NOW + 2 * HOUR)
    level = by_target[(urn(CUSTOMERS), "confidentiality")]
    assert (level[3], level[6], level[7]) == ("confidential", NOW + 2 * HOUR, None)

    account_usage.set_tag(PII, "email", CUSTOMERS, "EMAIL")  # set again: stated again
    run(store, fakesnow_server, NOW + 3 * HOUR)
    email = {(row[0], row[2]): row for row in tags(store)}[(urn(CUSTOMERS) + "#EMAIL", "pii")]
    assert (email[6], email[7]) == (NOW + 3 * HOUR, None)


def test_qualified_keys_tell_namesakes_apart(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    account_usage.set_tag(PII, "email", CUSTOMERS, "EMAIL")
    account_usage.set_tag("HR.TAGS.PII", "hr", CUSTOMERS, "EMAIL")
    plain = run(store, fakesnow_server, NOW)
    assert plain.counts["tags_clashing"] == 1
    assert [row[3] for row in tags(store)] == ["email"]  # the first by tag database: GOV
    store.execute("MATCH (g:Tag) DETACH DELETE g", write=True)
    run(store, fakesnow_server, NOW + HOUR, tag_key="qualified")
    assert [(row[2], row[3]) for row in tags(store)] == [
        ("GOV.TAGS.PII", "email"),
        ("HR.TAGS.PII", "hr"),
    ]


def test_a_role_without_tag_references_gets_a_warning_and_the_lineage(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    account_usage.reset(views=["ACCESS_HISTORY", "QUERY_HISTORY", "OBJECT_DEPENDENCIES"])
    scenario_without_tags = Query("q", NOW - HOUR, direct=[accessed(CUSTOMERS, "EMAIL")])
    account_usage.add(scenario_without_tags)
    report = run(store, fakesnow_server, NOW)
    assert report.status == "success"
    assert any("TAG_REFERENCES" in w and "snowflake.tags = false" in w for w in report.warnings)
    quiet = run(store, fakesnow_server, NOW + HOUR, tags=False)
    assert not any("TAG_REFERENCES" in w for w in quiet.warnings)
    assert tags(store) == []


def test_hashed_and_counted_columns_are_masked_and_a_copy_is_plain(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    """ACCESS_HISTORY names the sources; the functions between come from the query text."""
    scenario(account_usage)
    report = run(store, fakesnow_server, NOW)
    feeds = store.execute(
        "MATCH (a:Column)-[e:FEEDS]->(b:Column) RETURN a.urn, b.urn, e.masked_by, e.plain"
        " ORDER BY b.urn, a.urn",
        write=False,
    ).rows
    email, key = urn(CUSTOMERS) + "#EMAIL", urn(CUSTOMERS) + "#ID"
    assert feeds == [
        [email, urn(CONTACTS) + "#EMAIL", [], True],
        [email, urn(CONTACTS) + "#KEY", ["MD5"], False],
        [key, urn(CONTACTS) + "#KEY", [], True],
        [email, urn(CONTACTS) + "#MAILS", ["COUNT"], False],
        [email, urn(HASHED) + "#EMAIL_HASH", ["SHA2"], False],
    ]
    assert report.counts["column_pairs_masked"] == 3


def test_a_column_read_through_a_masking_policy_is_masked_unless_the_policy_unmasks(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    """policies_referenced (a masking policy nested under the column it protects, as
    documented) masks a plain copy: the pii tag stops there, with the policy as its reason.
    A policy settings list as unmasking (the harvested role sees the value) leaves it plain."""
    policy = "GOV.POLICIES.EMAIL_MASK"
    account_usage.add(
        Query(
            "q3",
            NOW - 3 * HOUR,
            direct=[accessed(CUSTOMERS, "EMAIL")],
            modified=[modified(CONTACTS, {"EMAIL": [(CUSTOMERS, "EMAIL")]})],
            text="insert into analytics.core.contacts (email)"
            " select email from raw.public.customers",
            query_type="INSERT",
            policies=[
                masked_by_policy(CUSTOMERS, {"EMAIL": policy}),
                {  # a row access policy on the object masks no column
                    "objectDomain": "Table",
                    "objectName": CUSTOMERS,
                    "objectId": 1,
                    "policies": [
                        {"policyName": "GOV.POLICIES.RAP", "policyKind": "ROW_ACCESS_POLICY"}
                    ],
                },
            ],
        )
    )
    account_usage.set_tag(PII, "email", CUSTOMERS, "EMAIL")
    query = "MATCH (:Column)-[e:FEEDS]->(:Column) RETURN e.masked_by, e.plain"
    run(store, fakesnow_server, NOW)
    assert store.execute(query, write=False).rows == [[[f"masking policy {policy}"], False]]
    found = derive_all(store, TagSettings())
    assert [(s.dst, s.reason) for s in found.stops()] == [
        (urn(CONTACTS) + "#EMAIL", f"masked by masking policy {policy}")
    ]
    assert found.derived(found.piece.index[urn(CONTACTS) + "#EMAIL"]) == []

    store.execute("MATCH (n) DETACH DELETE n", write=True)
    run(store, fakesnow_server, NOW, unmasking_policies=[policy.lower()])
    assert store.execute(query, write=False).rows == [[[], True]]
    found = derive_all(store, TagSettings())
    [copied] = found.derived(found.piece.index[urn(CONTACTS) + "#EMAIL"])
    assert copied.tag == "pii=email"
