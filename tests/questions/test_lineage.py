"""Lineage questions on a small, realistic graph written through GraphWriter: S3 files and
prefixes, a Spark job, Snowflake COPY and transformations, columns, one dropped table."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineagegraph.cli import cli
from lineagegraph.errors import LineageGraphError, NotFound, UsageError
from lineagegraph.graph.statements import statement
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import (
    S3_ACCESS_SYSTEM,
    column_urn,
    dataset_urn,
    name_of,
    s3_access_transformation_urn,
    s3_dataset_urn_for_key,
    s3_file_urn,
    snowflake_query_transformation_urn,
    snowflake_urn,
    spark_transformation_urn,
    system_of,
)
from lineagegraph.model import Asset, Column, ColumnFeed, Flow, Item, PartOf, Transformation
from lineagegraph.questions import answers, lineage
from lineagegraph.questions.lineage import AssetDeleted, AssetNotFound
from lineagegraph.settings import GraphSettings, Settings

ACCOUNT = "acme-prod"
T0 = 1_717_000_000_000


def sf(name: str) -> str:
    return snowflake_urn(ACCOUNT, name)


RAW_FILE = s3_file_urn("raw-bucket", "orders/dt=2024-01-01/part-0.csv")
ORDERS_S3 = s3_dataset_urn_for_key("raw-bucket", "orders/dt=2024-01-01/part-0.csv")
STAGED = dataset_urn("s3a://lake/staging/orders/")
RAW_ORDERS = sf("RAW.PUBLIC.ORDERS")
CUSTOMERS = sf("RAW.PUBLIC.CUSTOMERS")
ENRICHED = sf("ANALYTICS.STAGING.ORDERS_ENRICHED")
DAILY = sf("ANALYTICS.MARTS.DAILY_SALES")
REVENUE = sf("REPORTS.PUBLIC.REVENUE")
OLD_COPY = sf("ANALYTICS.SCRATCH.ORDERS_COPY")  # dropped
LEGACY = sf("REPORTS.PUBLIC.LEGACY")  # only fed through the dropped table

SPARK_JOB = spark_transformation_urn("clean_orders", STAGED)
COPY_Q = snowflake_query_transformation_urn(ACCOUNT, "copy01", [RAW_ORDERS], [STAGED])
ENRICH_Q = snowflake_query_transformation_urn(ACCOUNT, "enrich01", [ENRICHED], [])
DAILY_Q = snowflake_query_transformation_urn(ACCOUNT, "daily01", [DAILY], [])
REVENUE_Q = snowflake_query_transformation_urn(ACCOUNT, "rev01", [REVENUE], [])
COPY2_Q = snowflake_query_transformation_urn(ACCOUNT, "scratch01", [OLD_COPY], [])
LEGACY_Q = snowflake_query_transformation_urn(ACCOUNT, "legacy01", [LEGACY], [])
DASHBOARD_Q = snowflake_query_transformation_urn(ACCOUNT, "dash01", [], [REVENUE])

JOBS: list[tuple[str, list[str], list[str]]] = [
    (SPARK_JOB, [ORDERS_S3], [STAGED]),
    (COPY_Q, [STAGED], [RAW_ORDERS]),
    (ENRICH_Q, [RAW_ORDERS, CUSTOMERS], [ENRICHED]),
    (DAILY_Q, [RAW_ORDERS, ENRICHED], [DAILY]),
    (REVENUE_Q, [DAILY], [REVENUE]),
    (COPY2_Q, [RAW_ORDERS], [OLD_COPY]),
    (LEGACY_Q, [OLD_COPY], [LEGACY]),
    (DASHBOARD_Q, [REVENUE], []),  # a read-only query: consumption, no FLOWS_TO
]
COLUMN_FEEDS = [
    ((RAW_ORDERS, "AMOUNT"), (ENRICHED, "AMOUNT"), ENRICH_Q),
    ((CUSTOMERS, "REGION"), (ENRICHED, "REGION"), ENRICH_Q),
    ((ENRICHED, "AMOUNT"), (DAILY, "REVENUE"), DAILY_Q),
    ((RAW_ORDERS, "AMOUNT"), (DAILY, "REVENUE"), DAILY_Q),
    ((ENRICHED, "REGION"), (DAILY, "REGION"), DAILY_Q),
    ((DAILY, "REVENUE"), (REVENUE, "TOTAL"), REVENUE_Q),
]


def lineage_items() -> list[Item]:
    kinds = {RAW_FILE: "File", ORDERS_S3: "Dataset", STAGED: "Dataset"}
    urns = [
        RAW_FILE,
        ORDERS_S3,
        STAGED,
        RAW_ORDERS,
        CUSTOMERS,
        ENRICHED,
        DAILY,
        REVENUE,
        OLD_COPY,
        LEGACY,
    ]
    items: list[Item] = [
        Asset(u, kinds.get(u, "Table"), system_of(u), name_of(u), T0)  # type: ignore[arg-type]
        for u in urns
    ]
    items.append(PartOf(RAW_FILE, ORDERS_S3))
    for i, (job, reads, writes) in enumerate(JOBS):
        at = T0 + 1000 * i
        items.append(
            Transformation(
                job, system_of(job), name_of(job), f"run{i}", at, "etl", tuple(reads), tuple(writes)
            )
        )
        items.extend(Flow(r, w, at, job) for r in reads for w in writes)
    columns = {c for src, dst, _ in COLUMN_FEEDS for c in (src, dst)}
    items.extend(Column(column_urn(a, c), a, c, T0) for a, c in sorted(columns))
    items.extend(
        ColumnFeed(column_urn(*src), column_urn(*dst), T0, via) for src, dst, via in COLUMN_FEEDS
    )
    return items


def soft_delete(store: GraphStore, urn: str, at: int) -> None:
    """What a DROP seen in ACCESS_HISTORY does to an asset (test setup only)."""
    store.execute(
        "MATCH (a:Asset {urn: $urn}) SET a.deleted_at = $at", {"urn": urn, "at": at}, write=True
    )


def build(store: GraphStore) -> None:
    writer = GraphWriter(store)
    writer.add_all(lineage_items())
    writer.flush()
    soft_delete(store, OLD_COPY, T0 + 10_000)


@pytest.fixture
def graph(store: GraphStore) -> GraphStore:
    build(store)
    return store


@pytest.fixture
def settings() -> Settings:
    return Settings(identity={"snowflake_account": ACCOUNT})


def distances(found: list[lineage.Reached]) -> dict[str, int]:
    return {r.urn: r.distance for r in found}


# --- upstream / downstream ------------------------------------------------------------------


def test_downstream_returns_each_asset_once_at_its_shortest_distance(graph: GraphStore) -> None:
    found = lineage.traverse(graph, ORDERS_S3, "downstream")
    # DAILY is reached twice (directly from RAW_ORDERS and through ENRICHED): listed once, at 3.
    assert distances(found) == {STAGED: 1, RAW_ORDERS: 2, ENRICHED: 3, DAILY: 3, REVENUE: 4}
    assert [r.distance for r in found] == sorted(r.distance for r in found)
    daily = next(r for r in found if r.urn == DAILY)
    assert daily.reached_from == (RAW_ORDERS,)
    assert daily.linked_from == (ENRICHED,)  # the other edge into it, for the picture
    assert daily.via == (DAILY_Q,)
    assert (daily.kind, daily.system, daily.name) == ("Table", "snowflake", "DAILY_SALES")
    staged = found[0]
    assert (staged.kind, staged.system, staged.via) == ("Dataset", "s3", (SPARK_JOB,))


def test_upstream_follows_flows_backwards(graph: GraphStore) -> None:
    found = lineage.traverse(graph, REVENUE, "upstream")
    assert distances(found) == {
        DAILY: 1, RAW_ORDERS: 2, ENRICHED: 2, CUSTOMERS: 3, STAGED: 3, ORDERS_S3: 4,
    }  # fmt: skip
    enriched = next(r for r in found if r.urn == ENRICHED)
    assert enriched.reached_from == (DAILY,) and enriched.via == (DAILY_Q,)
    # RAW_ORDERS also feeds ENRICHED, both two hops up: a link, not a second distance.
    assert next(r for r in found if r.urn == RAW_ORDERS).linked_from == (ENRICHED,)
    # PART_OF is not lineage: the listed file under the prefix is not upstream.
    assert RAW_FILE not in distances(found)


def test_depth_bounds_the_search(graph: GraphStore) -> None:
    assert distances(lineage.traverse(graph, ORDERS_S3, "downstream", depth=2)) == {
        STAGED: 1,
        RAW_ORDERS: 2,
    }
    assert distances(lineage.traverse(graph, REVENUE, "upstream", depth=1)) == {DAILY: 1}


def test_deleted_assets_are_neither_shown_nor_followed_by_default(graph: GraphStore) -> None:
    default = distances(lineage.traverse(graph, RAW_ORDERS, "downstream"))
    assert OLD_COPY not in default and LEGACY not in default
    everything = lineage.traverse(graph, RAW_ORDERS, "downstream", include_deleted=True)
    assert distances(everything)[OLD_COPY] == 1 and distances(everything)[LEGACY] == 2
    old = next(r for r in everything if r.urn == OLD_COPY)
    assert old.deleted_at == T0 + 10_000


def test_starting_at_a_deleted_asset_needs_include_deleted(graph: GraphStore) -> None:
    with pytest.raises(AssetDeleted, match="--include-deleted"):
        lineage.traverse(graph, OLD_COPY, "downstream")
    assert distances(lineage.traverse(graph, OLD_COPY, "downstream", include_deleted=True)) == {
        LEGACY: 1
    }


def test_filters_choose_what_is_shown_not_what_is_followed(graph: GraphStore) -> None:
    datasets = lineage.traverse(graph, REVENUE, "upstream", kinds=["Dataset"])
    assert distances(datasets) == {STAGED: 3, ORDERS_S3: 4}
    # The tables between were left out, so STAGED connects straight back to the start.
    assert [r.reached_from for r in datasets] == [(REVENUE,), (STAGED,)]
    tables = lineage.traverse(
        graph, ORDERS_S3, "downstream", systems=["snowflake"], kinds=["Table"]
    )
    assert distances(tables) == {RAW_ORDERS: 2, ENRICHED: 3, DAILY: 3, REVENUE: 4}
    assert next(r for r in tables if r.urn == RAW_ORDERS).reached_from == (ORDERS_S3,)
    assert lineage.traverse(graph, ORDERS_S3, "downstream", systems=["spark"]) == []


def test_a_cycle_ends_the_search(store: GraphStore) -> None:
    a, b, c = (sf(f"DB.S.{n}") for n in "ABC")
    writer = GraphWriter(store)
    writer.add_all([Asset(u, "Table", "snowflake", name_of(u), T0) for u in (a, b, c)])
    writer.add_all([Flow(a, b, T0), Flow(b, c, T0), Flow(c, a, T0)])
    writer.flush()
    assert distances(lineage.traverse(store, a, "downstream", depth=50)) == {b: 1, c: 2}
    assert distances(lineage.traverse(store, a, "upstream", depth=50)) == {c: 1, b: 2}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"depth": 0}, "depth must be between 1 and"),
        ({"kinds": ["Tabel"]}, "unknown asset kind"),
    ],
)
def test_bad_traversal_arguments(graph: GraphStore, kwargs: dict, message: str) -> None:
    with pytest.raises(LineageGraphError, match=message):
        lineage.traverse(graph, ORDERS_S3, "downstream", **kwargs)


def test_unknown_start_lists_close_urns(graph: GraphStore) -> None:
    with pytest.raises(AssetNotFound, match="no asset") as caught:
        lineage.traverse(graph, sf("REPORTS.PUBLIC.REVENUES"), "upstream")
    assert caught.value.suggestions[0] == REVENUE


# --- paths ----------------------------------------------------------------------------------


def test_paths_shortest_first_with_transformations(graph: GraphStore) -> None:
    found = lineage.paths(graph, ORDERS_S3, DAILY, max_depth=10)
    assert [[a.urn for a in p.assets] for p in found] == [
        [ORDERS_S3, STAGED, RAW_ORDERS, DAILY],
        [ORDERS_S3, STAGED, RAW_ORDERS, ENRICHED, DAILY],
    ]
    assert [p.hops for p in found] == [3, 4]
    assert found[0].via == ((SPARK_JOB,), (COPY_Q,), (DAILY_Q,))
    assert found[0].assets[2].kind == "Table" and found[0].assets[1].system == "s3"


def test_paths_depth_and_limit(graph: GraphStore) -> None:
    assert [p.hops for p in lineage.paths(graph, ORDERS_S3, DAILY, max_depth=3)] == [3]
    assert [p.hops for p in lineage.paths(graph, ORDERS_S3, DAILY, limit=1)] == [3]
    assert lineage.paths(graph, ORDERS_S3, DAILY, max_depth=2) == []
    assert lineage.paths(graph, REVENUE, ORDERS_S3) == []  # against the flow


def test_paths_through_deleted_assets_only_when_asked(graph: GraphStore) -> None:
    assert lineage.paths(graph, RAW_ORDERS, LEGACY) == []
    [path] = lineage.paths(graph, RAW_ORDERS, LEGACY, include_deleted=True)
    assert [a.urn for a in path.assets] == [RAW_ORDERS, OLD_COPY, LEGACY]


def test_path_arguments_are_checked(graph: GraphStore) -> None:
    with pytest.raises(LineageGraphError, match="between 1 and 20"):
        lineage.paths(graph, ORDERS_S3, DAILY, max_depth=21)
    with pytest.raises(LineageGraphError, match="same asset"):
        lineage.paths(graph, DAILY, DAILY)


def test_path_statement_bound_is_the_library_limit() -> None:
    assert f"*1..{lineage.MAX_PATH_DEPTH}]" in statement("lineage_paths")


# --- impact ---------------------------------------------------------------------------------


def test_impact_groups_assets_and_lists_affected_transformations(graph: GraphStore) -> None:
    result = lineage.impact(graph, RAW_ORDERS)
    assert result.start.urn == RAW_ORDERS
    assert {k: [r.urn for r in v] for k, v in result.groups.items()} == {
        ("snowflake", "Table"): [DAILY, ENRICHED, REVENUE],
    }
    readers = {t.urn: t.reads for t in result.transformations}
    # Every job reading the start or an impacted asset, the read-only dashboard included; not
    # the jobs upstream, nor the one reading the dropped copy.
    assert readers == {
        ENRICH_Q: (RAW_ORDERS,),
        DAILY_Q: tuple(sorted([RAW_ORDERS, ENRICHED])),
        REVENUE_Q: (DAILY,),
        COPY2_Q: (RAW_ORDERS,),
        DASHBOARD_Q: (REVENUE,),
    }
    dashboard = next(t for t in result.transformations if t.urn == DASHBOARD_Q)
    assert (dashboard.system, dashboard.user, dashboard.runs) == ("snowflake", "etl", 1)


def test_impact_across_systems(graph: GraphStore) -> None:
    result = lineage.impact(graph, ORDERS_S3)
    assert sorted(result.groups) == [("s3", "Dataset"), ("snowflake", "Table")]
    assert [r.urn for r in result.groups["s3", "Dataset"]] == [STAGED]
    assert SPARK_JOB in {t.urn for t in result.transformations}


# --- columns --------------------------------------------------------------------------------


def test_column_lineage_both_ways(graph: GraphStore) -> None:
    revenue = column_urn(DAILY, "REVENUE")
    up = lineage.column_lineage(graph, revenue, "upstream")
    assert distances(up) == {column_urn(ENRICHED, "AMOUNT"): 1, column_urn(RAW_ORDERS, "AMOUNT"): 1}
    assert all(r.kind == "Column" and r.system == "snowflake" for r in up)
    assert up[0].via == (DAILY_Q,)
    down = lineage.column_lineage(graph, column_urn(CUSTOMERS, "REGION"), "downstream")
    assert distances(down) == {column_urn(ENRICHED, "REGION"): 1, column_urn(DAILY, "REGION"): 2}


def test_column_lineage_of_unknown_column(graph: GraphStore) -> None:
    with pytest.raises(AssetNotFound, match="no column"):
        lineage.column_lineage(graph, column_urn(DAILY, "NOPE"), "upstream")


# --- resolving what a user types ------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        (DAILY, DAILY),
        ("analytics.marts.daily_sales", DAILY),
        ("ANALYTICS.MARTS.DAILY_SALES", DAILY),
        (f"snowflake://{ACCOUNT.upper()}/analytics.marts.daily_sales", DAILY),
        ("s3a://raw-bucket/orders/", ORDERS_S3),
        ("s3://raw-bucket//orders/dt=2024-02-02/", ORDERS_S3),  # folded like a Spark path
        (RAW_FILE, RAW_FILE),  # a listed File's urn is taken literally, never folded
        ("daily_sales", DAILY),  # a unique short name
        ("  revenue ", REVENUE),
    ],
)
def test_resolve(graph: GraphStore, settings: Settings, typed: str, expected: str) -> None:
    assert lineage.resolve(graph, settings, typed) == expected


def test_resolve_takes_a_urn_with_whitespace_at_its_ends_exactly(
    graph: GraphStore, settings: Settings
) -> None:
    """Any name is data: a urn ending (or starting) in whitespace is its own asset, beside the
    one without it; whitespace typed around a name that has none is still forgiven."""
    urns = ["s3://lake/Q1 ", "s3://lake/Q1", "postgres://h/\tt\t", "postgres://h/ \x00 "]
    writer = GraphWriter(graph)
    writer.add_all(Asset(u, "Dataset", system_of(u), name_of(u), T0) for u in urns)
    writer.flush()
    for urn in urns:
        assert lineage.resolve(graph, settings, urn) == urn
    assert lineage.resolve(graph, settings, " s3://lake/Q1\n") == "s3://lake/Q1"


def test_resolve_column_takes_names_with_whitespace_at_their_ends_exactly(
    graph: GraphStore, settings: Settings
) -> None:
    """As for assets: `x #ID ` is the column `ID ` of the asset `x `, beside `ID` of `x`."""
    writer = GraphWriter(graph)
    for asset, column in (("s3://lake/Q1 ", "ID "), ("s3://lake/Q1", "ID")):
        writer.add_all(
            [
                Asset(asset, "Dataset", "s3", name_of(asset), T0),
                Column(column_urn(asset, column), asset, column, T0),
            ]
        )
    writer.flush()
    assert lineage.resolve_column(graph, settings, "s3://lake/Q1 #ID ") == "s3://lake/Q1 #ID "
    assert lineage.resolve_column(graph, settings, "s3://lake/Q1#ID") == "s3://lake/Q1#ID"
    assert lineage.resolve_column(graph, settings, " s3://lake/Q1#ID\n") == "s3://lake/Q1#ID"


def test_suggestions_show_control_characters_instead_of_sending_them(
    graph: GraphStore, settings: Settings
) -> None:
    """A suggested name holding ESC or a newline must neither drive the terminal nor break
    the message's lines; the suggestions themselves stay exact."""
    urns = ["s3://lake/orders\x1b[31m", "s3://lake/orders\nx"]
    writer = GraphWriter(graph)
    writer.add_all(Asset(u, "Dataset", "s3", name_of(u), T0) for u in urns)
    writer.flush()
    with pytest.raises(AssetNotFound) as caught:
        lineage.resolve(graph, settings, "s3://lake/ordrs")
    assert set(urns) <= set(caught.value.suggestions)
    message = str(caught.value)
    assert "\x1b" not in message and "s3://lake/orders\\x1b[31m" in message
    assert "s3://lake/orders\\x0ax" in message


