"""Marquez's listings and column lineage on a running server: every name a listing shows,
percent-encoded the way Marquez's clients send it, opens its dataset or job and its lineage."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
import requests
from serve_fixtures import Server

ODD = [
    ("postgres://db:5432", "shop.public:orders"),  # colons on both sides of the split
    ("s3://b", "2024:01/x"),  # a slash and a colon in the name
    ("s3://b", "naïve dir/\u2028sep"),
    ("kafka://broker:9092", "%2F literally"),  # a name that looks percent-encoded
]
JOBS = "team/etl"  # a job namespace holding '/'


def feeding(field: str, sources: list[tuple[str, str, str]]) -> dict[str, Any]:
    inputs = [{"namespace": ns, "name": name, "field": f} for ns, name, f in sources]
    return {field: {"inputFields": inputs}}


def event(
    job: str, inputs: list[tuple[str, str]], output: tuple[str, str], fields: dict[str, Any]
) -> dict[str, Any]:
    facets = {
        "columnLineage": {
            "_producer": "tests",
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ColumnLineageDatasetFacet.json",
            "fields": fields,
        }
    }
    return {"eventType": "COMPLETE", "eventTime": "2024-05-01T10:00:00Z",
            "run": {"runId": f"0190a9f0-0000-7000-8000-00000000000{len(job)}"},
            "job": {"namespace": JOBS, "name": job}, "producer": "tests",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "inputs": [{"namespace": ns, "name": n} for ns, n in inputs],
            "outputs": [{"namespace": output[0], "name": output[1], "facets": facets}]}  # fmt: skip


@pytest.fixture(scope="module")
def odd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("listings") / "store")
    server.start()
    batch = [
        event("load:daily", [ODD[0]], ODD[1], feeding("amount", [(*ODD[0], "amt:raw")])),
        event("publish", [ODD[1]], ODD[2], feeding("total", [(*ODD[1], "amount")])),
        event("mirror", [ODD[2]], ODD[3], feeding("copy", [(*ODD[2], "total")])),
    ]
    r = server.post(json.dumps(batch))
    assert r.status_code == 201, r.text
    url = f"{server.url}/api/v1/lineage"
    for _ in range(300):  # ingestion runs about twice a second: wait for the last dataset
        got = requests.get(
            url,
            params={"nodeId": f"dataset:{ODD[3][0]}:{ODD[3][1]}"},
            headers=server.headers,
            timeout=30,
        )
        if got.ok:
            break
        time.sleep(0.1)
    yield server
    server.kill(signal.SIGTERM)  # a clean stop also stops its embedded store's server


def get(server: Server, *segments: str, **params: Any) -> requests.Response:
    """What Marquez's clients do: each path segment percent-encoded, '/' included."""
    path = "/".join(quote(s, safe="") for s in segments)
    return server.get(f"/api/v1/namespaces/{path}", **params)


def test_every_listed_dataset_opens_by_its_listed_name(odd_server: Server) -> None:
    names = [n["name"] for n in odd_server.get("/api/v1/namespaces").json()["namespaces"]]
    listed = set()
    for ns in names:
        if ns == JOBS:
            continue
        page = get(odd_server, ns, "datasets").json()
        assert page["totalCount"] == len(page["datasets"])
        for found in page["datasets"]:
            assert found["namespace"] == ns
            listed.add((ns, found["name"]))
            one = get(odd_server, ns, "datasets", found["name"])
            assert one.status_code == 200, one.text
            assert one.json() == found
            node = f"dataset:{ns}:{found['name']}"
            graph = odd_server.get("/api/v1/lineage", nodeId=node, depth=1).json()["graph"]
            assert node in {n["id"] for n in graph}
    assert listed == set(ODD)
    assert get(odd_server, "s3://b").json()["name"] == "s3://b"


def test_a_name_may_come_unencoded_after_datasets(odd_server: Server) -> None:
    r = odd_server.get(f"/api/v1/namespaces/{quote('s3://b', safe='')}/datasets/2024:01/x")
    assert r.status_code == 200, r.text
    assert r.json()["id"] == {"namespace": "s3://b", "name": "2024:01/x"}


def test_jobs_in_a_namespace_with_a_slash(odd_server: Server) -> None:
    page = get(odd_server, JOBS, "jobs").json()
    assert page["totalCount"] == 3
    assert [j["name"] for j in page["jobs"]] == ["load:daily", "mirror", "publish"]
    publish = page["jobs"][2]
    assert publish["namespace"] == JOBS
    assert publish["inputs"] == [{"namespace": "s3://b", "name": "2024:01/x"}]
    assert publish["outputs"] == [{"namespace": "s3://b", "name": "naïve dir/\u2028sep"}]
    assert get(odd_server, JOBS, "jobs", "publish").json() == publish
    second = get(odd_server, JOBS, "jobs", limit=1, offset=1).json()
    assert second["totalCount"] == 3 and [j["name"] for j in second["jobs"]] == ["mirror"]
    assert get(odd_server, "team", "jobs").json() == {"totalCount": 0, "jobs": []}


