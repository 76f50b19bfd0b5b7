"""Lineage recorded without a job (a Snowflake view's OBJECT_DEPENDENCIES) in the
Marquez-compatible graph: a job named after the view stands for it, so a Marquez client walks
the chain `lineagegraph upstream` walks."""

from __future__ import annotations

from typing import Any

import pytest

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import NO_FOLD_RULES
from lineagegraph.model import Asset, Flow, Transformation
from lineagegraph.questions import lineage
from lineagegraph.serve import marquez

T0 = 1_700_000_000_000
SF = "snowflake://acme"
RAW = "s3://raw/events"
EVENTS = f"{SF}/RAW.PUBLIC.EVENTS"  # loaded by a job from S3
USERS = f"{SF}/RAW.PUBLIC.USERS"
ACTIVE = f"{SF}/MARTS.ACTIVE"  # a view reading EVENTS and USERS, no job
DASH = f"{SF}/DASH.DAU_DASHBOARD"  # a view reading ACTIVE
EXPORT = "s3://exports/dau"  # written by a job from DASH
GONE = f"{SF}/RAW.PUBLIC.OLD"  # a deleted input of ACTIVE


def load(store: GraphStore) -> None:
    writer = GraphWriter(store)
    writer.add(Asset(RAW, "Dataset", "s3", "events", T0))
    writer.add(Asset(EXPORT, "Dataset", "s3", "dau", T0))
    for urn in (EVENTS, USERS, ACTIVE, DASH, GONE):
        writer.add(Asset(urn, "Table", "snowflake", urn.rsplit("/", 1)[1], T0))
    writer.add(
        Transformation(
            "openlineage://airflow/load",
            "openlineage",
            "load",
            "r1",
            T0,
            reads=(RAW,),
            writes=(EVENTS,),
        )
    )
    writer.add(
        Transformation(
            "openlineage://airflow/export",
            "openlineage",
            "export",
            "r2",
            T0,
            reads=(DASH,),
            writes=(EXPORT,),
        )
    )
    writer.add(Flow(RAW, EVENTS, T0, via="openlineage://airflow/load"))
    writer.add(Flow(DASH, EXPORT, T0, via="openlineage://airflow/export"))
    for src, dst in ((EVENTS, ACTIVE), (USERS, ACTIVE), (GONE, ACTIVE), (ACTIVE, DASH)):
        writer.add(Flow(src, dst, T0 + 1))  # no `via`: a view's dependency
    writer.flush()
    store.execute(
        "MATCH (a:Asset {urn: $u}) SET a.deleted_at = $t", {"u": GONE, "t": T0}, write=True
    )


def datasets(answer: dict[str, Any]) -> set[str]:
    return {n["data"]["urn"] for n in answer["graph"] if n["type"] == "DATASET"}


def by_id(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["id"]: n for n in answer["graph"]}


def test_marquez_reaches_what_upstream_reaches(store: GraphStore) -> None:
    load(store)
    upstream = {r.urn for r in lineage.traverse(store, DASH, "upstream", depth=20)}
    assert upstream == {ACTIVE, EVENTS, USERS, RAW}
    answer = marquez.lineage(store, f"dataset:{SF}:DASH.DAU_DASHBOARD", 20, NO_FOLD_RULES)
    downstream = {r.urn for r in lineage.traverse(store, DASH, "downstream", depth=20)}
    assert datasets(answer) == upstream | downstream | {DASH}

    nodes = by_id(answer)
    view = nodes[f"job:{SF}:MARTS.ACTIVE"]  # the view ACTIVE as a job, in its namespace
    assert view["type"] == "JOB"
    assert view["data"]["view"] == ACTIVE and view["data"]["urn"] is None
    assert sorted(e["origin"] for e in view["inEdges"]) == [
        f"dataset:{SF}:RAW.PUBLIC.EVENTS",
        f"dataset:{SF}:RAW.PUBLIC.USERS",
    ]
    assert [e["destination"] for e in view["outEdges"]] == [f"dataset:{SF}:MARTS.ACTIVE"]
    assert {i["name"] for i in view["data"]["inputs"]} == {"RAW.PUBLIC.EVENTS", "RAW.PUBLIC.USERS"}
    assert view["data"]["outputs"] == [{"namespace": SF, "name": "MARTS.ACTIVE"}]
    # each dataset links to the view job reading it, as to a real job
    events = nodes[f"dataset:{SF}:RAW.PUBLIC.EVENTS"]
    assert {e["destination"] for e in events["outEdges"]} == {f"job:{SF}:MARTS.ACTIVE"}
    assert f"job:{SF}:DASH.DAU_DASHBOARD" in nodes and "job:airflow:load" in nodes


def test_depth_counts_view_jobs_as_levels(store: GraphStore) -> None:
    load(store)
    start = marquez.resolve(store, f"dataset:{SF}:DASH.DAU_DASHBOARD", NO_FOLD_RULES)
    one = marquez.lineage_graph(store, start, 1, NO_FOLD_RULES)
    assert datasets(one) == {DASH, ACTIVE, EXPORT}
    two = marquez.lineage_graph(store, start, 2, NO_FOLD_RULES)
    assert datasets(two) == {DASH, ACTIVE, EXPORT, EVENTS, USERS}
    deleted = marquez.lineage_graph(store, start, 2, NO_FOLD_RULES, include_deleted=True)
    assert datasets(deleted) == datasets(two) | {GONE}


def test_a_view_job_id_resolves_and_starts_a_graph(store: GraphStore) -> None:
    load(store)
    node = marquez.resolve(store, f"job:{SF}:MARTS.ACTIVE", NO_FOLD_RULES)
    assert node.type == "JOB" and node.id == f"job:{SF}:MARTS.ACTIVE"
    one = marquez.lineage_graph(store, node, 1, NO_FOLD_RULES)
    assert datasets(one) == {ACTIVE, EVENTS, USERS}  # its inputs and the view, not GONE
    assert set(by_id(one)) == {f"job:{SF}:MARTS.ACTIVE"} | {
        f"dataset:{SF}:{u.rsplit('/', 1)[1]}" for u in (ACTIVE, EVENTS, USERS)
    }
    two = marquez.lineage_graph(store, node, 2, NO_FOLD_RULES)
    assert datasets(two) == {ACTIVE, EVENTS, USERS, RAW, DASH}
    # an asset without job-less inputs has no such job
    with pytest.raises(marquez.NodeNotFound):
        marquez.resolve(store, f"job:{SF}:RAW.PUBLIC.USERS", NO_FOLD_RULES)