def test_resolve_ambiguous_name_lists_them(graph: GraphStore, settings: Settings) -> None:
    with pytest.raises(AssetNotFound, match="names several assets") as caught:
        lineage.resolve(graph, settings, "orders")
    assert set(caught.value.suggestions) == {ORDERS_S3, STAGED, RAW_ORDERS}
    assert STAGED in str(caught.value)


def test_resolve_typo_suggests_closest(graph: GraphStore, settings: Settings) -> None:
    with pytest.raises(
        AssetNotFound, match=re.escape("no asset matches 'raw.public.ordrs'")
    ) as caught:
        lineage.resolve(graph, settings, "raw.public.ordrs")
    assert caught.value.suggestions[0] == RAW_ORDERS
    assert f"did you mean:\n  {RAW_ORDERS}" in str(caught.value)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("DAU_DASHBORD", "snowflake://acme-prod/BI.PUBLIC.DAU_DASHBOARD"),
        ("events_daly", "s3://lake/events_daily"),
        ("s3://lake/evnts-daily", "s3://lake/events_daily"),
        ("bi.public.dau_dashbord", "snowflake://acme-prod/BI.PUBLIC.DAU_DASHBOARD"),
    ],
)
def test_resolve_suggests_names_with_a_typo_inside_a_word(
    graph: GraphStore, settings: Settings, typed: str, expected: str
) -> None:
    writer = GraphWriter(graph)
    for urn in (
        "snowflake://acme-prod/BI.PUBLIC.DAU_DASHBOARD",
        "snowflake://acme-prod/BI.PUBLIC.DAU_DASHBOARD_BACKUP",
        "snowflake://acme-prod/BI.PUBLIC.WAU_DASHBOARD",
        "s3://lake/events_daily",
        "s3://lake/events_daily_v2",
        "s3://lake/events_hourly",
    ):
        writer.add(
            Asset(
                urn, "Table" if "snowflake" in urn else "Dataset", system_of(urn), name_of(urn), T0
            )
        )
    writer.flush()
    with pytest.raises(AssetNotFound, match="no asset matches") as caught:
        lineage.resolve(graph, settings, typed)
    assert caught.value.suggestions[0] == expected


