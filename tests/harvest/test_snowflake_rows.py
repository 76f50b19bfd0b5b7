"""ACCESS_HISTORY rows to model values, the window reducer, stage paths, the SQL text and the
[snowflake] settings: the parts of the Snowflake harvester that need no server."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snowflake.connector.converter import SnowflakeConverter
from snowflake_fixtures import (
    ACCOUNT,
    HOUR,
    NOW,
    Query,
    accessed,
    ddl,
    dump_graph,
    modified,
    stage,
    urn,
)

from lineagegraph.graph.history import delete_assets
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.reducer import RunReducer
from lineagegraph.harvest.snowflake import queries
from lineagegraph.harvest.snowflake.access_history import (
    MalformedRow,
    RowConverter,
    SoftDelete,
    parse_row,
)
from lineagegraph.harvest.snowflake.harvester import finish_run
from lineagegraph.harvest.snowflake.stages import (
    Stage,
    StageResolver,
    placeholder_urn,
    stage_dataset_urns,
    stage_paths,
)
from lineagegraph.identity import FoldRules, snowflake_query_transformation_urn
from lineagegraph.model import Asset, Column, ColumnFeed, Flow, Transformation
from lineagegraph.settings import SnowflakeSettings


def row(q: Query) -> tuple[Any, ...]:
    """The cursor row of queries.ACCESS_HISTORY_SINCE for a query (VARIANTs as JSON text)."""
    text = q.text if "@" in q.text else None
    return (
        q.query_id,
        q.at,
        q.user,
        q.raw_direct if q.raw_direct is not None else json.dumps(q.direct),
        json.dumps(q.base if q.base is not None else q.direct),
        json.dumps(q.modified),
        json.dumps(q.ddl) if q.ddl else None,
        q.parameterized_hash,
        q.query_type,
        q.database,
        q.schema,
        text,
        json.dumps(q.policies),
    )


def converter(
    stage_urls: dict[str, str] | None = None, views: set[str] | None = None
) -> RowConverter:
    resolver = StageResolver.from_settings(None, stage_urls or {})
    return RowConverter(ACCOUNT, resolver, FoldRules(), views or set())


def values(q: Query, conv: RowConverter | None = None) -> list[Any]:
    return (conv or converter()).convert(parse_row(row(q)))


def of(kind: type, items: list[Any]) -> list[Any]:
    return [i for i in items if isinstance(i, kind)]


# --- rows to values ------------------------------------------------------------------------


def test_insert_flows_feeds_and_is_one_job() -> None:
    q = Query(
        "q1",
        NOW,
        direct=[accessed("RAW.PUBLIC.ORDERS", "ID", "AMOUNT"), accessed("RAW.PUBLIC.FX", "RATE")],
        modified=[
            modified(
                "MART.PUBLIC.REVENUE",
                {
                    "ID": [("RAW.PUBLIC.ORDERS", "ID")],
                    "EUR": [("RAW.PUBLIC.ORDERS", "AMOUNT"), ("RAW.PUBLIC.FX", "RATE")],
                },
            )
        ],
        query_type="INSERT",
        parameterized_hash="9f3a",
    )
    out = values(q)
    job = urn("query/9f3a")
    [t] = of(Transformation, out)
    assert (t.urn, t.run_id, t.run_at, t.user) == (job, "q1", NOW, "ETL_USER")
    assert t.reads == (urn("RAW.PUBLIC.ORDERS"), urn("RAW.PUBLIC.FX"))
    assert t.writes == (urn("MART.PUBLIC.REVENUE"),)
    assert {(f.src, f.dst, f.via) for f in of(Flow, out)} == {
        (urn("RAW.PUBLIC.ORDERS"), urn("MART.PUBLIC.REVENUE"), job),
        (urn("RAW.PUBLIC.FX"), urn("MART.PUBLIC.REVENUE"), job),
    }
    assert {(f.src, f.dst) for f in of(ColumnFeed, out)} == {
        (urn("RAW.PUBLIC.ORDERS#ID"), urn("MART.PUBLIC.REVENUE#ID")),
        (urn("RAW.PUBLIC.ORDERS#AMOUNT"), urn("MART.PUBLIC.REVENUE#EUR")),
        (urn("RAW.PUBLIC.FX#RATE"), urn("MART.PUBLIC.REVENUE#EUR")),
    }
    assert {c.asset for c in of(Column, out)} == {
        urn("RAW.PUBLIC.ORDERS"),
        urn("RAW.PUBLIC.FX"),
        urn("MART.PUBLIC.REVENUE"),
    }
    assert all(a.kind == "Table" and a.seen == NOW for a in of(Asset, out))


def test_without_a_parameterized_hash_the_job_is_its_targets_and_sources() -> None:
    q = Query(
        "q1",
        NOW,
        direct=[accessed("A.B.SRC")],
        modified=[modified("A.B.DST")],
        in_query_history=False,
    )
    [t] = of(Transformation, values(q))
    assert t.urn == snowflake_query_transformation_urn(
        ACCOUNT, None, [urn("A.B.DST")], [urn("A.B.SRC")]
    )


def test_merge_reads_its_target_without_a_self_edge() -> None:
    """MERGE reads the table it writes: READS_FROM it, FLOWS_TO only from the other source
    (the writer drops the self edge, the pair count leaves it out)."""
    q = Query(
        "m1",
        NOW,
        direct=[accessed("DW.CORE.CUSTOMERS", "ID"), accessed("STG.CORE.CUSTOMERS_DELTA", "ID")],
        modified=[
            modified(
                "DW.CORE.CUSTOMERS",
                {"ID": [("STG.CORE.CUSTOMERS_DELTA", "ID"), ("DW.CORE.CUSTOMERS", "ID")]},
            )
        ],
        query_type="MERGE",
    )
    conv = converter()
    out = values(q, conv)
    [t] = of(Transformation, out)
    assert urn("DW.CORE.CUSTOMERS") in t.reads
    assert conv.counts["table_pairs"] == 1
    assert conv.counts["column_pairs"] == 1


def test_read_only_query_reads_and_flows_nowhere() -> None:
    conv = converter()
    out = values(Query("s1", NOW, direct=[accessed("DW.CORE.CUSTOMERS", "ID")]), conv)
    [t] = of(Transformation, out)
    assert t.reads == (urn("DW.CORE.CUSTOMERS"),) and t.writes == ()
    assert of(Flow, out) == [] and conv.counts["queries_reading"] == 1


def test_empty_arrays_and_functions_only_give_nothing() -> None:
    function = {
        "objectDomain": "FUNCTION",
        "objectName": "GOV.FN.RETURN_SUM",
        "objectId": "2",
        "argumentSignature": "(NUM1 NUMBER, NUM2 NUMBER)",
        "dataType": "NUMBER(38,0)",
    }
    assert values(Query("e1", NOW)) == []
    assert values(Query("e2", NOW, direct=[function])) == []


def test_quoted_mixed_case_names_keep_their_case() -> None:
    q = Query(
        "q1",
        NOW,
        direct=[accessed('Sales."Raw Data"."orders.v2"', "Id")],
        modified=[
            modified('Sales.PUBLIC."Daily"', {"Id": [('Sales."Raw Data"."orders.v2"', "Id")]})
        ],
    )
    out = values(q)
    assert {a.urn for a in of(Asset, out)} == {
        urn('Sales.Raw Data."orders.v2"'),
        urn("Sales.PUBLIC.Daily"),
    }
    [feed] = of(ColumnFeed, out)
    assert feed.src == urn('Sales.Raw Data."orders.v2"#Id')


def test_drop_soft_deletes_and_create_marks_seen() -> None:
    dropped = values(Query("d1", NOW, ddl=ddl("A.B.OLD", "DROP")))
    assert dropped == [SoftDelete(urn("A.B.OLD"), NOW)]
    [asset] = values(Query("c1", NOW, ddl=ddl("A.B.NEW", "CREATE", domain="View")))
    assert isinstance(asset, Asset) and asset.props == {"domain": "View"}


def test_view_learns_upstreams_from_base_objects_unless_listed() -> None:
    q = Query(
        "v1",
        NOW,
        direct=[accessed("A.B.V_ORDERS", "ID", domain="View"), accessed("A.B.FX", "RATE")],
        base=[accessed("A.B.ORDERS", "ID"), accessed("A.B.FX", "RATE")],
    )
    conv = converter()
    out = values(q, conv)
    assert [(f.src, f.dst, f.via) for f in of(Flow, out)] == [
        (urn("A.B.ORDERS"), urn("A.B.V_ORDERS"), None)
    ]
    listed = values(q, converter(views={urn("A.B.V_ORDERS")}))
    assert of(Flow, listed) == []


def test_a_column_written_from_one_view_column_teaches_that_column_its_base_columns() -> None:
    view, view2 = "AN.CORE.V_ORDERS", "AN.CORE.V_FX"
    q = Query(
        "vc",
        NOW,
        direct=[
            accessed(view, "A", "B", domain="View"),
            accessed("RAW.P.T2", "C"),
            accessed(view2, "Z", domain="View"),
        ],
        modified=[
            modified(
                "AN.MART.OUT",
                {
                    "A": [(view, "A")],
                    "B": [(view, "B"), ("RAW.P.T2", "C")],
                    "C": [(view, "A"), (view2, "Z")],
                },
                base={
                    "A": [("RAW.P.BASE", "X")],
                    "B": [("RAW.P.BASE", "Y"), ("RAW.P.T2", "C")],
                    "C": [("RAW.P.BASE", "X"), ("RAW.P.FX", "RATE")],
                },
            )
        ],
        query_type="INSERT",
    )
    # the fixture marks every source as a Table: name the view columns' domain as Snowflake does
    for column in q.modified[0]["columns"]:
        for source in column["directSources"]:
            if source["objectName"] in (view, view2):
                source["objectDomain"] = "View"
    conv = converter()
    feeds = {(f.src, f.dst) for f in of(ColumnFeed, values(q, conv))}
    learnt = {(s, d) for s, d in feeds if d.startswith((urn(view), urn(view2)))}
    assert learnt == {
        (urn("RAW.P.BASE#X"), urn(f"{view}#A")),  # A: one view column, its base column
        (urn("RAW.P.BASE#Y"), urn(f"{view}#B")),  # B: T2.C was read directly, not via the view
    }  # C: two view columns, the base columns cannot be told apart
    assert conv.counts["view_column_pairs"] == 2


def test_reads_through_two_unlisted_views_teach_nothing() -> None:
    q = Query(
        "v2",
        NOW,
        direct=[accessed("A.B.V1", domain="View"), accessed("A.B.V2", domain="Materialized view")],
        base=[accessed("A.B.T1"), accessed("A.B.T2")],
    )
    conv = converter()
    assert of(Flow, values(q, conv)) == []
    assert conv.counts["view_reads_ambiguous"] == 1


def test_copy_from_a_mapped_stage_reads_the_s3_dataset() -> None:
    conv = converter({"raw.land.feeds": "s3://drop/in/"})
    q = Query(
        "c1",
        NOW,
        direct=[stage("RAW.LAND.FEEDS")],
        modified=[modified("RAW.PUBLIC.ORDERS")],
        text="COPY INTO orders FROM @land.feeds/partner/dt=2024-01-01/ PATTERN = '.*[.]csv'",
        query_type="COPY",
        database="RAW",
        schema="PUBLIC",
    )
    out = values(q, conv)
    [flow] = of(Flow, out)
    assert (flow.src, flow.dst) == ("s3://drop/in/partner", urn("RAW.PUBLIC.ORDERS"))
    assert [a.kind for a in of(Asset, out) if a.urn == flow.src] == ["Dataset"]


def _copy(columns: list[str], options: str) -> Query:
    return Query(
        "cp",
        NOW,
        direct=[stage("RAW.LAND.FEEDS")],
        modified=[modified("RAW.PUBLIC.ORDERS", {c: [] for c in columns})],
        text=f"COPY INTO orders FROM @land.feeds/orders/ FILE_FORMAT = (TYPE = PARQUET) {options}",
        query_type="COPY",
    )


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE", {("dt", "DT"), ("user_id", "USER_ID")}),
        ("match_by_column_name='CASE_SENSITIVE'", {("Amount", "Amount")}),
        ("", set()),  # columns by position: the file's column names say nothing
    ],
)
def test_copy_matching_columns_by_name_feeds_from_the_datasets_known_columns(
    options: str, expected: set[tuple[str, str]]
) -> None:
    dataset = "s3://drop/in/orders"
    known = {dataset: ["Amount", "amount", "dt", "user_id"]}  # e.g. written by Spark
    conv = converter({"RAW.LAND.FEEDS": "s3://drop/in/"})
    conv.known_columns = lambda urn: known.get(urn, [])
    out = values(_copy(["DT", "USER_ID", "Amount", "NOTE"], options), conv)
    feeds = {(f.src, f.dst) for f in of(ColumnFeed, out)}
    target = urn("RAW.PUBLIC.ORDERS")
    assert feeds == {(f"{dataset}#{src}", f"{target}#{dst}") for src, dst in expected}
    assert {c.urn for c in of(Column, out) if c.asset == dataset} == {s for s, _ in feeds}
    assert conv.counts["copy_column_pairs"] == len(expected)


def test_copy_from_an_unresolved_stage_asks_for_no_columns() -> None:
    conv = converter()
    asked: list[str] = []
    conv.known_columns = lambda urn: asked.append(urn) or []
    out = values(_copy(["DT"], "MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE"), conv)
    assert of(ColumnFeed, out) == [] and asked == []


def test_unknown_stage_becomes_a_placeholder() -> None:
    conv = converter()
    q = Query(
        "u1",
        NOW,
        direct=[accessed("RAW.PUBLIC.ORDERS")],
        modified=[stage("RAW.LAND.OUT")],
        text="COPY INTO @raw.land.out/export/ FROM raw.public.orders",
        query_type="UNLOAD",
    )
    [flow] = of(Flow, values(q, conv))
    assert flow.dst == urn("@RAW.LAND.OUT") == placeholder_urn(ACCOUNT, ("RAW", "LAND", "OUT"))
    assert ("RAW", "LAND", "OUT") in conv.stages.unresolved
    assert conv.counts["stage_placeholders"] == 1


def test_user_stage_without_a_name_is_skipped_not_malformed() -> None:
    conv = converter()
    q = Query(
        "us1",
        NOW,
        direct=[stage("~", kind="User")],
        modified=[modified("RAW.PUBLIC.T")],
        text="copy into t from @~/staged/",
    )
    out = values(q, conv)
    assert of(Flow, out) == [] and conv.counts["stages_unnamed"] == 1
    assert [t.writes for t in of(Transformation, out)] == [(urn("RAW.PUBLIC.T"),)]


@pytest.mark.parametrize(
    ("name", "database", "schema", "text"),
    [
        ("@LANDING_STAGE", "RAW", "LAND", "copy into t from @landing_stage/feeds/"),
        ("LANDING_STAGE", "RAW", "LAND", "copy into t from @LANDING_STAGE/feeds/"),
        ("@LAND.LANDING_STAGE", "RAW", "OTHER", "copy into t from @land.landing_stage/feeds/"),
    ],
)
def test_an_unqualified_stage_takes_the_query_database_and_schema(
    name: str, database: str, schema: str, text: str
) -> None:
    conv = converter(
        {"RAW.LAND.LANDING_STAGE": "s3://drop/in/", "RAW.OTHER.LANDING_STAGE": "s3://wrong/in/"}
    )
    q = Query(
        "q1",
        NOW,
        direct=[stage(name)],
        modified=[modified("RAW.PUBLIC.T")],
        text=text,
        database=database,
        schema=schema,
    )
    [flow] = of(Flow, values(q, conv))
    assert flow.src == "s3://drop/in/feeds"
    assert conv.counts["stages_unnamed"] == 0 and conv.counts["stage_paths_unknown"] == 0


def test_an_unqualified_stage_without_a_query_schema_is_counted() -> None:
    conv = converter({"RAW.LAND.LANDING_STAGE": "s3://drop/in/"})
    q = Query(
        "q2",
        NOW,
        direct=[stage("@LANDING_STAGE")],
        modified=[modified("RAW.PUBLIC.T")],
        text="copy into t from @landing_stage",
        database=None,
        schema=None,
    )
    assert of(Flow, values(q, conv)) == [] and conv.counts["stages_unqualified"] == 1


def test_internal_stage_is_a_placeholder_without_warning() -> None:
    conv = converter()
    q = Query(
        "i1",
        NOW,
        direct=[stage("RAW.LAND.TMP", kind="Internal Named")],
        modified=[modified("RAW.PUBLIC.T")],
        text="copy into t from @raw.land.tmp",
    )
    [flow] = of(Flow, values(q, conv))
    assert flow.src == urn("@RAW.LAND.TMP") and not conv.stages.unresolved


@pytest.mark.parametrize(
    ("raw_direct", "reason"),
    [
        ('[{"objectDomain": "Table", "objectName": ', "DIRECT_OBJECTS_ACCESSED is not valid JSON"),
        ('{"objectDomain": "Table"}', "not a JSON array of objects"),
        ('"[{}]"', "not a JSON array of objects"),
        ('[{"objectName": "A.B.C"}]', "has no objectDomain"),
        ('[{"objectDomain": "Table", "objectName": ""}]', "has no objectName"),
        ('[{"objectDomain": "Table", "objectName": "A.\\"B"}]', "unbalanced quotes"),
        ("[" * 100_000, "DIRECT_OBJECTS_ACCESSED is not valid JSON (nested too deep)"),
        (
            '[{"objectDomain": "Table", "objectName": "A.B.C", "columns": '
            + "[" * 100_000
            + "]" * 100_000
            + "}]",
            "DIRECT_OBJECTS_ACCESSED is not valid JSON (nested too deep)",
        ),
        ('[{"objectDomain": "Table", "objectName": "A.B.\\ud800"}]', "lone surrogate"),
    ],
)
def test_malformed_rows_name_the_query_and_the_problem(raw_direct: str, reason: str) -> None:
    q = Query("bad-1", NOW, raw_direct=raw_direct)
    with pytest.raises(MalformedRow, match=re.escape(reason)) as caught:
        values(q)
    assert caught.value.query_id == "bad-1"


@pytest.mark.parametrize(
    ("columns", "reason"),
    [
        ([5], "a column of X.Y.Z has no columnName"),
        ([{"columnName": "c", "directSources": [7]}], "directSources of a column of X.Y.Z has no"),
        ([{"columnName": "c", "directSources": [{"objectDomain": "Table", "objectName": "A.B.C",
                                                 "columnName": ["c"]}]}], "has no columnName"),
    ],
)  # fmt: skip
def test_modified_columns_of_the_wrong_type_are_malformed(columns: list[Any], reason: str) -> None:
    target = {"objectDomain": "Table", "objectName": "X.Y.Z", "columns": columns}
    q = Query(
        "bad-2", NOW, direct=[{"objectDomain": "Table", "objectName": "A.B.C"}], modified=[target]
    )
    with pytest.raises(MalformedRow, match=re.escape(reason)) as caught:
        values(q)
    assert caught.value.query_id == "bad-2"


def test_a_column_name_with_a_hash_is_skipped_and_counted() -> None:
    conv = converter()
    q = Query(
        "h1",
        NOW,
        direct=[accessed("A.B.S", "X#1")],
        modified=[modified("A.B.T", {"X#1": [("A.B.S", "X#1")]})],
    )
    out = values(q, conv)
    assert of(ColumnFeed, out) == [] and conv.counts["columns_skipped"] == 1
    assert len(of(Flow, out)) == 1


# --- stage paths ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("COPY INTO t FROM @RAW.LAND.FEEDS/a/b/ FILES = ('x.csv')", ["a/b/"]),
        ("copy into t from @feeds pattern='.*'", [""]),
        ("COPY INTO t FROM '@land.feeds/with space/'", ["with"]),
        ("copy into t from (select $1 from @land.feeds/p/ (file_format => 'f'))", ["p/"]),
        ("COPY INTO @feeds/out/ FROM t; -- and @feeds/out2/", ["out/", "out2/"]),
        ('COPY INTO t FROM @"RAW"."LAND"."FEEDS"/x', ["x"]),
        ("COPY INTO t FROM @land.other/x/ -- a@b.com", []),
        ("COPY INTO t FROM @~/staged/", []),
        (None, []),
    ],
)
def test_stage_paths_follow_sql_naming(text: str | None, expected: list[str]) -> None:
    assert stage_paths(text, ("RAW", "LAND", "FEEDS"), "RAW", "LAND") == expected


def test_quoted_stage_names_match_case_sensitively() -> None:
    text = 'COPY INTO t FROM @land."Drop Zone"/in/ ; COPY INTO t FROM @land.drop_zone/x/'
    assert stage_paths(text, ("RAW", "LAND", "Drop Zone"), "RAW", "PUBLIC") == ["in/"]


def test_stage_dataset_urns_fold_and_collapse() -> None:
    resolved = Stage("s3://drop//in/")
    got = stage_dataset_urns(ACCOUNT, ("R", "L", "S"), resolved, ["p/dt=1/", ""], FoldRules())
    assert got == ["s3://drop/in/p", "s3://drop/in"]


def test_resolver_asks_once_per_stage_and_matches_names_exactly() -> None:
    asked: list[str] = []
    rows = [
        {
            "database_name": "RAW",
            "schema_name": "LAND",
            "name": "FEEDS_",
            "url": "s3://x/",
            "type": "EXTERNAL",
        },
        {
            "database_name": "RAW",
            "schema_name": "LAND",
            "name": "FEEDS",
            "url": "s3://y/",
            "type": "EXTERNAL",
        },
    ]

    def lookup(name: str) -> list[dict[str, Any]]:
        asked.append(name)
        return rows

    resolver = StageResolver(lookup)
    assert resolver.resolve(("RAW", "LAND", "FEEDS"), "External Named").url == "s3://y/"
    assert resolver.resolve(("RAW", "LAND", "FEEDS"), "External Named").url == "s3://y/"
    assert asked == ["FEEDS"]


def test_resolver_keeps_going_when_show_stages_fails() -> None:
    def lookup(name: str) -> list[dict[str, Any]]:
        raise RuntimeError("002003 (02000): SQL compilation error: not authorized")

    resolver = StageResolver(lookup)
    assert resolver.resolve(("RAW", "LAND", "X"), None).url is None
    assert "SHOW STAGES failed" in resolver.unresolved[("RAW", "LAND", "X")]


# --- the window reducer --------------------------------------------------------------------


def window() -> list[tuple[Query, list[Any]]]:
    """Rows with repeats of everything: jobs run several times, a view read, a drop, a
    re-creation and a later drop, two jobs writing the same column pair, a MERGE."""
    conv = converter({"RAW.LAND.FEEDS": "s3://drop/in/"})
    rows = []
    for i in range(6):
        rows.append(
            Query(
                f"ins{i}",
                NOW + i * HOUR,
                user=f"U{i}",
                direct=[accessed("A.S.SRC", "X"), accessed("A.S.DIM", "Y")],
                modified=[modified("A.S.DST", {"X": [("A.S.SRC", "X")], "Y": [("A.S.DIM", "Y")]})],
                parameterized_hash="job-ins",
                query_type="INSERT",
            )
        )
        rows.append(
            Query(
                f"cp{i}",
                NOW + i * HOUR + 10,
                direct=[stage("RAW.LAND.FEEDS")],
                modified=[modified("A.S.SRC", {"X": []})],
                text=f"COPY INTO a.s.src FROM @raw.land.feeds/day{i % 2}/",
                query_type="COPY",
                parameterized_hash="job-copy",
            )
        )
    rows.append(
        Query(
            "other",
            NOW + 20,
            direct=[accessed("A.S.SRC", "X")],
            modified=[modified("A.S.DST", {"X": [("A.S.SRC", "X")]})],
            parameterized_hash="job-other",
        )
    )
    rows.append(
        Query(
            "same-time",
            NOW + 20,
            direct=[accessed("A.S.SRC", "X")],
            modified=[modified("A.S.DST", {"X": [("A.S.SRC", "X")]})],
        )
    )
    rows.append(
        Query(
            "merge",
            NOW + 50,
            direct=[accessed("A.S.DST", "X"), accessed("A.S.SRC", "X")],
            modified=[modified("A.S.DST", {"X": [("A.S.DST", "X"), ("A.S.SRC", "X")]})],
        )
    )
    rows.append(Query("drop1", NOW + 30, ddl=ddl("A.S.DIM", "DROP")))
    rows.append(Query("drop2", NOW + 7 * HOUR, ddl=ddl("A.S.DST", "DROP")))
    rows.append(
        Query(
            "view",
            NOW + 40,
            direct=[accessed("A.S.V", "X", domain="View")],
            base=[accessed("A.S.DST", "X")],
        )
    )
    rows.sort(key=lambda q: q.at)
    return [(q, conv.convert(parse_row(row(q)))) for q in rows]


def write_rows(store: GraphStore, rows: list[tuple[Query, list[Any]]], *, reduce: bool) -> None:
    """Write converted rows either one value at a time (each drop right after the values
    before it), or through the RunReducer in windows of 4 rows."""
    writer = GraphWriter(store)
    if not reduce:
        for _, outputs in rows:
            for value in outputs:
                if isinstance(value, SoftDelete):
                    writer.flush()
                    delete_assets(store, [{"urn": value.urn, "at": value.at}])
                else:
                    writer.add(value)
        writer.flush()
        return
    reducer = RunReducer()
    for index, (q, outputs) in enumerate(rows, start=1):
        reducer.add(outputs, q.at, q.query_id, q.user)
        if index % 4 == 0:
            reducer.write_window(writer)
    finish_run(reducer, writer)


def test_reduced_rows_write_the_same_graph(store: GraphStore) -> None:
    """The reducer is an optimisation only: the graph equals the one written row by row, on
    a first pass and on a replay of the same rows."""
    rows = window()
    # Row by row writes no history (when edges stopped: a window's runs, in time order, exact
    # in tests/questions/test_history.py): compared without it.
    write_rows(store, rows, reduce=False)
    once = dump_graph(store, history=False)
    write_rows(store, rows, reduce=False)
    twice = dump_graph(store, history=False)
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    write_rows(store, rows, reduce=True)
    assert dump_graph(store, history=False) == once
    write_rows(store, rows, reduce=True)
    assert dump_graph(store, history=False) == twice == once
    runs = store.execute(
        "MATCH (t:Transformation) RETURN t.name AS n, t.runs AS r, t.user AS u ORDER BY n",
        write=False,
    ).rows
    assert ["insert DST", 6, "U5"] in runs and ["copy SRC", 6, "ETL_USER"] in runs
    deleted = store.execute(
        "MATCH (n:Asset) WHERE n.deleted_at IS NOT NULL RETURN n.urn", write=False
    ).rows
    assert deleted == [[urn("A.S.DST")]]  # DIM was seen again after its drop


def test_reducer_writes_far_fewer_rows_than_it_reads(store: GraphStore) -> None:
    rows = window()
    counts = Counter[str]()
    reducer = RunReducer()
    for q, outputs in rows:
        reducer.add(outputs, q.at, q.query_id, q.user)
    writer = GraphWriter(store, counts)
    finish_run(reducer, writer)
    values = [v for _, outputs in rows for v in outputs]
    written = sum(n for k, n in counts.items() if k.startswith("merge_"))
    assert written < len(values) / 2
    assert counts["merge_transformations"] == 6  # one row per job (16 runs), with run times
    assert counts["self_edges_skipped"] == 2  # MERGE: DST from DST, DST#X from DST#X


TABLES = ["A.S.T1", "A.S.T2", "A.S.T3", "A.S.V"]


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[Query, list[Any]]]:
    """Random query histories over a few tables: repeated jobs at equal or later times, reads,
    merges into their own source, drops and re-creations, a view read."""
    conv = converter()
    count = draw(st.integers(1, 14))
    at = NOW
    rows = []
    for i in range(count):
        at += draw(st.sampled_from([0, 1, 1000, HOUR]))
        kind = draw(st.sampled_from(["write", "write", "read", "drop", "view"]))
        src = draw(st.sampled_from(TABLES[:3]))
        dst = draw(st.sampled_from(TABLES[:3]))
        job = draw(st.sampled_from(["j1", "j2", None]))
        if kind == "write":
            q = Query(
                f"q{i}",
                at,
                direct=[accessed(src, "X")],
                parameterized_hash=job,
                modified=[modified(dst, {"X": [(src, "X")]})],
                user=f"U{i}",
            )
        elif kind == "read":
            q = Query(f"q{i}", at, direct=[accessed(src, "X")], parameterized_hash=job)
        elif kind == "drop":
            q = Query(f"q{i}", at, ddl=ddl(dst, "DROP"))
        else:
            q = Query(
                f"q{i}",
                at,
                direct=[accessed("A.S.V", "X", domain="View")],
                base=[accessed(src, "X")],
            )
        rows.append((q, conv.convert(parse_row(row(q)))))
    return rows


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=histories(), replay=st.booleans())
def test_reduced_random_histories_write_the_same_graph(
    store: GraphStore, rows: list[tuple[Query, list[Any]]], replay: bool
) -> None:
    passes = 2 if replay else 1
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    for _ in range(passes):
        write_rows(store, rows, reduce=False)
    expected = dump_graph(store, history=False)  # as in test_reduced_rows_write_the_same_graph
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    for _ in range(passes):
        write_rows(store, rows, reduce=True)
    assert dump_graph(store, history=False) == expected


# --- the SQL the harvester sends -----------------------------------------------------------

CONVERTER = SnowflakeConverter()


def bound(sql: str, params: dict[str, Any]) -> str:
    """The text the connector sends: pyformat parameters bound with its own escaping."""
    literals = {
        k: CONVERTER.quote(CONVERTER.escape(CONVERTER.to_snowflake(v))) for k, v in params.items()
    }
    return sql % literals


@pytest.mark.parametrize("name", sorted(queries.ALL_STATEMENTS))
def test_statement_is_snowflake_sql(name: str) -> None:
    sql, params = queries.ALL_STATEMENTS[name]
    assert not re.search(r"\{|\}", sql), "values are bound, never formatted into the text"
    text = bound(sql, params)
    parsed = sqlglot.parse_one(text, read="snowflake", error_level=sqlglot.ErrorLevel.RAISE)
    if name == "SHOW_EXTERNAL_TABLES":
        # sqlglot has no grammar for SHOW EXTERNAL TABLES (it keeps it as a raw command);
        # check the documented form instead.
        assert isinstance(parsed, sqlglot.exp.Command)
        assert re.fullmatch(r"SHOW EXTERNAL TABLES IN ACCOUNT", text.strip())
    else:
        assert not isinstance(parsed, sqlglot.exp.Command), f"{name} did not fully parse"
        assert parsed.sql(dialect="snowflake")


def test_access_history_query_columns_match_the_row_reader() -> None:
    parsed = sqlglot.parse_one(
        bound(*queries.ALL_STATEMENTS["ACCESS_HISTORY_SINCE"]), read="snowflake"
    )
    assert isinstance(parsed, sqlglot.exp.Select)
    assert tuple(parsed.named_selects) == queries.ACCESS_HISTORY_COLUMNS
    tables = {t.sql(dialect="snowflake") for t in parsed.find_all(sqlglot.exp.Table)}
    assert tables == {
        "SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY AS ah",
        "SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY AS qh",
    }


def test_bound_values_cannot_break_out_of_their_literal() -> None:
    text = bound(queries.SHOW_STAGES_LIKE, {"name": "X' IN ACCOUNT; DROP TABLE t; --"})
    parsed = sqlglot.parse(text, read="snowflake")
    assert len(parsed) == 1 and isinstance(parsed[0], sqlglot.exp.Show)


# --- settings ------------------------------------------------------------------------------


def test_unused_section_asks_for_nothing() -> None:
    assert SnowflakeSettings.model_validate({}).account is None


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"account": "a", "user": "u"}, "authenticator 'snowflake' needs a password"),
        ({"account": "a", "password": "p"}, "account is set but user is not"),
        ({"account": "a", "user": "u", "authenticator": "snowflake_jwt"}, "needs private_key_file"),
        ({"authenticator": "externalbrowser", "password": "p"}, "password is only used with"),
        ({"private_key_file": "/k.p8"}, "needs authenticator 'snowflake_jwt'"),
        ({"private_key_passphrase": "x"}, "private_key_file is not"),
        ({"stage_urls": {"LANDING": "s3://b/p"}}, "DATABASE.SCHEMA.STAGE"),
        ({"stage_urls": {"A.B.C": "gcs://b/p"}}, "only s3:// stage URLs"),
        ({"stage_urls": {"A.B.C": "s3://"}}, "no bucket in S3 path"),
        ({"authenticator": "oauth"}, "Input should be"),
    ],
)
def test_impossible_combinations_are_refused(section: dict[str, Any], message: str) -> None:
    # Field values fail at load (ValidationError); rules across fields when the section is used.
    with pytest.raises(ValueError, match=re.escape(message)):
        SnowflakeSettings.model_validate(section).check()


def test_key_pair_and_browser_settings_are_accepted() -> None:
    jwt = SnowflakeSettings.model_validate(
        {
            "account": "a",
            "user": "u",
            "authenticator": "snowflake_jwt",
            "private_key_file": "/keys/u.p8",
            "private_key_passphrase": "pass-phrase-123",
        }
    )
    assert jwt.private_key_passphrase is not None
    assert "pass-phrase-123" not in repr(jwt) + str(jwt)
    sso = {"account": "a", "user": "u", "authenticator": "externalbrowser"}
    assert SnowflakeSettings.model_validate(sso).password is None
