"""The explorer's time control over real HTTP: a lineage picture as of a past time, and the
changes since an earlier time marked on it (added, removed, with the legend's classes), from
history written by a real OpenLineage harvest in which one edge stopped and one was added."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from serve_fixtures import Server

from lineagegraph.graph.store import open_store
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.settings import GraphSettings

SVG = "{http://www.w3.org/2000/svg}"
SF = "snowflake://acme"
TARGET = f"{SF}/DB.S.ORDERS"
OLD = "s3://raw/a"  # read by the first run only: its edge stopped
HOSTILE = "<img onerror>\"'&ünï🚀"  # no "/" or "=": S3 would fold those away
NEW = f"s3://raw/{HOSTILE}"  # read by the second run only: its edge was added
BETWEEN = "2024-05-05"  # after the first run, before the second


def _run(source: str, at: str) -> dict[str, Any]:
    return {"eventType": "COMPLETE", "eventTime": at, "run": {"runId": f"load-{at}"},
            "job": {"namespace": "airflow", "name": "load"}, "producer": "tests",
            "inputs": [{"namespace": "s3://raw", "name": source}],
            "outputs": [{"namespace": SF, "name": "DB.S.ORDERS"}]}  # fmt: skip


@pytest.fixture(scope="module")
def history_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("explorer-history")
    source = tmp / "events.jsonl"
    runs = [_run("a", "2024-05-01T10:00:00Z"), _run(HOSTILE, "2024-05-10T10:00:00Z")]
    source.write_text("".join(json.dumps(e) + "\n" for e in runs), encoding="utf-8")
    with open_store(GraphSettings(data_dir=tmp / "store")) as store:
        store.init_schema()
        _, report = harvest_openlineage(store, source, full=True)
    assert not report.problems, report.problems
    with Server(tmp / "store").running() as server:
        yield server


def _picture(server: Server, route: str = "graph", **params: str) -> tuple[dict, ET.Element]:  # type: ignore[type-arg]
    r = server.get(f"/api/v1/explore/{route}", name=TARGET, **params)
    assert r.status_code == 200, r.text
    answer = r.json()
    return answer, ET.fromstring(answer["svg"])  # parses as XML, as the page's DOMParser does


def _classes(root: ET.Element, tag: str) -> dict[str, list[ET.Element]]:
    found: dict[str, list[ET.Element]] = {}
    for item in root.iter(f"{SVG}{tag}"):
        found.setdefault(item.get("class") or "", []).append(item)
    return found


def test_the_picture_as_of_a_time_leaves_out_what_did_not_hold_then(
    history_server: Server,
) -> None:
    now, _ = _picture(history_server)
    assert {n["urn"] for n in now["nodes"]} == {TARGET, NEW}
    then, root = _picture(history_server, as_of=BETWEEN)
    assert {n["urn"] for n in then["nodes"]} == {TARGET, OLD}
    assert then["as_of"] == 1_714_867_200_000 and "as of 2024-05-05" in then["title"]
    assert {g.get("data-urn") for g in root.iter(f"{SVG}g")} == {TARGET, OLD}
    assert not any(n["change"] for n in then["nodes"])
    assert all("class" not in entry for entry in then["legend"])
    # before the target was first seen there is no lineage to draw: a clear 404
    early = history_server.get("/api/v1/explore/graph", name=TARGET, as_of="2024-04-01")
    assert early.status_code == 404 and "first seen" in early.json()["reason"]


def test_changes_since_are_marked_with_the_legends_classes(history_server: Server) -> None:
    for route in ("graph", "columns"):
        answer, root = _picture(history_server, route, since=BETWEEN)
        assert {n["urn"]: n["change"] for n in answer["nodes"]} == {
            TARGET: None,
            NEW: "added",
            OLD: "removed",
        }
        assert answer["changes"] == {"added": 2, "removed": 2}  # a node and an edge each
        assert "changes since 2024-05-05" in answer["title"]
        legend = {entry["class"]: entry["colour"] for entry in answer["legend"] if "class" in entry}
        assert set(legend) == {"added", "removed"}
        nodes, edges = _classes(root, "g"), _classes(root, "path")
        urn = [n["urn"] for n in answer["nodes"]]  # what the page names a box by (data-node)
        assert [urn[int(g.get("data-node", -1))] for g in nodes["node added"]] == [NEW]
        assert [urn[int(g.get("data-node", -1))] for g in nodes["node removed"]] == [OLD]
        # the hostile name is drawn as text, never as markup
        assert "<img" not in answer["svg"] and "&lt;img" in answer["svg"]
        assert any(t.text == NEW for t in root.iter(f"{SVG}title"))
        for change, colour in legend.items():
            (edge,) = edges[f"edge {change}"]
            assert edge.get("stroke") == colour
            (box,) = nodes[f"node {change}"][0].iter(f"{SVG}rect")
            assert box.get("stroke") == colour
        assert edges["edge removed"][0].get("stroke-dasharray")
        assert not edges["edge added"][0].get("stroke-dasharray")
    # as of the first run, since before it: everything on the picture is new
    early, _ = _picture(history_server, as_of=BETWEEN, since="2024-04-01")
    assert {n["urn"]: n["change"] for n in early["nodes"]} == {TARGET: "added", OLD: "added"}


def test_a_bad_time_is_a_400_with_the_reason(history_server: Server) -> None:
    cases = [
        ({"as_of": "yesterday"}, "as_of: not a time"),
        ({"since": "2024-13-01"}, "since: not a time"),
        ({"since": "2024-05-10", "as_of": BETWEEN}, "since (2024-05-10"),
        ({"since": "9999-01-01"}, "must be before"),
    ]
    for params, reason in cases:
        for route in ("graph", "columns"):
            r = history_server.get(f"/api/v1/explore/{route}", name=TARGET, **params)
            assert r.status_code == 400, (params, r.text)
            assert reason in r.json()["reason"], (params, r.text)