def test_unknown_names_and_bad_pages(odd_server: Server) -> None:
    missing = get(odd_server, "s3://b", "datasets", "2024:01/y")
    assert missing.status_code == 404
    assert missing.json()["reason"] == "no dataset '2024:01/y' in namespace 's3://b'"
    assert "s3://b/2024:01/x" in missing.json()["suggestions"]
    assert get(odd_server, JOBS, "jobs", "nope").status_code == 404
    assert get(odd_server, "nowhere").status_code == 404
    bad = get(odd_server, "s3://b", "datasets", limit=0)
    assert bad.status_code == 400 and bad.json()["reason"].startswith("limit must be")
    assert get(odd_server, "s3://b", "runs").status_code == 404
    assert odd_server.get("/api/v1/namespaces/s3:%FF/datasets").status_code == 400


def field(ns_name: tuple[str, str], name: str) -> str:
    return f"datasetField:{ns_name[0]}:{ns_name[1]}:{name}"


def test_column_lineage_upstream_and_with_downstream(odd_server: Server) -> None:
    r = odd_server.get("/api/v1/column-lineage", nodeId=field(ODD[2], "total"))
    assert r.status_code == 200, r.text
    nodes = {n["id"]: n for n in r.json()["graph"]}
    start, mid, first = field(ODD[2], "total"), field(ODD[1], "amount"), field(ODD[0], "amt:raw")
    assert set(nodes) == {start, mid, first}
    assert {n["type"] for n in nodes.values()} == {"DATASET_FIELD"}
    data = nodes[start]["data"]
    assert (data["namespace"], data["dataset"], data["field"]) == (*ODD[2], "total")
    assert [(f["namespace"], f["dataset"], f["field"]) for f in data["inputFields"]] == [
        (*ODD[1], "amount")
    ]
    # Marquez's edges: an input's outEdges run input -> field, a field's inEdges field -> input
    assert nodes[mid]["outEdges"] == [{"origin": mid, "destination": start}]
    assert nodes[start]["inEdges"] == [{"origin": start, "destination": mid}]
    one = odd_server.get("/api/v1/column-lineage", nodeId=start, depth=1).json()
    assert {n["id"] for n in one["graph"]} == {start, mid}
    both = odd_server.get("/api/v1/column-lineage", nodeId=mid, withDownstream="true").json()
    assert {n["id"] for n in both["graph"]} == {first, mid, start, field(ODD[3], "copy")}
    whole = odd_server.get("/api/v1/column-lineage", nodeId=f"dataset:{ODD[2][0]}:{ODD[2][1]}")
    assert {n["id"] for n in whole.json()["graph"]} == {start, mid, first}


def test_column_lineage_bad_ids(odd_server: Server) -> None:
    r = odd_server.get("/api/v1/column-lineage", nodeId=field(ODD[2], "totl"))
    assert r.status_code == 404 and "no field" in r.json()["reason"]
    r = odd_server.get("/api/v1/column-lineage", nodeId="run:x:y")
    assert r.status_code == 400 and "must start with 'datasetField:'" in r.json()["reason"]
    r = odd_server.get("/api/v1/column-lineage", nodeId="job:x:y")  # a job's: no such job
    assert r.status_code == 404 and "no job" in r.json()["reason"]
    assert odd_server.get("/api/v1/column-lineage").status_code == 400
    assert (
        odd_server.get(
            "/api/v1/column-lineage", nodeId=field(ODD[2], "total"), withDownstream="perhaps"
        ).status_code
        == 400
    )


def test_the_openapi_document_names_the_new_routes(odd_server: Server) -> None:
    spec = requests.get(f"{odd_server.url}/openapi.json", timeout=30).json()
    assert {
        "/api/v1/namespaces/{namespace}/datasets/{dataset}", "/api/v1/namespaces/{namespace}/jobs",
        "/api/v1/column-lineage", "/api/v1/orphans", "/api/v1/cost", "/metrics",
    } <= set(spec["paths"])  # fmt: skip