def test_resolve_marks_deleted_suggestions(graph: GraphStore, settings: Settings) -> None:
    with pytest.raises(AssetNotFound) as caught:
        lineage.resolve(graph, settings, "analytics.scratch.orders_cpy")
    assert caught.value.suggestions[0] == f"{OLD_COPY} (deleted)"


def test_resolve_without_account_finds_the_only_match(graph: GraphStore) -> None:
    assert lineage.resolve(graph, Settings(), "analytics.marts.daily_sales") == DAILY
    other = Asset(
        "snowflake://other-acct/ANALYTICS.MARTS.DAILY_SALES",
        "Table",
        "snowflake",
        "DAILY_SALES",
        T0,
    )
    writer = GraphWriter(graph)
    writer.add(other)
    writer.flush()
    with pytest.raises(AssetNotFound, match=re.escape("set identity.snowflake_account")):
        lineage.resolve(graph, Settings(), "analytics.marts.daily_sales")  # two accounts


def test_resolve_without_account_says_what_to_set(graph: GraphStore) -> None:
    with pytest.raises(AssetNotFound, match=re.escape("set identity.snowflake_account")):
        lineage.resolve(graph, Settings(), "analytics.marts.no_such_table")


def test_resolve_column(graph: GraphStore, settings: Settings) -> None:
    expected = column_urn(DAILY, "REVENUE")
    typed = "analytics.marts.daily_sales#revenue"
    assert lineage.resolve_column(graph, settings, typed) == expected
    with pytest.raises(AssetNotFound, match="has no column 'REVENU'") as caught:
        lineage.resolve_column(graph, settings, "analytics.marts.daily_sales#REVENU")
    assert caught.value.suggestions[0] == expected
    with pytest.raises(UsageError, match="write ASSET#COLUMN"):
        lineage.resolve_column(graph, settings, "analytics.marts.daily_sales")


