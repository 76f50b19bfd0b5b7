"""What docs/serve.md promises about dataset namespaces (issue 21, item 7): a bare platform
name is accepted and becomes the node's system; a namespace that is neither that nor a URI is
refused with 400 and its reason."""

from __future__ import annotations

import json

from serve_fixtures import Server
from test_serve_recovery import event, wait_for


def with_namespace(job: str, namespace: str) -> str:
    sent = json.loads(event(job))
    sent["inputs"][0]["namespace"] = namespace
    return json.dumps(sent)


def test_a_bare_namespace_is_accepted_and_read_back_the_marquez_way(server: Server) -> None:
    assert server.post(with_namespace("bare", "my-namespace")).status_code == 201

    def nodes() -> set[str]:
        got = server.get("/api/v1/lineage", nodeId="dataset:my-namespace:in")
        return {node["id"] for node in got.json()["graph"]} if got.status_code == 200 else set()

    # The event is spooled, then written a statement at a time: the dataset can be read back
    # before its job is, so wait for the job (the whole event), not only the dataset.
    assert wait_for(lambda: "job:airflow:bare" in nodes()), nodes()
    # The namespace list names it as sent (not `my-namespace://`), and that name opens it.
    listed = {n["name"] for n in server.get("/api/v1/namespaces").json()["namespaces"]}
    assert "my-namespace" in listed and "my-namespace://" not in listed, listed
    datasets = server.get("/api/v1/namespaces/my-namespace/datasets").json()["datasets"]
    assert [(d["namespace"], d["name"]) for d in datasets] == [("my-namespace", "in")]


def test_a_namespace_that_is_no_name_is_refused(server: Server) -> None:
    refused = server.post(with_namespace("spaced", "plain namespace"))
    assert refused.status_code == 400
    assert "neither a URI (scheme://...) nor a plain platform name" in refused.json()["reason"]