def test_names_holding_a_line_break_open_by_their_listed_names(server: Server) -> None:
    """A namespace or name holding '\\n' (sent as %0A) opens too: starlette's `path` parameter
    is `.*`, which stops at a line break, so these paths fell to the router's bare 404."""
    job = {"namespace": "night\nshift", "name": "load\nall"}
    sent = {"eventType": "COMPLETE", "eventTime": "2024-05-01T10:00:00Z", "producer": "tests",
            "run": {"runId": "r\n1"}, "job": job,
            "inputs": [{"namespace": "s3://b", "name": "in\nbox"}],
            "outputs": [{"namespace": "s3://b", "name": "out\nbox/x"}]}  # fmt: skip
    assert server.post(json.dumps(sent)).status_code == 201
    for _ in range(300):  # ingestion runs about twice a second
        if server.get("/healthz").json()["events_ingested"]:
            break
        time.sleep(0.1)
    found = get(server, job["namespace"], "jobs", job["name"])
    assert found.status_code == 200, found.text
    assert (found.json()["name"], found.json()["lastRunId"]) == ("load\nall", "r\n1")
    jobs = get(server, job["namespace"], "jobs").json()["jobs"]
    assert [j["id"] for j in jobs] == [job]
    datasets = get(server, "s3://b", "datasets").json()["datasets"]
    assert sorted(d["name"] for d in datasets) == ["in\nbox", "out\nbox/x"]
    one = get(server, "s3://b", "datasets", "out\nbox/x")
    assert one.status_code == 200 and one.json()["name"] == "out\nbox/x", one.text
    unencoded = server.get(f"/api/v1/namespaces/{quote('s3://b', safe='')}/datasets/in%0Abox")
    assert unencoded.status_code == 200, unencoded.text
    assert get(server, "night\nshift").json()["name"] == "night\nshift"


def test_dataset_versions_a_version_per_schema_change(server: Server) -> None:
    """Marquez's DatasetVersionList: the schema facets of three runs, the second dropping a
    column; a version per change, newest first, paged; the name may hold '/'."""

    def run(day: int, fields: list[tuple[str, str]]) -> dict[str, Any]:
        schema = {
            "_producer": "tests",
            "fields": [{"name": n, "type": t} for n, t in fields],
            "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
        }
        return {"eventType": "COMPLETE", "eventTime": f"2024-05-0{day}T10:00:00Z",
                "run": {"runId": f"0190a9f0-0000-7000-8000-00000000010{day}"},
                "job": {"namespace": JOBS, "name": "load"}, "producer": "tests",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                "inputs": [],
                "outputs": [{"namespace": "s3://b", "name": "sales/orders",
                             "facets": {"schema": schema}}]}  # fmt: skip

    wide = [("id", "long"), ("amount", "double")]
    batch = [run(1, wide), run(2, wide[:1]), run(3, wide[:1])]
    assert server.post(json.dumps(batch)).status_code == 201
    for _ in range(300):  # ingestion runs about twice a second
        got = get(server, "s3://b", "datasets", "sales/orders", "versions")
        if got.ok and got.json()["totalCount"] == 2:
            break
        time.sleep(0.1)
    answer = got.json()
    assert answer["totalCount"] == 2
    newest, first = answer["versions"]
    assert (newest["createdAt"], first["createdAt"]) == (
        "2024-05-02T10:00:00Z",
        "2024-05-01T10:00:00Z",
    )
    assert newest["fields"] == [{"name": "id", "type": "long", "tags": [], "description": None}]
    assert [f["name"] for f in first["fields"]] == ["id", "amount"]
    assert newest["id"] == {"namespace": "s3://b", "name": "sales/orders",
                            "version": newest["version"]}  # fmt: skip
    assert (newest["source"], newest["lastSeenAt"]) == ("openlineage", "2024-05-03T10:00:00Z")
    assert newest["version"] != first["version"]
    # unencoded, as Marquez's UI may send it; paged
    raw = server.get("/api/v1/namespaces/s3:%2F%2Fb/datasets/sales/orders/versions", offset=1)
    assert raw.json() == {"totalCount": 2, "versions": [first]}
    # the dataset itself opens, its fields typed by its newest version, which is its current
    found = get(server, "s3://b", "datasets", "sales/orders").json()
    assert [(f["name"], f["type"]) for f in found["fields"]] == [("amount", None), ("id", "long")]
    assert found["currentVersion"] == newest["version"]
    # as of a time between the two versions: the first only, and it is the dataset's current
    then = "2024-05-01T12:00:00Z"
    old = get(server, "s3://b", "datasets", "sales/orders", "versions", asOf=then).json()
    assert old == {"totalCount": 1, "versions": [first]}
    found = get(server, "s3://b", "datasets", "sales/orders", asOf=then).json()
    assert [(f["name"], f["type"]) for f in found["fields"]] == [
        ("amount", "double"),
        ("id", "long"),
    ]
    assert found["currentVersion"] == first["version"]
    bad = get(server, "s3://b", "datasets", "sales/orders", "versions", asOf="someday")
    assert bad.status_code == 400 and bad.json()["reason"].startswith("asOf")
    # an unknown dataset is a 404
    assert get(server, "s3://b", "datasets", "sales/nope", "versions").status_code == 404