# --- the named example statements -----------------------------------------------------------


def test_example_s3_to_table_path(graph: GraphStore) -> None:
    rows = graph.read("example_s3_to_table_path", {"prefix": "s3://raw-bucket", "table": DAILY})
    assert rows == [
        {"source": ORDERS_S3, "hops": 3, "path": [ORDERS_S3, STAGED, RAW_ORDERS, DAILY]}
    ]


def test_example_table_feeders(graph: GraphStore) -> None:
    rows = graph.read("example_table_feeders", {"table": DAILY})
    assert [(r["distance"], r["urn"], r["kind"]) for r in rows] == [
        (1, ENRICHED, "Table"),
        (1, RAW_ORDERS, "Table"),
        (2, STAGED, "Dataset"),
        (2, CUSTOMERS, "Table"),
        (3, ORDERS_S3, "Dataset"),
    ]


# --- the commands ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedded store with the lineage graph, shared by the command tests (read-only)."""
    data_dir = tmp_path_factory.mktemp("lineage-cli")
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.init_schema()
        build(store)
    return data_dir


@pytest.fixture
def run(cli_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    runner = CliRunner()

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        env = {"LINEAGEGRAPH_IDENTITY__SNOWFLAKE_ACCOUNT": ACCOUNT}
        return runner.invoke(cli, ["--data-dir", str(cli_dir), *args], env=env)

    return invoke


def test_cli_downstream_table(run) -> None:  # type: ignore[no-untyped-def]
    result = run("downstream", "s3a://raw-bucket/orders/", "--label", "table")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"downstream of {ORDERS_S3}: 4 asset(s) within 20 hop(s)"
    assert lines[1].split() == ["distance", "system", "kind", "written_by", "urn"]
    assert lines[3].split() == ["2", "snowflake", "Table", COPY_Q, RAW_ORDERS]
    assert lines[-1] == "(4 rows)"


def test_cli_upstream_table_names_the_job_that_reads_each_asset(run) -> None:  # type: ignore[no-untyped-def]
    result = run("upstream", "analytics.marts.daily_sales")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1].split() == ["distance", "system", "kind", "urn", "read_by"]
    rows = {line.split()[3]: line.split()[4:] for line in lines[3:-1]}
    # The raw prefix is read by the Spark job (which wrote the staged copy), not produced by it.
    assert rows[ORDERS_S3] == [SPARK_JOB]
    assert rows[STAGED] == [COPY_Q]


