"""dbt and classifications, on a real dbt build of the shop project with data/dbt_privacy laid
over it: tags and meta become classifications, and a model that hashes or counts personal data
gets masked column lineage (its compiled SQL read with sqlglot)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from dbt_fixtures import SNOWFLAKE_ACCOUNT, DbtBuild

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.dbt.classify import classifications
from lineagegraph.harvest.dbt.harvester import harvest_dbt, read_project
from lineagegraph.harvest.dbt.settings import DEFAULT_META_KEYS
from lineagegraph.model import ColumnFeed


def feeds(build: DbtBuild, **kwargs: object) -> dict[tuple[str, str], tuple[str, ...]]:
    project = read_project(build.duckdb, namespace=build.duckdb_namespace, **kwargs)  # type: ignore[arg-type]
    return {(f.src, f.dst): f.masked_by for f in project.items() if isinstance(f, ColumnFeed)}


def test_hashed_and_counted_columns_are_masked_and_copies_are_plain(
    dbt_privacy_build: DbtBuild,
) -> None:
    base = dbt_privacy_build.duckdb_namespace + "/shop.main."
    seed, stg, out = base + "raw_customers", base + "stg_orders", base + "customer_privacy"
    found = {k: v for k, v in feeds(dbt_privacy_build).items() if k[1].startswith(out + "#")}
    assert found == {
        (seed + "#id", out + "#customer_id"): (),
        # through the ephemeral stg_customers (a CTE): first_name || ' ' || last_name
        (seed + "#first_name", out + "#name_hash"): ("MD5",),
        (seed + "#last_name", out + "#name_hash"): ("MD5",),
        (seed + "#first_name", out + "#name_plain"): (),
        (seed + "#last_name", out + "#name_plain"): (),
        (stg + "#order_id", out + "#order_count"): ("COUNT",),
    }


def test_the_masking_list_comes_from_settings(dbt_privacy_build: DbtBuild) -> None:
    out = dbt_privacy_build.duckdb_namespace + "/shop.main.customer_privacy"
    only_md5 = feeds(dbt_privacy_build, masking=frozenset({"MD5"}))
    assert {v for (_, dst), v in only_md5.items() if dst == out + "#order_count"} == {()}
    assert {v for (_, dst), v in only_md5.items() if dst == out + "#name_hash"} == {("MD5",)}


def stated(build: DbtBuild, **rule: Any) -> set[tuple[str, str, str | None]]:
    project = read_project(build.duckdb, namespace=build.duckdb_namespace)
    rule.setdefault("tag_keys", ["*"])
    rule.setdefault("meta_keys", DEFAULT_META_KEYS)
    columns, facts = classifications(project, rule["tag_keys"], rule["meta_keys"])
    assert {f.target for f in facts if "#" in f.target} <= {c.urn for c in columns}
    assert all(f.source == "dbt" and f.at == project.at for f in facts)
    return {(f.target, f.key, f.value) for f in facts}


def test_tags_and_meta_of_models_sources_seeds_and_columns(dbt_privacy_build: DbtBuild) -> None:
    base = dbt_privacy_build.duckdb_namespace + "/shop."
    out, seed = base + "main.customer_privacy", base + "main.raw_customers"
    orders = base + "raw_sales.orders"
    assert stated(dbt_privacy_build) == {
        (orders, "finance", None),  # a source table's tag
        (orders + "#customer_id", "contains_pii", "true"),  # contains_pii: false states nothing
        (out, "restricted", None),
        (out, "nightly", None),
        (out, "classification", "confidential"),  # owner and pii_hashed are not listed
        (out + "#name_plain", "pii", "name"),  # meta pii: name wins over the tag pii
        (seed + "#first_name", "pii", "name"),
    }
    assert stated(dbt_privacy_build, tag_keys=["restr*"], meta_keys=["PII"]) == {
        (out, "restricted", None),
        (out + "#name_plain", "pii", "name"),
        (seed + "#first_name", "pii", "name"),
    }


def test_snowflake_parse_puts_them_on_the_snowflake_urns(dbt_privacy_build: DbtBuild) -> None:
    """`dbt parse` with dbt-snowflake: no catalog, the YAML's names upper-cased as Snowflake
    stores them, the quoted source keeps its case: the urns ACCESS_HISTORY gives."""
    project = read_project(dbt_privacy_build.snowflake, snowflake_account=SNOWFLAKE_ACCOUNT)
    _, facts = classifications(project, ["*"], DEFAULT_META_KEYS)
    found = {(f.target, f.key, f.value) for f in facts}
    sf = f"snowflake://{SNOWFLAKE_ACCOUNT}/"
    source = project.urns["source.shop.raw.orders"]  # test_dbt: ACCESS_HISTORY's urn too
    assert source == sf + "RAW.SALES.OrderLines"
    assert (source + "#CUSTOMER_ID", "contains_pii", "true") in found
    assert (sf + "ANALYTICS.MARTS.CUSTOMER_PRIVACY#NAME_PLAIN", "pii", "name") in found


def test_harvest_writes_changes_and_withdraws_what_the_project_drops(
    store: GraphStore, dbt_privacy_build: DbtBuild, tmp_path: Path
) -> None:
    namespace = dbt_privacy_build.duckdb_namespace
    run, report = harvest_dbt(store, dbt_privacy_build.duckdb, namespace=namespace)
    assert run.status == "success", report.problems
    assert (report.counts["tags"], report.counts["tags_stated"]) == (7, 7)
    before = tags(store)
    _, again = harvest_dbt(store, dbt_privacy_build.duckdb, namespace=namespace)
    assert (again.counts["tags_stated"], again.counts.get("tags_removed", 0)) == (0, 0)
    assert tags(store) == before

    # the next build: customer_privacy lost its tags, name_plain its meta
    target = tmp_path / "target"
    shutil.copytree(
        dbt_privacy_build.duckdb, target, ignore=shutil.ignore_patterns("run", "compiled")
    )
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["metadata"]["generated_at"] = "2099-01-01T00:00:00.000000Z"
    node = manifest["nodes"]["model.shop.customer_privacy"]
    node["tags"], node["config"]["tags"] = [], []
    node["columns"]["name_plain"]["meta"] = {}
    node["columns"]["name_plain"].get("config", {}).pop("meta", None)
    (target / "manifest.json").write_text(json.dumps(manifest))
    _, later = harvest_dbt(store, target, namespace=namespace)
    assert (later.counts["tags_stated"], later.counts["tags_removed"]) == (1, 2)
    out = namespace + "/shop.main.customer_privacy"
    after = {(row[0], row[1]): row for row in tags(store)}
    removed_at = after[(out, "restricted")][4]
    assert removed_at is not None and removed_at == after[(out, "nightly")][4]
    # the tag pii is left where meta said pii=name: restated without a value, not withdrawn
    reason = "dbt tag 'pii' on model.shop.customer_privacy column name_plain"
    assert after[(out + "#name_plain", "pii")][2:5] == [None, reason, None]
    assert after[(out, "classification")][4] is None


def tags(store: GraphStore) -> list[list[Any]]:
    return store.execute(
        "MATCH (g:Tag {source: 'dbt'})-[:TAGS]->(t) RETURN t.urn, g.key, g.value, g.reason,"
        " g.removed_at ORDER BY t.urn, g.key",
        write=False,
    ).rows
