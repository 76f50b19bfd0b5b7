"""`harvest dbt` on real dbt artifacts: a small project parsed with dbt-snowflake (no
connection) and built for real with dbt-duckdb (dbt_fixtures), written to the real store.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from dbt_fixtures import SNOWFLAKE_ACCOUNT, DbtBuild, rebuilt
from snowflake_fixtures import NOW, AccountUsage, Query, accessed, modified, snowflake_settings

from lineagegraph.cli import cli
from lineagegraph.errors import ConfigError
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.dbt import harvest_dbt, read_project
from lineagegraph.harvest.dbt.artifacts import ArtifactError, iso_ms
from lineagegraph.harvest.dbt.harvester import parsed_ahead
from lineagegraph.harvest.snowflake.harvester import connect, harvest
from lineagegraph.model import Asset, CheckResult, Column, ColumnFeed, Flow, Transformation
from lineagegraph.pipeline import last_watermark
from lineagegraph.questions import lineage

SF = f"snowflake://{SNOWFLAKE_ACCOUNT}/"
FCT, STG = SF + "ANALYTICS.MARTS.FCT_SALES", SF + "ANALYTICS.MARTS.STG_ORDERS"
SEED, SOURCE = SF + "ANALYTICS.MARTS.RAW_CUSTOMERS", SF + "RAW.SALES.OrderLines"
SNAP = SF + "ANALYTICS.MARTS.ORDERS_SNAPSHOT"


def rows(store: GraphStore, cypher: str, **params: Any) -> list[dict[str, Any]]:
    return store.execute(cypher, params, write=False).records()


def edges(store: GraphStore, kind: str) -> set[tuple[str, str]]:
    found = store.execute(
        f"MATCH (a)-[:{kind}]->(b) RETURN a.urn AS a, b.urn AS b", write=False
    ).rows  # the relationship type comes from the test, never from input
    return {(a, b) for a, b in found}


# --- Snowflake: urns as ACCESS_HISTORY gives them -------------------------------------------


def test_snowflake_urns_follow_snowflake_case_rules(dbt_build: DbtBuild) -> None:
    project = read_project(dbt_build.snowflake, snowflake_account=SNOWFLAKE_ACCOUNT)
    items = list(project.items())
    assets = {i.urn: i for i in items if isinstance(i, Asset)}
    # unquoted fct_sales is stored FCT_SALES; the quoted mixed-case source keeps its case;
    # the ephemeral stg_customers is no relation; the disabled old_orders is skipped.
    assert set(assets) == {FCT, STG, SEED, SOURCE, SNAP}
    assert {a.kind for a in assets.values()} == {"Table"}
    assert assets[FCT].props == {
        "dbt_unique_id": "model.shop.fct_sales",
        "dbt_materialized": "table",
    }
    flows = {(f.src, f.dst) for f in items if isinstance(f, Flow)}
    # fct_sales reads the ephemeral stg_customers, which reads the seed: lineage passes through
    assert flows == {(SOURCE, STG), (STG, FCT), (SEED, FCT), (STG, SNAP)}
    jobs = {t.urn: t for t in items if isinstance(t, Transformation)}
    assert set(jobs) == {
        "dbt://shop/model.shop.fct_sales",
        "dbt://shop/model.shop.stg_orders",
        "dbt://shop/snapshot.shop.orders_snapshot",
    }
    assert jobs["dbt://shop/model.shop.fct_sales"].system == "dbt"
    assert jobs["dbt://shop/model.shop.fct_sales"].reads == (STG, SEED)
    columns = {c.urn for c in items if isinstance(c, Column)}
    # YAML column names, unquoted, are stored upper-case on Snowflake
    assert FCT + "#AMOUNT_CENTS" in columns and SOURCE + "#ORDER_ID" in columns
    assert project.report.counts["ephemeral"] == 1 and project.report.counts["disabled"] == 1
    # `dbt parse` compiles nothing: no SQL to read column lineage from, and it says so
    assert project.report.counts["models_without_compiled_sql"] == 3  # the snapshot too


def test_dbt_model_and_access_history_meet_on_one_node(
    store: GraphStore,
    account_usage: AccountUsage,
    fakesnow_server: dict[str, Any],
    dbt_build: DbtBuild,
    tmp_path: Path,
) -> None:
    # The query dbt ran on Snowflake, as ACCESS_HISTORY records it (names as stored).
    account_usage.add(
        Query(
            "dbt-q1",
            NOW - 3_600_000,
            direct=[accessed('RAW.SALES."OrderLines"', "ORDER_ID", "AMOUNT")],
            modified=[
                modified(
                    "ANALYTICS.MARTS.STG_ORDERS",
                    {
                        "ORDER_ID": [('RAW.SALES."OrderLines"', "ORDER_ID")],
                        "AMOUNT_USD": [('RAW.SALES."OrderLines"', "AMOUNT")],
                    },
                )
            ],
            text="create or replace view ANALYTICS.MARTS.stg_orders as select ...",
            query_type="CREATE_VIEW",
        )
    )
    settings = snowflake_settings(fakesnow_server, lookback_days=30)
    connection = connect(settings.snowflake)
    try:
        harvest(store, settings, connection, now=NOW)
    finally:
        connection.close()
    harvest_dbt(store, dbt_build.snowflake, snowflake_account=settings.identity.snowflake_account)

    for urn in (STG, SOURCE):
        found = rows(
            store,
            "MATCH (a:Asset {urn: $urn}) RETURN count(a) AS n, collect(a.dbt_unique_id) AS ids",
            urn=urn,
        )
        assert found[0]["n"] == 1, urn
        assert found[0]["ids"] and found[0]["ids"][0].startswith(("model.", "source."))
    assert (
        rows(
            store,
            "MATCH (a:Asset) WHERE a.urn STARTS WITH $p RETURN count(a) AS n",
            p=SF + "RAW.SALES.",
        )[0]["n"]
        == 1
    )
    # both harvesters' column urns are one node too
    assert (
        rows(store, "MATCH (c:Column {urn: $u}) RETURN count(c) AS n", u=SOURCE + "#ORDER_ID")[0][
            "n"
        ]
        == 1
    )
    assert (SOURCE, STG) in edges(store, "FLOWS_TO")


# --- DuckDB: a real build, with catalog, compiled SQL and test results ----------------------


def test_duckdb_build_gives_columns_lineage_and_checks(dbt_build: DbtBuild) -> None:
    project = read_project(dbt_build.duckdb, namespace=dbt_build.duckdb_namespace)
    items = list(project.items())
    base = dbt_build.duckdb_namespace + "/shop."
    fct, stg = base + "main.fct_sales", base + "main.stg_orders"
    seed, source = base + "main.raw_customers", base + "raw_sales.orders"
    snap = base + "main.orders_snapshot"
    assert {i.urn for i in items if isinstance(i, Asset)} == {fct, stg, seed, source, snap}
    assert {i.system for i in items if isinstance(i, Asset)} == {"duckdb"}
    # columns come from the catalog (the seed's were declared nowhere in YAML)
    columns = {c.urn for c in items if isinstance(c, Column)}
    assert {seed + "#id", seed + "#first_name", seed + "#last_name"} <= columns
    feeds = {(f.src, f.dst) for f in items if isinstance(f, ColumnFeed)}
    assert feeds == {
        (source + "#order_id", stg + "#order_id"),
        (source + "#customer_id", stg + "#customer_id"),
        (source + "#amount", stg + "#amount_usd"),
        (stg + "#order_id", fct + "#order_id"),
        (stg + "#amount_usd", fct + "#amount_cents"),
        # through the ephemeral model, inlined as a CTE, to the seed
        (seed + "#first_name", fct + "#customer_name"),
        (seed + "#last_name", fct + "#customer_name"),
        # the snapshot's `select *` of stg_orders, expanded by the catalog's columns
        (stg + "#order_id", snap + "#order_id"),
        (stg + "#customer_id", snap + "#customer_id"),
        (stg + "#amount_usd", snap + "#amount_usd"),
    }
    vias = {f.via for f in items if isinstance(f, ColumnFeed) and f.dst.startswith(fct)}
    assert vias == {"dbt://shop/model.shop.fct_sales"}
    # dbt's own snapshot columns are in the catalog
    assert snap + "#dbt_valid_from" in columns

    checks = {c.urn.split(".")[2]: c for c in project.checks()}
    assert set(checks) == {"unique_fct_sales_order_id", "not_null_fct_sales_order_id",
                           "not_null_fct_sales_customer_name",
                           "not_null_fct_sales_amount_cents"}  # fmt: skip
    failing = checks["not_null_fct_sales_amount_cents"]
    assert isinstance(failing, CheckResult)
    assert (failing.status, failing.failures, failing.target) == ("fail", 1, fct + "#amount_cents")
    assert failing.system == "dbt" and failing.urn.startswith("test.shop.")
    passing = checks["unique_fct_sales_order_id"]
    assert (passing.status, passing.failures, passing.target) == ("pass", 0, fct + "#order_id")
    results = json.loads((dbt_build.duckdb / "run_results.json").read_text())
    assert {c.run_id for c in checks.values()} == {results["metadata"]["invocation_id"]}
    assert all(c.at > project.at - 3_600_000 for c in checks.values())


def test_harvest_writes_the_graph_and_is_idempotent(store: GraphStore, dbt_build: DbtBuild) -> None:
    namespace = dbt_build.duckdb_namespace
    run, report = harvest_dbt(store, dbt_build.duckdb, namespace=namespace)
    assert run.status == "success" and not report.problems
    first = (edges(store, "FLOWS_TO"), edges(store, "FEEDS"), edges(store, "COLUMN_OF"))
    assert len(first[0]) == 4 and len(first[1]) == 10
    assert edges(store, "WRITES_TO") == {
        ("dbt://shop/model.shop.fct_sales", namespace + "/shop.main.fct_sales"),
        ("dbt://shop/model.shop.stg_orders", namespace + "/shop.main.stg_orders"),
        ("dbt://shop/snapshot.shop.orders_snapshot", namespace + "/shop.main.orders_snapshot"),
    }
    assert rows(store, "MATCH (t:Transformation {system: 'dbt'}) RETURN count(t) AS n")[0]["n"] == 3
    assert (
        last_watermark(store, "dbt", str(dbt_build.duckdb.resolve()))
        == read_project(dbt_build.duckdb, namespace=namespace).at
    )
    harvest_dbt(store, dbt_build.duckdb, namespace=namespace)
    assert (edges(store, "FLOWS_TO"), edges(store, "FEEDS"), edges(store, "COLUMN_OF")) == first
    assert rows(store, "MATCH (a:Asset) RETURN count(a) AS n")[0]["n"] == 5


def test_a_model_that_stops_reading_a_source_drifts(
    store: GraphStore, dbt_build: DbtBuild, tmp_path: Path
) -> None:
    """A later build of fct_sales no longer depends on stg_customers: its lineage stops at the
    later build's time (docs/history.md); as of the first build it is still there."""
    namespace = dbt_build.duckdb_namespace
    harvest_dbt(store, dbt_build.duckdb, namespace=namespace)
    later = _copy(dbt_build.duckdb, tmp_path)
    (later / "run_results.json").unlink()  # each model's run is then the manifest's time
    manifest = json.loads((later / "manifest.json").read_text(encoding="utf-8"))
    manifest["metadata"]["generated_at"] = "2099-01-01T00:00:00Z"
    manifest["nodes"]["model.shop.fct_sales"]["depends_on"]["nodes"] = ["model.shop.stg_orders"]
    (later / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    harvest_dbt(store, later, namespace=namespace)
    # stg_customers is ephemeral: fct_sales reads raw_customers through it
    fct, customers = (f"{namespace}/shop.main.{name}" for name in ("fct_sales", "raw_customers"))
    assert customers not in {r.urn for r in lineage.traverse(store, fct, "upstream", depth=1)}
    (edge,) = rows(
        store,
        "MATCH (:Asset {urn: $src})-[e:FLOWS_TO]->(:Asset {urn: $dst}) "
        "RETURN e.first_seen AS first, e.retired_at AS stopped",
        src=customers,
        dst=fct,
    )
    assert edge["stopped"] == 4070908800000  # 2099-01-01
    built = read_project(dbt_build.duckdb, namespace=namespace).at  # the assets' first sighting
    then = lineage.traverse(store, fct, "upstream", depth=1, as_of=max(edge["first"], built))
    assert customers in {r.urn for r in then}


def test_a_model_that_stops_deriving_a_column_drifts(
    store: GraphStore, dbt_build: DbtBuild, tmp_path: Path
) -> None:
    """fct_sales rebuilt by real dbt without customer_name (it still joins the customers): the
    FEEDS into customer_name stop at the rebuild's run, the model's FLOWS_TO and its other
    FEEDS hold; as of the first build the dropped FEEDS are there. A later run that worked out
    no column lineage (lineage off, no compiled SQL) stops none."""
    namespace = dbt_build.duckdb_namespace
    fct, customers = (f"{namespace}/shop.main.{name}" for name in ("fct_sales", "raw_customers"))
    harvest_dbt(store, dbt_build.duckdb, namespace=namespace)
    sql = "models/marts/fct_sales.sql"
    text = (dbt_build.database.parent / sql).read_text(encoding="utf-8")
    dropped = text.replace("c.full_name as customer_name, ", "")
    assert dropped != text
    later = rebuilt(dbt_build, tmp_path, {sql: dropped}, "run", "-s", "fct_sales")
    run, report = harvest_dbt(store, later.duckdb, namespace=namespace)
    assert run.status == "success" and not report.problems

    def feeds(into: str, as_of: int | None = None) -> set[str]:
        found = lineage.column_lineage(store, f"{fct}#{into}", "upstream", 1, as_of=as_of)
        return {r.urn for r in found}

    names = f"{customers}#first_name", f"{customers}#last_name"
    stopped = rows(
        store,
        "MATCH (a:Column)-[e:FEEDS]->(:Column {urn: $dst}) "
        "RETURN a.urn AS src, e.first_seen AS first, e.retired_at AS at",
        dst=f"{fct}#customer_name",
    )
    assert {r["src"] for r in stopped} == set(names)
    at = stopped[0]["at"]
    results = json.loads((later.duckdb / "run_results.json").read_text(encoding="utf-8"))
    (fct_run,) = (r for r in results["results"] if r["unique_id"] == "model.shop.fct_sales")
    (done,) = (t["completed_at"] for t in fct_run["timing"] if t["name"] == "execute")
    assert at == iso_ms(done, later.duckdb)  # the rebuild's run
    assert {r["at"] for r in stopped} == {at}
    assert feeds("customer_name") == set()  # now
    assert feeds("customer_name", as_of=at - 1) == set(names)  # before the rebuild
    kept = {f"{namespace}/shop.main.stg_orders#amount_usd"}
    assert feeds("amount_cents") == kept
    assert customers in {r.urn for r in lineage.traverse(store, fct, "upstream", depth=1)}

    for rerun, column_lineage in (("no-sql", True), ("lineage-off", False)):
        target = _copy(later.duckdb, tmp_path / rerun)
        (target / "run_results.json").unlink()  # each model's run is the manifest's time
        manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
        manifest["metadata"]["generated_at"] = "2099-01-01T00:00:00Z"
        if column_lineage:
            manifest["nodes"]["model.shop.fct_sales"]["compiled_code"] = None
        (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        harvest_dbt(store, target, namespace=namespace, column_lineage=column_lineage)
        assert feeds("amount_cents") == kept, rerun


# --- bad input ------------------------------------------------------------------------------


def _copy(target: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "target"
    shutil.copytree(target, copy, ignore=shutil.ignore_patterns("compiled", "run"))
    return copy


@pytest.mark.parametrize(("version", "says"), [(9, "too old"), (13, "newer than")])
def test_unknown_manifest_versions_fail_clearly(
    dbt_build: DbtBuild, tmp_path: Path, version: int, says: str
) -> None:
    target = _copy(dbt_build.snowflake, tmp_path)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["metadata"]["dbt_schema_version"] = (
        f"https://schemas.getdbt.com/dbt/manifest/v{version}.json"
    )
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(
        ArtifactError, match=rf"manifest.json: manifest schema v{version} is {says}"
    ):
        read_project(target, snowflake_account=SNOWFLAKE_ACCOUNT)


@pytest.mark.parametrize("version", [10, 11])
def test_older_manifest_shapes_read_like_v12(
    dbt_build: DbtBuild, tmp_path: Path, version: int
) -> None:
    """The real v12 manifest rewritten in the shape of v10/v11 (dbt 1.6/1.7): keys added
    since then removed, and seeds' depends_on without `nodes`, as those versions write it."""
    target = _copy(dbt_build.duckdb, tmp_path)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["metadata"]["dbt_schema_version"] = (
        f"https://schemas.getdbt.com/dbt/manifest/v{version}.json"
    )
    for key in ("unit_tests", "saved_queries", "semantic_models"):
        manifest.pop(key, None)
    for node in manifest["nodes"].values():
        for key in ("doc_blocks", "time_spine", "primary_key"):
            node.pop(key, None)
        if node["resource_type"] == "seed":
            node["depends_on"] = {"macros": []}
    (target / "manifest.json").write_text(json.dumps(manifest))
    namespace = dbt_build.duckdb_namespace
    older = read_project(target, namespace=namespace)
    current = read_project(dbt_build.duckdb, namespace=namespace)
    assert list(older.items()) == list(current.items())
    assert older.checks() == current.checks()


def test_missing_and_broken_artifacts_name_the_file(dbt_build: DbtBuild, tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match=r"no dbt manifest at .*run `dbt parse`"):
        read_project(tmp_path, snowflake_account=SNOWFLAKE_ACCOUNT)
    target = _copy(dbt_build.snowflake, tmp_path)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["nodes"]["model.shop.fct_sales"] = ["not", "a", "node"]
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(
        ArtifactError, match=r"manifest.json: nodes\['model.shop.fct_sales'\] is not"
    ):
        read_project(target, snowflake_account=SNOWFLAKE_ACCOUNT)
    target = _copy(dbt_build.duckdb, tmp_path / "duckdb")
    (target / "catalog.json").write_text('{"nodes": ')
    with pytest.raises(ArtifactError, match=r"catalog.json: unreadable dbt artifact"):
        read_project(target, namespace="duckdb:///x.duckdb")


def test_naming_settings_are_required_and_named(dbt_build: DbtBuild) -> None:
    with pytest.raises(ConfigError, match=r"\[identity\] snowflake_account"):
        read_project(dbt_build.snowflake)
    with pytest.raises(ConfigError, match=r"\[dbt\] namespace"):
        read_project(dbt_build.duckdb)


def test_a_failed_harvest_writes_nothing_and_the_next_resumes(
    store: GraphStore, dbt_build: DbtBuild, tmp_path: Path
) -> None:
    target = _copy(dbt_build.snowflake, tmp_path)
    (target / "manifest.json").write_text("{")
    with pytest.raises(ArtifactError):
        harvest_dbt(store, target, snowflake_account=SNOWFLAKE_ACCOUNT)
    assert rows(store, "MATCH (a:Asset) RETURN count(a) AS n")[0]["n"] == 0
    shutil.copy(dbt_build.snowflake / "manifest.json", target / "manifest.json")
    run, _ = harvest_dbt(store, target, snowflake_account=SNOWFLAKE_ACCOUNT)
    assert run.status == "success"
    assert rows(store, "MATCH (a:Asset) RETURN count(a) AS n")[0]["n"] == 5


# --- the command ----------------------------------------------------------------------------


def test_cli_harvest_dbt_and_harvest_all(dbt_build: DbtBuild, tmp_path: Path) -> None:
    env = {
        "LINEAGEGRAPH_GRAPH__DATA_DIR": str(tmp_path / "store"),
        "LINEAGEGRAPH_DBT__NAMESPACE": dbt_build.duckdb_namespace,
    }
    runner = CliRunner()
    result = runner.invoke(cli, ["harvest", "dbt", "--target-path", str(dbt_build.duckdb)], env=env)
    assert result.exit_code == 0, result.output
    assert "duckdb project, 2 models, 1 seeds, 1 snapshots, 1 sources" in result.output
    assert (
        "10 column feeds (0 masked), 0 tags (0 new or changed, 0 withdrawn); "
        "tests: 1 fail, 3 pass; run "
    ) in result.output
    env["LINEAGEGRAPH_DBT__TARGET_PATH"] = str(dbt_build.duckdb)
    result = runner.invoke(cli, ["harvest", "all", "--only", "dbt"], env=env)
    assert result.exit_code == 0, result.output
    assert "dbt: ok in" in result.output
    missing = runner.invoke(
        cli, ["harvest", "dbt"], env={**env, "LINEAGEGRAPH_DBT__TARGET_PATH": ""}
    )
    assert (
        missing.exit_code == 2 and "give --target-path or set [dbt] target_path" in missing.output
    )


def test_dbt_test_results_gate_through_check(dbt_build: DbtBuild, tmp_path: Path) -> None:
    env = {
        "LINEAGEGRAPH_GRAPH__DATA_DIR": str(tmp_path / "store"),
        "LINEAGEGRAPH_DBT__NAMESPACE": dbt_build.duckdb_namespace,
    }
    runner = CliRunner()
    harvested = runner.invoke(
        cli, ["harvest", "dbt", "--target-path", str(dbt_build.duckdb)], env=env
    )
    assert harvested.exit_code == 0, harvested.output
    fct = dbt_build.duckdb_namespace + "/shop.main.fct_sales"
    checks = runner.invoke(cli, ["query", "--format", "json",
                                 "MATCH (c:Check)-[:CHECKS]->(t) RETURN c.name AS name, "
                                 "c.status AS status, c.failures AS failures, t.urn AS target "
                                 "ORDER BY name"], env=env)  # fmt: skip
    assert checks.exit_code == 0, checks.output
    assert {(c["status"], c["target"]) for c in json.loads(checks.stdout)} == {
        ("fail", fct + "#amount_cents"),
        ("pass", fct + "#order_id"),
        ("pass", fct + "#customer_name"),
    } and len(json.loads(checks.stdout)) == 4
    gate = runner.invoke(cli, ["check", fct], env=env)
    assert gate.exit_code == 6, gate.output
    assert "not_null_fct_sales_amount_cents" in gate.output
    upstream_only = runner.invoke(
        cli, ["check", dbt_build.duckdb_namespace + "/shop.main.stg_orders"], env=env
    )
    assert upstream_only.exit_code == 0, upstream_only.output


def test_bad_names_are_skipped_and_reported_not_fatal(
    store: GraphStore, dbt_build: DbtBuild, tmp_path: Path
) -> None:
    target = _copy(dbt_build.duckdb, tmp_path)
    catalog = json.loads((target / "catalog.json").read_text())
    columns = catalog["nodes"]["seed.shop.raw_customers"]["columns"]
    columns["first#name"] = {**columns["first_name"], "name": "first#name", "index": 99}
    (target / "catalog.json").write_text(json.dumps(catalog))
    run, report = harvest_dbt(store, target, namespace=dbt_build.duckdb_namespace)
    assert run.status == "partial"
    assert report.problems == [
        "seed.shop.raw_customers: column skipped: column name contains '#': 'first#name' (of "
        f"'{dbt_build.duckdb_namespace}/shop.main.raw_customers')"
    ]
    assert len(edges(store, "FLOWS_TO")) == 4 and len(edges(store, "FEEDS")) == 10


def test_parsing_ahead_keeps_order_and_raises_what_parsing_raised() -> None:
    def values(fail_at: int | None) -> Any:
        for n in range(5_000):
            if n == fail_at:
                raise ValueError(f"bad value {n}")
            yield n

    assert list(parsed_ahead(values(None))) == list(range(5_000))  # type: ignore[arg-type]
    seen: list[int] = []
    with pytest.raises(ValueError, match="bad value 4100"):
        seen.extend(parsed_ahead(values(4100)))  # type: ignore[arg-type]
    assert seen == list(range(4000))  # two whole chunks were handed over before the error


def test_cli_reports_unreadable_sql_and_strict_fails(dbt_build: DbtBuild, tmp_path: Path) -> None:
    target = _copy(dbt_build.duckdb, tmp_path)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["nodes"]["model.shop.fct_sales"]["compiled_code"] = "select from where ("
    (target / "manifest.json").write_text(json.dumps(manifest))
    env = {
        "LINEAGEGRAPH_GRAPH__DATA_DIR": str(tmp_path / "store"),
        "LINEAGEGRAPH_DBT__NAMESPACE": dbt_build.duckdb_namespace,
    }
    argv = ["harvest", "dbt", "--target-path", str(target)]
    lenient = CliRunner().invoke(cli, argv, env=env)
    assert lenient.exit_code == 0, lenient.output
    assert "warning: model.shop.fct_sales: no column lineage: ParseError" in lenient.output
    assert "6 column feeds" in lenient.output  # fct_sales lost 4 and ": partial" in lenient.output
    strict = CliRunner().invoke(cli, [*argv, "--strict"], env=env)
    assert strict.exit_code == 5
    assert "1 models had no column lineage (--strict)" in strict.output


# --- malformed nodes (a hand-written manifest: no dbt needed) -------------------------------


def _node(name: str, *parents: str, bad: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "unique_id": f"model.shop.{name}", "resource_type": "model", "name": name,
        "alias": name, "database": "shop", "schema": "main",
        "config": {"materialized": "table"}, "columns": {"id": {"name": "id"}},
        "depends_on": {"nodes": [f"model.shop.{p}" for p in parents]},
        "compiled_code": f"select id from shop.main.{parents[0] if parents else 'raw'}",
        **(bad or {}),
    }  # fmt: skip


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"columns": "x"}, "columns is a string, not an object"),
        ({"name": 12, "alias": None}, "name is a number, not a string"),
        ({"depends_on": {"nodes": [{"x": 1}]}}, r"depends_on.nodes\[0\] is an object, not a"),
        ({"config": ["table"]}, "config is an array, not an object"),
        ({"columns": {"id": {"name": ["id"]}}}, r"columns\['id'\].name is an array"),
    ],
)
def test_a_malformed_node_is_skipped_and_reported_the_rest_harvested(
    tmp_path: Path, bad: dict[str, Any], says: str
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    nodes = {
        "model.shop.orders": _node("orders"),
        "model.shop.broken": _node("broken", bad=bad),
        "model.shop.revenue": _node("revenue", "orders", "broken"),
    }
    (target / "manifest.json").write_text(json.dumps({
        "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
                     "adapter_type": "duckdb", "project_name": "shop",
                     "generated_at": "2024-05-01T00:00:00Z"},
        "nodes": nodes, "sources": {},
    }))  # fmt: skip
    env = {
        "LINEAGEGRAPH_GRAPH__DATA_DIR": str(tmp_path / "store"),
        "LINEAGEGRAPH_DBT__NAMESPACE": "duckdb://shop.duckdb",
    }
    result = CliRunner().invoke(cli, ["harvest", "dbt", "--target-path", str(target)], env=env)
    assert result.exit_code == 0, result.output
    assert re.search(
        rf"warning: {re.escape(str(target / 'manifest.json'))}: model.shop.broken: skipped: {says}",
        result.output,
    ), result.output
    assert "2 models, 0 seeds" in result.output and "1 malformed skipped" in result.output
    assert ": partial" in result.output
    runs = CliRunner().invoke(cli, ["query", "--format", "json",
                                    "MATCH (r:HarvestRun {system: 'dbt'}) RETURN r.status AS s, "
                                    "r.count_dbt_skipped_bad_nodes AS bad"], env=env)  # fmt: skip
    assert json.loads(runs.stdout) == [{"s": "partial", "bad": 1}], runs.output
    flows = CliRunner().invoke(
        cli,
        ["query", "--format", "json", "MATCH (a)-[:FLOWS_TO]->(b) RETURN a.name AS a, b.name AS b"],
        env=env,
    )
    assert json.loads(flows.stdout) == [{"a": "shop.main.orders", "b": "shop.main.revenue"}]


def test_a_malformed_catalog_entry_falls_back_to_the_manifest_columns(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "manifest.json").write_text(json.dumps({
        "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
                     "adapter_type": "duckdb", "project_name": "shop",
                     "generated_at": "2024-05-01T00:00:00Z"},
        "nodes": {"model.shop.orders": _node("orders")}, "sources": {},
    }))  # fmt: skip
    (target / "catalog.json").write_text(
        json.dumps({"nodes": {"model.shop.orders": {"columns": {"ID": {"index": "first"}}}}})
    )
    project = read_project(target, namespace="duckdb://shop.duckdb")
    columns = [item.name for item in project.items() if isinstance(item, Column)]
    assert columns == ["id"]
    assert project.report.problems == [
        f"{target / 'catalog.json'}: model.shop.orders: columns not read "
        "(columns['ID'] has no name); the manifest's are used"
    ]