def test_cli_upstream_json_and_tree(run) -> None:  # type: ignore[no-untyped-def]
    result = run("upstream", "reports.public.revenue", "--depth", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["start"]["urn"] == REVENUE and data["direction"] == "upstream"
    assert {a["urn"]: a["distance"] for a in data["assets"]} == {
        DAILY: 1, RAW_ORDERS: 2, ENRICHED: 2,
    }  # fmt: skip
    tree = run("upstream", "reports.public.revenue", "--depth", "2", "--format", "tree")
    assert tree.output.splitlines() == [
        f"{REVENUE}  [snowflake Table]",
        f"└── ◀ {DAILY}  [snowflake Table]  read by {REVENUE_Q}",
        f"    ├── ◀ {ENRICHED}  [snowflake Table]  read by {DAILY_Q}",
        f"    └── ◀ {RAW_ORDERS}  [snowflake Table]  read by {DAILY_Q}",
    ]


def test_cli_path(run) -> None:  # type: ignore[no-untyped-def]
    result = run("path", "s3://raw-bucket/orders", "analytics.marts.daily_sales")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:5] == [
        "path 1 (3 hops)",
        f"  {ORDERS_S3}",
        f"  └▶ {STAGED}  via {SPARK_JOB}",
        f"  └▶ {RAW_ORDERS}  via {COPY_Q}",
        f"  └▶ {DAILY}  via {DAILY_Q}",
    ]
    assert "path 2 (4 hops)" in result.output
    none = run("path", "analytics.marts.daily_sales", "s3://raw-bucket/orders")
    assert none.exit_code == 0 and none.output.startswith("no path from")


