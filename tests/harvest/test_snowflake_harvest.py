"""`harvest snowflake` end to end: fakesnow's server behind the real connector (HTTP), rows
shaped as Snowflake documents them, the graph on the real store.

What fakesnow cannot do is said where it matters: it has no SHOW EXTERNAL TABLES (the harvest
warns and goes on; the row handling is tested with a documented row), it stores only valid JSON
in VARIANT columns (a VARIANT holding a string stands in for a malformed row), and it accepts
any password (a loopback stub answers the login as Snowflake refuses a bad password).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner
from snowflake_fixtures import (
    ACCOUNT,
    HOUR,
    NOW,
    AccountUsage,
    Query,
    accessed,
    ddl,
    dump_graph,
    modified,
    snowflake_settings,
    stage,
    urn,
)

from lineagegraph.cli import cli
from lineagegraph.errors import ConfigError, HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.snowflake.harvester import (
    SnowflakeReport,
    connect,
    external_table_values,
    harvest,
)
from lineagegraph.harvest.snowflake.stages import StageResolver
from lineagegraph.identity import FoldRules, snowflake_query_transformation_urn
from lineagegraph.model import Asset, Column, ColumnFeed, Flow
from lineagegraph.pipeline import last_watermark, now_ms
from lineagegraph.settings import Settings

DAILY = 'Reporting.Sales."Daily.Revenue"'  # quoted, mixed case, a dot inside


def scenario(au: AccountUsage) -> None:
    """A day of an analytics account: loads from two external stages, CTAS, INSERT into a
    quoted mixed-case table, MERGE (twice), reads through views, unloads, a dropped table,
    a query without objects, and one missing from QUERY_HISTORY."""
    au.create_stage("RAW", "LAND", "PARTNER_FEEDS", "s3://partner-drop/feeds/")
    au.create_stage("RAW", "LAND", "EXPORTS", "s3://lake-exports/big_orders/")
    orders_raw, fx, orders = "RAW.PUBLIC.ORDERS_RAW", "RAW.PUBLIC.FX", "ANALYTICS.CORE.ORDERS"
    customers, delta = "ANALYTICS.CORE.CUSTOMERS", "RAW.PUBLIC.CUSTOMERS_DELTA"
    big = "REPORTS.PUBLIC.BIG_ORDERS"
    au.add(
        Query(
            "q01",
            NOW - 30 * HOUR,
            direct=[stage("RAW.LAND.PARTNER_FEEDS")],
            modified=[modified(orders_raw, {"ID": [], "AMOUNT": []})],
            text="COPY INTO orders_raw FROM @land.partner_feeds/orders/dt=2025-06-01/ "
            "PATTERN = '.*[.]csv' FILE_FORMAT = (TYPE = CSV)",
            query_type="COPY",
            parameterized_hash="p-copy-orders",
        ),
        Query(
            "q02",
            NOW - 29 * HOUR,
            direct=[stage("RAW.LAND.VENDOR")],
            modified=[modified(fx, {"RATE": []})],
            text="copy into raw.public.fx from @raw.land.vendor/fx/",
            query_type="COPY",
        ),
        Query(
            "q03",
            NOW - 28 * HOUR,
            direct=[accessed(orders_raw, "ID", "AMOUNT"), accessed(fx, "RATE")],
            modified=[
                modified(
                    orders,
                    {
                        "ID": [(orders_raw, "ID")],
                        "AMOUNT_EUR": [(orders_raw, "AMOUNT"), (fx, "RATE")],
                    },
                )
            ],
            ddl=ddl(orders, "CREATE"),
            text="create table analytics.core.orders as select ...",
            query_type="CREATE_TABLE_AS_SELECT",
            parameterized_hash="p-ctas",
        ),
        Query(
            "q04",
            NOW - 27 * HOUR,
            direct=[accessed(orders, "AMOUNT_EUR")],
            modified=[modified(DAILY, {"Revenue": [(orders, "AMOUNT_EUR")]})],
            text='insert into "Reporting"."Sales"."Daily.Revenue" select ...',
            query_type="INSERT",
            parameterized_hash="p-daily",
        ),
        Query(
            "q05",
            NOW - 26 * HOUR,
            direct=[accessed(orders_raw, "ID")],
            modified=[modified("ANALYTICS.CORE.TMP", {"ID": [(orders_raw, "ID")]})],
            ddl=ddl("ANALYTICS.CORE.TMP", "CREATE"),
            query_type="CREATE_TABLE_AS_SELECT",
            parameterized_hash="p-tmp",
        ),
        *(
            Query(
                f"q06-{i}",
                NOW - (20 - i) * HOUR,
                direct=[accessed(customers, "EMAIL"), accessed(delta, "EMAIL")],
                modified=[modified(customers, {"EMAIL": [(delta, "EMAIL"), (customers, "EMAIL")]})],
                query_type="MERGE",
                parameterized_hash="p-merge",
                user=f"ETL_{i}",
            )
            for i in range(2)
        ),
        Query(
            "q07",
            NOW - 15 * HOUR,
            direct=[accessed("ANALYTICS.CORE.V_ORDERS", "ID", domain="View")],
            base=[accessed(orders, "ID")],
            modified=[modified(big, {"ID": [("ANALYTICS.CORE.V_ORDERS", "ID")]})],
            query_type="INSERT",
            parameterized_hash="p-big",
        ),
        Query(
            "q08",
            NOW - 14 * HOUR,
            direct=[accessed("ANALYTICS.CORE.V_CUSTOMERS", "EMAIL", domain="View")],
            base=[accessed(customers, "EMAIL")],
            text="select email from analytics.core.v_customers",
            parameterized_hash="p-read",
        ),
        Query(
            "q09",
            NOW - 13 * HOUR,
            direct=[accessed(big, "ID")],
            modified=[stage("RAW.LAND.EXPORTS")],
            text="COPY INTO @raw.land.exports/daily/ FROM reports.public.big_orders",
            query_type="UNLOAD",
            parameterized_hash="p-unload",
        ),
        Query(
            "q10",
            NOW - 12 * HOUR,
            direct=[accessed(big, "ID")],
            modified=[stage("RAW.LAND.MISSING")],
            text="COPY INTO @raw.land.missing/out/ FROM reports.public.big_orders",
            query_type="UNLOAD",
            parameterized_hash="p-unload-2",
        ),
        Query(
            "q11", NOW - 11 * HOUR, ddl=ddl("ANALYTICS.CORE.TMP", "DROP"), query_type="DROP_TABLE"
        ),
        Query("q12", NOW - 10 * HOUR, text="select current_date()"),
        Query("q13", NOW - 9 * HOUR, direct=[accessed(fx, "RATE")], in_query_history=False),
    )
    au.add_dependency("ANALYTICS.CORE.V_ORDERS", "VIEW", orders, "TABLE")
    au.add_dependency("RAW.EXT.EVENTS", "EXTERNAL TABLE", "RAW.LAND.PARTNER_FEEDS", "STAGE")


def settings_for(server: dict[str, Any], **snowflake: Any) -> Settings:
    snowflake.setdefault("stage_urls", {"RAW.LAND.VENDOR": "s3://vendor-bucket/exports/"})
    return snowflake_settings(server, **snowflake)


def run(
    store: GraphStore, server: dict[str, Any], *, now: int = NOW, **kwargs: Any
) -> SnowflakeReport:
    progress: Callable[[int], None] | None = kwargs.pop("progress", None)
    settings = settings_for(server, **kwargs)
    connection = connect(settings.snowflake)
    try:
        return harvest(store, settings, connection, now=now, progress=progress)
    finally:
        connection.close()


def edges(store: GraphStore, kind: str) -> set[tuple[str, str]]:
    rows = store.execute(
        f"MATCH (a)-[:{kind}]->(b) RETURN a.urn AS a, b.urn AS b", write=False
    ).rows  # the relationship type comes from the test, never from input
    return {(a, b) for a, b in rows}


def one(store: GraphStore, cypher: str, **params: Any) -> dict[str, Any]:
    [record] = store.execute(cypher, params, write=False).records()
    return record


# --- the graph -----------------------------------------------------------------------------


def test_harvest_builds_the_documented_graph(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    scenario(account_usage)
    report = run(store, fakesnow_server, fetch_size=4)

    orders_raw, fx = urn("RAW.PUBLIC.ORDERS_RAW"), urn("RAW.PUBLIC.FX")
    orders, big = urn("ANALYTICS.CORE.ORDERS"), urn("REPORTS.PUBLIC.BIG_ORDERS")
    customers = urn("ANALYTICS.CORE.CUSTOMERS")
    assert edges(store, "FLOWS_TO") == {
        ("s3://partner-drop/feeds/orders", orders_raw),  # dt=... folds into the dataset
        ("s3://vendor-bucket/exports/fx", fx),  # stage from the stage_urls setting
        (orders_raw, orders),
        (fx, orders),
        (orders, urn(DAILY)),
        (orders_raw, urn("ANALYTICS.CORE.TMP")),
        (urn("RAW.PUBLIC.CUSTOMERS_DELTA"), customers),  # MERGE: no self edge
        (orders, urn("ANALYTICS.CORE.V_ORDERS")),  # OBJECT_DEPENDENCIES
        (urn("ANALYTICS.CORE.V_ORDERS"), big),  # direct objects keep the view on the path
        (customers, urn("ANALYTICS.CORE.V_CUSTOMERS")),  # learnt from base objects
        (big, "s3://lake-exports/big_orders/daily"),  # unload flows out to S3
        (big, urn("@RAW.LAND.MISSING")),  # an unresolvable stage: placeholder
        ("s3://partner-drop/feeds", urn("RAW.EXT.EVENTS")),  # external table -> its stage
    }
    assert edges(store, "FEEDS") == {
        (orders_raw + "#ID", orders + "#ID"),
        (orders_raw + "#AMOUNT", orders + "#AMOUNT_EUR"),
        (fx + "#RATE", orders + "#AMOUNT_EUR"),
        (orders + "#AMOUNT_EUR", urn(DAILY) + "#Revenue"),
        (orders_raw + "#ID", urn("ANALYTICS.CORE.TMP") + "#ID"),
        (urn("RAW.PUBLIC.CUSTOMERS_DELTA") + "#EMAIL", customers + "#EMAIL"),
        (urn("ANALYTICS.CORE.V_ORDERS") + "#ID", big + "#ID"),
    }
    assert all(
        (col.rpartition("#")[0], asset) == (asset, asset)
        for col, asset in edges(store, "COLUMN_OF")
    )

    merge = one(store, "MATCH (t:Transformation {urn: $u}) RETURN t", u=urn("query/p-merge"))
    assert merge["t"]["runs"] == 2
    assert (merge["t"]["user"], merge["t"]["last_run_id"]) == ("ETL_1", "q06-1")
    assert merge["t"]["last_run_at"] == NOW - 19 * HOUR
    assert ("READS_FROM", customers) in {
        (r["t"], r["b"])
        for r in store.execute(
            "MATCH (t:Transformation {urn: $u})-[e]->(b) RETURN type(e) AS t, b.urn AS b",
            {"u": urn("query/p-merge")},
            write=False,
        ).records()
    }
    reader = one(
        store,
        "MATCH (t:Transformation {urn: $u}) OPTIONAL MATCH (t)-[w:WRITES_TO]->() "
        "RETURN t.runs AS runs, count(w) AS writes",
        u=urn("query/p-read"),
    )
    assert reader == {"runs": 1, "writes": 0}
    no_hash = snowflake_query_transformation_urn(ACCOUNT, None, [], [fx])
    assert edges(store, "READS_FROM") >= {
        (no_hash, fx),
        (urn("query/p-read"), urn("ANALYTICS.CORE.V_CUSTOMERS")),
    }

    tmp = one(
        store, "MATCH (n:Asset {urn: $u}) RETURN n.deleted_at AS d", u=urn("ANALYTICS.CORE.TMP")
    )
    assert tmp["d"] == NOW - 11 * HOUR
    flows = one(
        store,
        "MATCH (:Asset {urn: $a})-[e:FLOWS_TO]->(:Asset {urn: $b}) RETURN e",
        a=urn("RAW.PUBLIC.CUSTOMERS_DELTA"),
        b=customers,
    )["e"]
    assert (flows["runs"], flows["first_seen"], flows["last_seen"]) == (
        2,
        NOW - 20 * HOUR,
        NOW - 19 * HOUR,
    )
    assert flows["via"] == [urn("query/p-merge")]
    placeholder = one(store, "MATCH (n:Dataset {urn: $u}) RETURN n", u=urn("@RAW.LAND.MISSING"))
    assert placeholder["n"]["placeholder"] is True

    assert report.watermark == NOW - 9 * HOUR
    assert report.counts["rows"] == 14 and report.counts["rows_malformed"] == 0
    assert report.counts["drops"] == 1 and report.counts["stage_placeholders"] == 1
    assert any("RAW.LAND.MISSING" in w and "stage_urls" in w for w in report.warnings)
    assert any("external tables not listed" in w for w in report.warnings)  # fakesnow: no SHOW
    assert last_watermark(store, "snowflake", ACCOUNT) == NOW - 9 * HOUR


def test_an_unqualified_stage_takes_the_query_schema_not_a_namesake(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    # ACCESS_HISTORY names the stage as typed (`@LANDING_STAGE`); two schemas hold one.
    account_usage.create_stage("RAW", "AAA", "LANDING_STAGE", "s3://wrong-bucket/in/")
    account_usage.create_stage("RAW", "LAND", "LANDING_STAGE", "s3://landing/in/")
    account_usage.add(
        Query(
            "unq",
            NOW - HOUR,
            direct=[stage("@LANDING_STAGE")],
            modified=[modified("RAW.LAND.ORDERS")],
            text="COPY INTO orders FROM @landing_stage/orders/dt=2025-06-15/",
            query_type="COPY",
            database="RAW",
            schema="LAND",
        )
    )
    report = run(store, fakesnow_server)
    assert edges(store, "FLOWS_TO") == {("s3://landing/in/orders", urn("RAW.LAND.ORDERS"))}
    assert report.counts["stages_unnamed"] == 0 and report.counts["stage_placeholders"] == 0


def test_copy_by_column_name_feeds_from_the_columns_spark_wrote(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    dataset = "s3://landing/in/daily"
    writer = GraphWriter(store)  # what the Spark listener writes for its output dataset
    writer.add(Asset(dataset, "Dataset", "s3", "daily", NOW - 2 * HOUR, {}))
    writer.add_all(Column(f"{dataset}#{c}", dataset, c, NOW - 2 * HOUR) for c in ("dt", "n"))
    writer.flush()
    account_usage.create_stage("RAW", "LAND", "LANDING", "s3://landing/in/")
    account_usage.add(
        Query(
            "cp",
            NOW - HOUR,
            direct=[stage("RAW.LAND.LANDING")],
            modified=[modified("RAW.LAND.DAILY", {"DT": [], "N": [], "LOADED_AT": []})],
            text="COPY INTO daily FROM @landing/daily/ FILE_FORMAT = (TYPE = PARQUET) "
            "MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE",
            query_type="COPY",
            database="RAW",
            schema="LAND",
        )
    )
    report = run(store, fakesnow_server)
    daily = urn("RAW.LAND.DAILY")
    assert edges(store, "FEEDS") == {
        (f"{dataset}#dt", f"{daily}#DT"),
        (f"{dataset}#n", f"{daily}#N"),
    }
    assert report.counts["copy_column_pairs"] == 2 and report.counts["copy_columns_unmatched"] == 1


def test_column_upstream_lists_every_upstream_column(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    scenario(account_usage)
    run(store, fakesnow_server)
    rows = store.run("column_upstream", {"urn": urn(DAILY) + "#Revenue"}, write=False).records()
    assert [(r["column"], r["asset"], r["distance"]) for r in rows] == [
        (urn("ANALYTICS.CORE.ORDERS#AMOUNT_EUR"), urn("ANALYTICS.CORE.ORDERS"), 1),
        (urn("RAW.PUBLIC.FX#RATE"), urn("RAW.PUBLIC.FX"), 2),
        (urn("RAW.PUBLIC.ORDERS_RAW#AMOUNT"), urn("RAW.PUBLIC.ORDERS_RAW"), 2),
    ]


def test_column_upstream_expands_level_by_level(store: GraphStore) -> None:
    """Diamonds everywhere (each column fed by 3 of the level before, 8 levels): every upstream
    column comes back once, at its shortest distance, and a cycle does not loop."""
    writer = GraphWriter(store)
    width, depth = 4, 8
    for level in range(depth + 1):
        table = urn(f"D.S.L{level}")
        writer.add(Asset(table, "Table", "snowflake", f"L{level}", NOW, {}))
        for i in range(width):
            writer.add(Column(f"{table}#C{i}", table, f"C{i}", NOW))
    for level in range(1, depth + 1):
        for i in range(width):
            for k in range(3):
                src = urn(f"D.S.L{level - 1}#C{(i + k) % width}")
                writer.add(ColumnFeed(src, urn(f"D.S.L{level}#C{i}"), NOW, "j"))
    writer.add(ColumnFeed(urn(f"D.S.L{depth}#C0"), urn("D.S.L0#C0"), NOW, "loop"))
    writer.flush()
    rows = store.run("column_upstream", {"urn": urn(f"D.S.L{depth}#C0")}, write=False).records()
    found = {(r["column"], r["distance"]) for r in rows}
    # C0..C2 of L7 feed the start; every column of L6..L0 is upstream; each comes back once
    assert len(found) == len(rows) == 3 + 7 * width
    assert (urn("D.S.L7#C2"), 1) in found and (urn("D.S.L0#C3"), 8) in found
    assert urn(f"D.S.L{depth}#C0") not in {column for column, _ in found}  # the loop ends


# --- incremental -----------------------------------------------------------------------------


def test_two_runs_with_an_overlap_make_the_graph_of_one_run(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    """The second run re-reads 3 hours before the first one's watermark: nothing but the
    replay happens (no doubled runs, no moved times)."""
    scenario(account_usage)
    run(store, fakesnow_server)
    single = dump_graph(store)
    store.execute("MATCH (n) DETACH DELETE n", write=True)

    first = run(store, fakesnow_server, now=NOW)
    second = run(store, fakesnow_server, now=NOW, fetch_size=2)
    assert first.watermark is not None
    assert second.window_start == first.watermark - 3 * HOUR
    assert second.counts["rows"] == 4  # q10..q13 replayed
    assert dump_graph(store) == single


def test_rows_arriving_late_within_the_overlap_are_harvested(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    account_usage.add(
        Query("a", NOW - 2 * HOUR, direct=[accessed("A.S.X")], modified=[modified("A.S.Y")])
    )
    run(store, fakesnow_server)
    # ACCESS_HISTORY publishes a query late: older than the watermark, inside the overlap
    account_usage.add(
        Query("late", NOW - 3 * HOUR, direct=[accessed("A.S.X")], modified=[modified("A.S.Z")])
    )
    report = run(store, fakesnow_server, now=NOW + HOUR)
    assert (urn("A.S.X"), urn("A.S.Z")) in edges(store, "FLOWS_TO")
    assert report.watermark == NOW - 2 * HOUR


def test_an_interrupted_run_keeps_the_watermark_and_the_next_one_catches_up(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    scenario(account_usage)
    run(store, fakesnow_server)
    single = dump_graph(store)
    store.execute("MATCH (n) DETACH DELETE n", write=True)

    def interrupt(rows: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C after the first window was written

    with pytest.raises(KeyboardInterrupt):
        run(store, fakesnow_server, fetch_size=3, progress=interrupt)
    assert last_watermark(store, "snowflake", ACCOUNT) is None
    failed = one(store, "MATCH (h:HarvestRun) RETURN h.status AS s, h.error AS e, h.watermark AS w")
    assert failed == {"s": "interrupted", "e": "interrupted", "w": None}
    # the first window's nodes were written (consistent, idempotent); its edges wait for the
    # end of a run, so nothing half-counted is left behind
    assert one(store, "MATCH (n:Asset) RETURN count(n) AS n")["n"] > 0

    run(store, fakesnow_server)
    assert dump_graph(store) == single


# --- bad input -------------------------------------------------------------------------------


def test_a_malformed_row_is_skipped_reported_and_counted(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    account_usage.add(
        Query("good-1", NOW - 3 * HOUR, direct=[accessed("A.S.X")], modified=[modified("A.S.Y")]),
        Query("bad-1", NOW - 2 * HOUR, raw_direct='[{"objectDomain": "Table", "objectName": '),
        Query("good-2", NOW - HOUR, direct=[accessed("A.S.Y")], modified=[modified("A.S.Z")]),
    )
    report = run(store, fakesnow_server)
    assert report.malformed == [("bad-1", "DIRECT_OBJECTS_ACCESSED is not a JSON array of objects")]
    assert edges(store, "FLOWS_TO") == {(urn("A.S.X"), urn("A.S.Y")), (urn("A.S.Y"), urn("A.S.Z"))}
    h = one(store, "MATCH (h:HarvestRun) RETURN h.status AS s, h.count_rows_malformed AS n")
    assert h == {"s": "success", "n": 1}
    assert report.watermark == NOW - HOUR


def test_missing_grant_names_it_and_keeps_the_watermark(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    account_usage.add(Query("a", NOW - HOUR, direct=[accessed("A.S.X")]))
    run(store, fakesnow_server)
    account_usage.reset(views=["QUERY_HISTORY", "OBJECT_DEPENDENCIES"])  # no ACCESS_HISTORY
    with pytest.raises(HarvestError) as caught:
        run(store, fakesnow_server, now=NOW + HOUR)
    message = str(caught.value)
    assert "cannot read SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY" in message
    assert "GRANT IMPORTED PRIVILEGES ON DATABASE SNOWFLAKE TO ROLE LINEAGE_ROLE" in message
    assert "GRANT DATABASE ROLE SNOWFLAKE.GOVERNANCE_VIEWER TO ROLE LINEAGE_ROLE" in message
    assert last_watermark(store, "snowflake", ACCOUNT) == NOW - HOUR


def test_missing_object_dependencies_warns_and_uses_base_objects(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    account_usage.reset(views=["ACCESS_HISTORY", "QUERY_HISTORY"])
    account_usage.add(
        Query("v", NOW - HOUR, direct=[accessed("A.S.V", domain="View")], base=[accessed("A.S.T")])
    )
    report = run(store, fakesnow_server)
    assert edges(store, "FLOWS_TO") == {(urn("A.S.T"), urn("A.S.V"))}
    assert any("OBJECT_DEPENDENCIES" in w and "IMPORTED PRIVILEGES" in w for w in report.warnings)


def test_standard_edition_is_named(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    """Standard Edition keeps ACCESS_HISTORY empty while QUERY_HISTORY fills."""
    account_usage.add(
        Query("w", NOW - 6 * HOUR, query_type="INSERT", text="insert into t select 1")
    )
    account_usage.sql("DELETE FROM SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY")
    with pytest.raises(HarvestError, match="needs Enterprise Edition or higher"):
        run(store, fakesnow_server)
    assert last_watermark(store, "snowflake", ACCOUNT) is None


def test_an_empty_window_succeeds_and_keeps_the_watermark(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    account_usage.add(Query("a", NOW - HOUR, direct=[accessed("A.S.X")]))
    run(store, fakesnow_server)
    account_usage.sql("DELETE FROM SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY")
    report = run(store, fakesnow_server, now=NOW + 10 * HOUR)
    assert report.counts["rows"] == 0 and report.watermark == NOW - HOUR


def test_wrong_credentials_are_a_settings_error(rejecting_login: dict[str, Any]) -> None:
    settings = snowflake_settings(rejecting_login)
    with pytest.raises(ConfigError) as caught:
        connect(settings.snowflake)
    message = str(caught.value)
    assert "Snowflake rejected the login of user 'fake'" in message
    assert "Incorrect username or password was specified" in message
    assert "snowflake.password" in message and "wrong" not in message


def test_unreachable_server_is_a_harvest_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    server = {
        "host": "127.0.0.1",
        "port": port,
        "protocol": "http",
        "account": "acme",
        "user": "u",
        "password": "p",
    }
    settings = snowflake_settings(server, login_timeout=3)
    with pytest.raises(HarvestError, match=r"cannot connect to Snowflake account 'acme' at"):
        connect(settings.snowflake)


def test_external_table_rows_flow_from_their_location() -> None:
    """A SHOW EXTERNAL TABLES row (fakesnow has no such command), location as a stage path."""
    resolver = StageResolver.from_settings(None, {"RAW.LAND.FEEDS": "s3://drop/in/"})
    row = {
        "name": "EVENTS",
        "database_name": "RAW",
        "schema_name": "EXT",
        "location": "@RAW.LAND.FEEDS/events/year=2025/",
        "stage": "RAW.LAND.FEEDS",
    }
    values = external_table_values(row, ACCOUNT, resolver, FoldRules(), NOW)
    assert [(v.src, v.dst) for v in values if isinstance(v, Flow)] == [
        ("s3://drop/in/events", urn("RAW.EXT.EVENTS"))
    ]
    row["location"] = "s3://direct/path/"
    values = external_table_values(row, ACCOUNT, resolver, FoldRules(), NOW)
    assert [v.src for v in values if isinstance(v, Flow)] == ["s3://direct/path"]


# --- the command ------------------------------------------------------------------------------


def env_for(server: dict[str, Any]) -> dict[str, str]:
    return {
        "LINEAGEGRAPH_SNOWFLAKE__ACCOUNT": server["account"],
        "LINEAGEGRAPH_SNOWFLAKE__USER": server["user"],
        "LINEAGEGRAPH_SNOWFLAKE__PASSWORD": "s3cr3t-pw",  # fakesnow takes any password
        "LINEAGEGRAPH_SNOWFLAKE__HOST": server["host"],
        "LINEAGEGRAPH_SNOWFLAKE__PORT": str(server["port"]),
        "LINEAGEGRAPH_SNOWFLAKE__PROTOCOL": "http",
        "LINEAGEGRAPH_SNOWFLAKE__DATABASE": "SNOWFLAKE",
        "LINEAGEGRAPH_SNOWFLAKE__ROLE": "LINEAGE_ROLE",
        "LINEAGEGRAPH_SNOWFLAKE__STAGE_URLS": '{"RAW.LAND.VENDOR": "s3://vendor-bucket/exports/"}',
        "LINEAGEGRAPH_IDENTITY__SNOWFLAKE_ACCOUNT": ACCOUNT,
    }


def test_command_harvests_and_reports(
    account_usage: AccountUsage, fakesnow_server: dict[str, Any], tmp_path: Any
) -> None:
    now = now_ms()  # the command harvests up to the real clock
    account_usage.add(
        Query(
            "c",
            now - HOUR,
            direct=[stage("RAW.LAND.VENDOR")],
            modified=[modified("R.P.FX")],
            text="copy into r.p.fx from @raw.land.vendor/fx/",
            query_type="COPY",
        ),
        Query("bad", now - HOUR, raw_direct="{}"),
    )
    runner = CliRunner()
    args = ["--data-dir", str(tmp_path), "harvest", "snowflake", "--lookback-days", "30"]
    result = runner.invoke(cli, args, env=env_for(fakesnow_server))
    assert result.exit_code == 0, result.output
    assert f"{ACCOUNT}: 2 ACCESS_HISTORY rows since" in result.stdout
    assert "1 writing and 0 reading queries, 1 table and 0 column lineage pairs" in result.stdout
    assert "1 malformed rows skipped" in result.stdout
    assert "warning: skipped malformed row of query bad" in result.stderr
    assert "s3cr3t-pw" not in result.output  # the password is never printed


def test_command_failure_exits_non_zero_with_the_reason(
    account_usage: AccountUsage, fakesnow_server: dict[str, Any], tmp_path: Any
) -> None:
    account_usage.reset(views=["QUERY_HISTORY"])
    args = ["--data-dir", str(tmp_path), "harvest", "snowflake"]
    result = CliRunner().invoke(cli, args, env=env_for(fakesnow_server))
    assert result.exit_code == HarvestError.exit_code
    # (the in-process fakesnow server may log to the same stderr)
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith("error: cannot read SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY")
    assert "IMPORTED PRIVILEGES" in error


def test_command_without_an_account_is_a_settings_error(tmp_path: Any) -> None:
    args = ["--data-dir", str(tmp_path), "harvest", "snowflake"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == ConfigError.exit_code
    assert "no Snowflake account: set snowflake.account" in result.stderr


def test_command_refuses_bad_overrides(tmp_path: Any) -> None:
    args = ["--data-dir", str(tmp_path), "harvest", "snowflake", "--lookback-days", "0"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "--lookback-days" in result.output


def test_command_help_has_an_example() -> None:
    result = CliRunner().invoke(cli, ["harvest", "snowflake", "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output and "lineagegraph harvest snowflake" in result.output