def test_path_from_an_s3_object_starts_from_its_dataset(graph: GraphStore) -> None:
    assert lineage.paths(graph, RAW_FILE, DAILY) == []  # the object has no FLOWS_TO itself
    answer = lineage.paths_between(graph, RAW_FILE, DAILY)
    assert (answer.src, answer.dst) == (ORDERS_S3, DAILY)
    assert [p.assets[0].urn for p in answer.paths] == [ORDERS_S3, ORDERS_S3]
    assert answer.notes == (
        f"FROM {RAW_FILE} is an S3 object with no lineage of its own: showing the paths from "
        f"the dataset it is part of, {ORDERS_S3}",
    )
    nothing = lineage.paths_between(graph, DAILY, RAW_FILE)  # no path either way
    assert (nothing.src, nothing.dst, nothing.paths, nothing.notes) == (DAILY, RAW_FILE, [], ())
    direct = lineage.paths_between(graph, ORDERS_S3, DAILY)
    assert direct.notes == () and len(direct.paths) == 2


def test_cli_path_from_an_s3_object(run) -> None:  # type: ignore[no-untyped-def]
    result = run("path", RAW_FILE, "analytics.marts.daily_sales")
    assert result.exit_code == 0, result.output
    assert f"showing the paths from the dataset it is part of, {ORDERS_S3}" in result.stderr
    assert "path 1 (3 hops)" in result.stdout and f"  {ORDERS_S3}" in result.stdout
    data = json.loads(
        run("path", RAW_FILE, "analytics.marts.daily_sales", "--format", "json").stdout
    )
    assert data["from"]["urn"] == ORDERS_S3 and len(data["notes"]) == 1


def test_cli_impact(run) -> None:  # type: ignore[no-untyped-def]
    result = run("impact", "raw.public.orders")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        f"impact of {RAW_ORDERS}: 3 downstream asset(s), 5 transformation(s) reading them"
    )
    assert "snowflake Table (3)" in result.output and DASHBOARD_Q in result.output
    assert "reads" in result.output.split("affected transformations")[1].splitlines()[1]
    assert "writes" in result.output.split("affected transformations")[1].splitlines()[1]
    data = json.loads(run("impact", "raw.public.orders", "--format", "json").stdout)
    assert list(data["groups"]) == ["snowflake/Table"]
    assert len(data["transformations"]) == 5
    writes = {t["urn"]: t["writes"] for t in data["transformations"]}
    assert writes[DAILY_Q] == [DAILY] and writes[DASHBOARD_Q] == []


def test_cli_columns(run) -> None:  # type: ignore[no-untyped-def]
    result = run("columns", "analytics.marts.daily_sales#revenue")
    assert result.exit_code == 0, result.output
    assert f"upstream of {column_urn(DAILY, 'REVENUE')}: 2 column(s)" in result.output
    assert f"downstream of {column_urn(DAILY, 'REVENUE')}: 1 column(s)" in result.output
    assert column_urn(REVENUE, "TOTAL") in result.output


@pytest.mark.parametrize("fmt", ["mermaid", "dot", "html"])
def test_cli_pictures_to_a_file(run, tmp_path: Path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / f"lineage.{fmt}"
    result = run("downstream", "raw.public.orders", "--format", fmt, "--output", str(out))
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith({"mermaid": "flowchart LR", "dot": "digraph", "html": "<!DOCTYPE"}[fmt])
    assert "DAILY_SALES" in text and "REVENUE" in text
    assert list(tmp_path.glob(".*.tmp")) == []


def test_cli_unknown_name_exits_non_zero_with_suggestions(run) -> None:  # type: ignore[no-untyped-def]
    result = run("upstream", "analytics.marts.daily_sale")
    assert result.exit_code == NotFound.exit_code == 7  # a user's typo, not a bug (1)
    assert result.stderr.startswith("error: no asset matches 'analytics.marts.daily_sale'")
    assert f"did you mean:\n  {DAILY}" in result.stderr
    assert result.stdout == ""


def test_cli_deleted_start_and_bad_output_path(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    deleted = run("downstream", "analytics.scratch.orders_copy")
    assert deleted.exit_code == 7 and "--include-deleted" in deleted.stderr
    shown = run("downstream", "analytics.scratch.orders_copy", "--include-deleted")
    assert shown.exit_code == 0 and LEGACY in shown.output
    missing_dir = tmp_path / "no" / "such" / "dir" / "x.html"
    bad = run("downstream", "raw.public.orders", "--format", "html", "-o", str(missing_dir))
    assert bad.exit_code == 2 and f"cannot write {missing_dir}" in bad.stderr
    assert not missing_dir.parent.exists()


def test_cli_user_mistakes_are_not_bugs(run) -> None:  # type: ignore[no-untyped-def]
    """Exit 1 says "a bug: report it"; a column without #COLUMN is usage (2), a column the
    asset does not have is "no such asset or column" (7)."""
    no_column = run("columns", "analytics.marts.daily_sales")
    assert no_column.exit_code == 2 and "write ASSET#COLUMN" in no_column.stderr
    typo = run("columns", "analytics.marts.daily_sales#REVENU")
    assert typo.exit_code == 7 and "has no column 'REVENU'" in typo.stderr
    same = run("path", "raw.public.orders", "raw.public.orders")
    assert same.exit_code == 2 and "FROM and TO are the same asset" in same.stderr


def test_cli_path_says_when_a_path_runs_the_other_way(run) -> None:  # type: ignore[no-untyped-def]
    result = run("path", "analytics.marts.daily_sales", "s3://raw-bucket/orders")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"no path from {DAILY} to {ORDERS_S3} within 10 hop(s); one runs the other way: "
        f"path {ORDERS_S3} {DAILY}"
    )
    neither = run("path", "analytics.marts.daily_sales", "reports.public.legacy")
    assert neither.stdout.strip() == f"no path from {DAILY} to {LEGACY} within 10 hop(s)"


def test_cli_path_prints_its_note_once(run) -> None:  # type: ignore[no-untyped-def]
    """On a terminal stdout and stderr both show: the note goes to stderr only."""
    result = run("path", RAW_FILE, "analytics.marts.daily_sales")
    assert result.exit_code == 0, result.output
    assert (result.stdout + result.stderr).count("is an S3 object with no lineage") == 1
    assert result.stderr.startswith(f"note: FROM {RAW_FILE} is an S3 object")


def test_cli_html_is_not_poured_onto_a_terminal(cli_dir: Path, tmp_path: Path) -> None:
    """`--format html` without -o on a terminal (a real pty) is a usage error (exit 2) that
    says to write a file; into a pipe it is the page, as asked."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    env["LINEAGEGRAPH_IDENTITY__SNOWFLAKE_ACCOUNT"] = ACCOUNT
    argv = [
        sys.executable,
        "-m",
        "lineagegraph.cli",
        "--data-dir",
        str(cli_dir),
        "impact",
        "raw.public.orders",
        "--format",
        "html",
    ]
    main, secondary = pty.openpty()
    try:
        tty = subprocess.run(
            argv,
            stdout=secondary,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    finally:
        os.close(secondary)
        os.close(main)
    assert tty.returncode == 2, tty.stderr
    assert "-o lineage.html" in tty.stderr
    piped = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith("<!DOCTYPE html>")


def test_cli_path_depth_is_bounded(run) -> None:  # type: ignore[no-untyped-def]
    result = run("path", "raw.public.orders", "reports.public.revenue", "--depth", "21")
    assert result.exit_code == 2 and "21 is not in the range 1<=x<=20" in result.stderr


READ_COMMANDS = [
    ["upstream", "raw.public.orders"],
    ["downstream", "raw.public.orders"],
    ["impact", "raw.public.orders"],
    ["path", "raw.public.orders", "reports.public.revenue"],
    ["columns", "raw.public.orders#AMOUNT"],
    ["orphans"],
    ["cost-report"],
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda args: args[0])
def test_cli_read_commands_refuse_a_store_that_does_not_exist(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    typo = tmp_path / "lineagegrpah"
    result = CliRunner().invoke(cli, ["--data-dir", str(typo), *args])
    assert result.exit_code == 3, result.output
    assert f"no graph store at '{typo}': the directory does not exist" in result.stderr
    assert "--data-dir" in result.stderr and "lineagegraph harvest" in result.stderr
    assert not typo.exists()  # nothing created
    typo.mkdir()  # a directory, but no store in it
    again = CliRunner().invoke(cli, ["--data-dir", str(typo), *args])
    assert again.exit_code == 3 and "holds no store files" in again.stderr
    assert list(typo.iterdir()) == []


@pytest.fixture(scope="module")
def empty_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store that exists, with a schema and nothing harvested."""
    data_dir = tmp_path_factory.mktemp("empty-store")
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.init_schema()
    return data_dir


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (READ_COMMANDS[0], "holds no assets yet: run `lineagegraph harvest all` first"),
        (READ_COMMANDS[3], "holds no assets yet"),
        (READ_COMMANDS[5], "holds no S3 objects yet: run `lineagegraph harvest s3` first"),
        (READ_COMMANDS[6], "holds no S3 objects yet"),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else "",
)
def test_cli_read_commands_on_an_empty_graph_say_harvest_first(
    args: list[str], what: str, empty_dir: Path
) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(empty_dir), *args])
    assert result.exit_code == 3, result.output
    assert what in result.stderr and result.stdout == ""


# --- short names of dotted table names (OpenLineage naming) ---------------------------------

REVENUE_DUCK = "duckdb://shop.duckdb/shop.main.customer_revenue"


@pytest.fixture(scope="module")
def openlineage_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store harvested by the real CLI from dbt-ol-style events: tables of several systems
    named the OpenLineage way (`{namespace}/{db}.{schema}.{table}`), a Snowflake table whose
    quoted name holds a dot, and an S3 export whose file name has dots."""

    def event(job: str, inputs: list[tuple[str, str]], output: tuple[str, str]) -> str:
        return json.dumps({
            "eventType": "COMPLETE", "eventTime": "2024-05-01T00:00:00Z",
            "run": {"runId": f"run-{job}"}, "job": {"namespace": "dbt", "name": job},
            "inputs": [{"namespace": ns, "name": name} for ns, name in inputs],
            "outputs": [{"namespace": output[0], "name": output[1]}],
        })  # fmt: skip

    duck, pg = "duckdb://shop.duckdb", "postgres://db:5432"
    lines = [
        event("revenue", [(duck, "shop.main.orders")], (duck, "shop.main.customer_revenue")),
        event("pg", [(pg, "crm.public.orders")], ("bigquery", "proj.sales.daily_totals")),
        event("spark", [("spark://lake", "sales.events")], (pg, "crm.public.v2")),
        event("sf", [("snowflake://acme", 'DB.S."My.Tab"')], ("s3://exports", "out/report.v2")),
    ]
    root = tmp_path_factory.mktemp("openlineage-names")
    (root / "events.jsonl").write_text("\n".join(lines) + "\n")
    harvested = CliRunner().invoke(
        cli, ["--data-dir", str(root / "g"), "harvest", "openlineage", str(root / "events.jsonl")]
    )
    assert harvested.exit_code == 0, harvested.output
    return root / "g"


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("customer_revenue", REVENUE_DUCK),  # duckdb, the case
        ("Customer_Revenue", REVENUE_DUCK),
        ("main.customer_revenue", REVENUE_DUCK),  # a longer dotted tail
        ("shop.main.customer_revenue", REVENUE_DUCK),  # the whole name, as before
        ("daily_totals", "bigquery:///proj.sales.daily_totals"),
        ("events", "spark://lake/sales.events"),  # a Spark catalog table
        ("my.tab", 'snowflake://acme/DB.S."My.Tab"'),  # Snowflake's name is whole, as before
        ("report.v2", "s3://exports/out/report.v2"),  # a path's last segment, as before
        ("v2", "postgres://db:5432/crm.public.v2"),  # a path's dots are no separators
    ],
)
def test_cli_a_dotted_tables_last_parts_are_its_short_name(
    openlineage_dir: Path, typed: str, expected: str
) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(openlineage_dir), "upstream", typed])
    assert result.exit_code == 0, result.output
    assert re.match(rf"(nothing )?upstream of {re.escape(expected)}[: ]", result.output)


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        # two tables share the short name: the ambiguity answer lists both
        ("orders", "names several assets; give the full urn"),
        # a path's dots and a Snowflake name's are no separators
        ("tab", "no asset matches 'tab'"),
        ("main", "no asset matches 'main'"),  # only trailing parts are short names
        ("omer_revenue", "no asset matches 'omer_revenue'"),  # whole parts only
    ],
)
def test_cli_short_names_stay_unambiguous(openlineage_dir: Path, typed: str, answer: str) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(openlineage_dir), "upstream", typed])
    assert result.exit_code == 7, result.output  # no such asset
    assert answer in result.stderr
    if typed == "orders":
        assert "duckdb://shop.duckdb/shop.main.orders" in result.stderr
        assert "postgres://db:5432/crm.public.orders" in result.stderr


def test_upstream_lists_who_reads_the_assets_on_the_way_straight_from_s3(
    graph: GraphStore, settings: Settings
) -> None:
    """A principal seen only in S3 access logs writes nothing, so no FLOWS_TO shows it:
    upstream names it with what it read (the start or an asset shown), and no other reader
    (the Spark job reading the same prefix is already the edge's `read_by`)."""
    analyst = s3_access_transformation_urn("raw-bucket", "arn:aws:iam::1:user/ann")
    last_read = T0 + 86_400_000
    writer = GraphWriter(graph)
    writer.add(Transformation(analyst, S3_ACCESS_SYSTEM, "arn:aws:iam::1:user/ann", "r9",
                              last_read, "arn:aws:iam::1:user/ann", (ORDERS_S3,)))  # fmt: skip
    writer.flush()
    answer = answers.upstream(graph, settings, "analytics.marts.daily_sales")
    assert [(r.urn, r.reads, r.writes) for r in answer.readers] == [(analyst, (ORDERS_S3,), ())]
    text = answer.render("table").splitlines()
    assert text[text.index("read directly from S3 by 1 principal(s)") + 1].split() == [
        "principal", "last_read", "reads", "urn"
    ]  # fmt: skip
    assert text[-2].split() == ["arn:aws:iam::1:user/ann", "2024-05-30", "16:26:40Z",
                                ORDERS_S3, analyst]  # fmt: skip
    data = json.loads(answer.render("json"))
    assert [(r["urn"], r["reads"], r["last_run_at"]) for r in data["readers"]] == [
        (analyst, [ORDERS_S3], last_read)
    ]
    tree = answer.render("tree").splitlines()
    assert tree[-1].endswith(f"└── ◀ {analyst}  [s3-access Transformation]  (indirect)")
    assert tree[-2].strip("│├└─ ").startswith(f"◀ {ORDERS_S3}  [s3 Dataset]")
    mermaid = answer.render("mermaid")
    assert "arn:aws:iam::1:user/ann<br/><small>writes nothing" in mermaid, mermaid
    # Only upstream: downstream of the prefix, no reader is listed, and none is in its JSON.
    down = answers.downstream(graph, settings, "s3://raw-bucket/orders")
    assert down.readers == [] and "readers" not in json.loads(down.render("json"))
    # A prefix no principal reads: no readers, and the text says nothing of them.
    plain = answers.upstream(graph, settings, "raw.public.customers")
    assert plain.readers == [] and "read directly" not in plain.render("table")
