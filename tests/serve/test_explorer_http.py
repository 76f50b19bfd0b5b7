"""The explorer's page, files and reads over real HTTP: what the browser gets, the token rule,
the security headers and every error as JSON."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import requests
from click.testing import CliRunner
from explorer_fixtures import CTRL, DAILY, EXPORT, IMG, OLD, ORDERS, RAW
from serve_fixtures import Server

from lineagegraph.cli import cli as cli_main

SVG = "{http://www.w3.org/2000/svg}"


def drawn(answer: dict) -> set[str]:  # type: ignore[type-arg]
    """The urns on the SVG itself (parsed as XML, as the page's DOMParser does)."""
    root = ET.fromstring(answer["svg"])
    return {g.get("data-urn") for g in root.iter(f"{SVG}g") if g.get("class") == "node"}


def test_the_page_and_its_files_need_no_token_and_carry_a_strict_policy(
    explorer_server: Server,
) -> None:
    page = requests.get(explorer_server.url + "/", timeout=30)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "connect-src 'self'" in policy and "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in page.text  # scripts come from files only
    assert "http://" not in page.text and "https://" not in page.text  # nothing from elsewhere
    for name, kind in (("explorer.js", "text/javascript"), ("explorer.css", "text/css")):
        got = requests.get(f"{explorer_server.url}/explorer/{name}", timeout=30)
        assert got.status_code == 200 and got.headers["content-type"].startswith(kind)
        assert "http://" not in got.text and "https://" not in got.text
    for missing in ("index.html", "..%2Fapp.py", "nope.js"):
        got = requests.get(f"{explorer_server.url}/explorer/{missing}", timeout=30)
        assert got.status_code == 404 and got.json()["error"] == "Not Found", missing


def test_the_reads_need_the_token(explorer_server: Server) -> None:
    r = requests.get(
        f"{explorer_server.url}/api/v1/explore/suggest", params={"q": "daily"}, timeout=30
    )
    assert r.status_code == 401 and "Bearer" in r.json()["reason"]
    assert explorer_server.get("/api/v1/explore/suggest", q="daily").json() == [EXPORT, DAILY]
    # no urn holds a typo: the nearest names instead
    assert DAILY in explorer_server.get("/api/v1/explore/suggest", q="DAILY_SALEZ").json()


def test_a_picture_grows_around_the_nodes_expanded(explorer_server: Server) -> None:
    small = explorer_server.get("/api/v1/explore/graph", name=DAILY, depth=1).json()
    assert drawn(small) == {DAILY, ORDERS, EXPORT} == {n["urn"] for n in small["nodes"]}
    assert [n["urn"] for n in small["nodes"] if n["start"]] == [DAILY]
    assert {n["urn"]: n["level"] for n in small["nodes"]} == {DAILY: 0, ORDERS: -1, EXPORT: 1}
    assert {n["urn"]: n["quality"] for n in small["nodes"]}[ORDERS] == "fail"
    assert [e["label"] for e in small["legend"]] == ["pass", "warn", "error", "fail", "unknown"]

    grown = explorer_server.get("/api/v1/explore/graph", name=DAILY, depth=1, expand=ORDERS)
    nodes = {n["urn"]: n["level"] for n in grown.json()["nodes"]}
    assert nodes == {DAILY: 0, ORDERS: -1, EXPORT: 1, RAW: -2}
    assert grown.json()["edges"] == 3
    # a urn not on the picture grows nothing
    other = explorer_server.get("/api/v1/explore/graph", name=DAILY, depth=1, expand=RAW)
    assert {n["urn"] for n in other.json()["nodes"]} == {DAILY, ORDERS, EXPORT}

    up = explorer_server.get(
        "/api/v1/explore/graph", name=DAILY, direction="upstream", colour="system"
    ).json()
    assert drawn(up) == {DAILY, ORDERS, RAW}
    assert [e["label"] for e in up["legend"]] == ["s3", "snowflake"]
    impact = explorer_server.get("/api/v1/explore/graph", name=ORDERS, direction="impact").json()
    jobs = {n["urn"] for n in impact["nodes"] if n["kind"] == "Transformation"}
    assert jobs == {
        "openlineage://airflow/mart",
        "openlineage://airflow/export",
        "openlineage://airflow/archive",
    }


def test_deleted_assets_only_on_request(explorer_server: Server) -> None:
    down = explorer_server.get("/api/v1/explore/graph", name=DAILY, direction="downstream")
    assert drawn(down.json()) == {DAILY, EXPORT}
    both = explorer_server.get(
        "/api/v1/explore/graph", name=DAILY, direction="downstream", include_deleted="true"
    ).json()
    assert drawn(both) == {DAILY, EXPORT, OLD}
    assert [n["urn"] for n in both["nodes"] if n["deleted"]] == [OLD]
    assert 'stroke-dasharray="5 3"' in both["svg"]  # drawn dashed
    gone = explorer_server.get("/api/v1/explore/graph", name=OLD)
    assert gone.status_code == 410 and "deleted" in gone.json()["reason"]
    odd = explorer_server.get("/api/v1/explore/graph", name=DAILY, include_deleted="maybe")
    assert odd.status_code == 400 and "include_deleted" in odd.json()["reason"]


def test_the_column_view_lists_columns_and_their_lineage(explorer_server: Server) -> None:
    r = explorer_server.get("/api/v1/explore/columns", name=DAILY, depth=1)
    assert r.status_code == 200, r.text
    view = r.json()
    # the asset picture is the graph route's, in the same order
    plain = explorer_server.get("/api/v1/explore/graph", name=DAILY, depth=1).json()
    assert view["nodes"] == plain["nodes"] and view["edges"] == plain["edges"] == 2
    # each asset's columns by name, in the order of the nodes (start, upstream, downstream)
    assert [(c["asset"], c["name"]) for c in view["columns"]] == [
        (DAILY, "DAY"), (DAILY, "NOTE"), (DAILY, "TOTAL"),
        (ORDERS, IMG), (ORDERS, "AMOUNT"), (ORDERS, "ORDERED_AT"), (ORDERS, CTRL),
        (EXPORT, "day"), (EXPORT, "total"),
    ]  # fmt: skip
    assert all(c["urn"] == f"{c['asset']}#{c['name']}" for c in view["columns"])
    mart, export = ["openlineage://airflow/mart"], ["openlineage://airflow/export"]
    assert view["column_edges"] == [
        {"from": f"{DAILY}#DAY", "to": f"{EXPORT}#day", "via": export, "change": None},
        {"from": f"{DAILY}#TOTAL", "to": f"{EXPORT}#total", "via": export, "change": None},
        {"from": f"{ORDERS}#{IMG}", "to": f"{DAILY}#NOTE", "via": mart, "change": None},
        {"from": f"{ORDERS}#AMOUNT", "to": f"{DAILY}#TOTAL", "via": mart, "change": None},
        {"from": f"{ORDERS}#ORDERED_AT", "to": f"{DAILY}#DAY", "via": mart, "change": None},
    ]  # raw/orders is two hops away: not on the picture, so neither are its columns' edges

    # the SVG is well-formed XML (no control character in it) and names are only text in it
    root = ET.fromstring(view["svg"])
    assert not [el.tag for el in root.iter() if not el.tag.startswith(SVG)]  # no <img>
    assert "<img" not in view["svg"] and "&lt;img src=x onerror=alert(1)&gt;" in view["svg"]
    rows = [g for g in root.iter(f"{SVG}g") if g.get("class") == "column"]
    texts = {int(g.get("data-column")): g.find(f"{SVG}text").text for g in rows}
    names = {i: c["name"] for i, c in enumerate(view["columns"])}
    assert names[6] == CTRL and texts == names | {6: "tab\\there\\x1f"}  # written out
    boxes = [int(g.get("data-node")) for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    assert boxes == [0, 1, 2]  # the page finds each box's urn in `nodes`
    feeds = {
        (int(p.get("data-from")), int(p.get("data-to")))
        for p in root.iter(f"{SVG}path")
        if p.get("class") == "feed"
    }
    index = {c["urn"]: i for i, c in enumerate(view["columns"])}
    assert feeds == {(index[e["from"]], index[e["to"]]) for e in view["column_edges"]}


def test_the_column_view_follows_the_pictures_options(explorer_server: Server) -> None:
    old = explorer_server.get(
        "/api/v1/explore/columns", name=DAILY, direction="downstream", include_deleted="true"
    ).json()
    assert [(c["asset"], c["name"]) for c in old["columns"]] == [
        (DAILY, "DAY"), (DAILY, "NOTE"), (DAILY, "TOTAL"), (EXPORT, "day"), (EXPORT, "total"),
        (OLD, "total"),
    ]  # fmt: skip
    assert {(e["from"], e["to"]) for e in old["column_edges"]} == {
        (f"{DAILY}#DAY", f"{EXPORT}#day"), (f"{DAILY}#TOTAL", f"{EXPORT}#total"),
        (f"{DAILY}#TOTAL", f"{OLD}#total"),
    }  # fmt: skip
    # grown around ORDERS: raw/orders and its columns join, and so do their edges
    grown = explorer_server.get("/api/v1/explore/columns", name=DAILY, depth=1, expand=ORDERS)
    edges = {(e["from"], e["to"]) for e in grown.json()["column_edges"]}
    assert {(f"{RAW}#amount", f"{ORDERS}#AMOUNT"), (f"{RAW}#ts", f"{ORDERS}#ORDERED_AT")} < edges
    # impact: transformations are drawn, with no columns
    impact = explorer_server.get("/api/v1/explore/columns", name=ORDERS, direction="impact")
    assert {c["asset"] for c in impact.json()["columns"]} == {ORDERS, DAILY, EXPORT}
    assert "Transformation" in {n["kind"] for n in impact.json()["nodes"]}
    cases = [({"name": DAILY, "direction": "sideways"}, 400, "direction"),
             ({"name": DAILY, "depth": "0"}, 400, "depth"), ({}, 400, "name"),
             ({"name": "DAILY_SALEZ"}, 404, "no asset matches"),
             ({"name": OLD}, 410, "deleted")]  # fmt: skip
    for params, status, words in cases:
        r = explorer_server.get("/api/v1/explore/columns", **params)
        assert r.status_code == status and words in r.json()["reason"], (params, r.text)
    spec = explorer_server.get("/openapi.json").json()
    names = {p["name"] for p in spec["paths"]["/api/v1/explore/columns"]["get"]["parameters"]}
    assert names == {
        "name", "direction", "depth", "expand", "colour", "include_deleted", "as_of", "since"
    }  # fmt: skip


def test_paths_and_the_asset_page(explorer_server: Server) -> None:
    found = explorer_server.get("/api/v1/explore/path", **{"from": RAW, "to": EXPORT}).json()
    assert found["paths"] == 1 and drawn(found) == {RAW, ORDERS, DAILY, EXPORT}
    none = explorer_server.get("/api/v1/explore/path", **{"from": EXPORT, "to": RAW}).json()
    assert none["paths"] == 0 and none["note"] == "no path within 10 hops"

    page = explorer_server.get("/api/v1/explore/asset", name="DB.S.ORDERS").json()
    assert page["asset"]["urn"] == ORDERS and page["asset"]["quality"] == "fail"
    assert page["labels"] == ["Asset", "Table"]
    assert page["properties"]["system"] == "snowflake"
    jobs = {(t["name"], t["rel"], t["runs"]) for t in page["transformations"]}
    assert jobs == {("load", "WRITES_TO", 2), ("mart", "READS_FROM", 1)}
    checks = {(c["name"], c["target"], c["status"]) for c in page["checks"]}
    assert checks == {("row_count", ORDERS, "pass"), ("not_null", ORDERS + "#AMOUNT", "fail")}


def test_bad_requests_get_a_reason(explorer_server: Server) -> None:
    cases = [
        ("/api/v1/explore/graph", {"name": DAILY, "direction": "sideways"}, 400, "direction"),
        ("/api/v1/explore/graph", {"name": DAILY, "depth": "0"}, 400, "depth"),
        ("/api/v1/explore/graph", {}, 400, "name"),
        ("/api/v1/explore/graph", {"name": "DAILY_SALEZ"}, 404, "no asset matches"),
        ("/api/v1/explore/asset", {"name": "nothing-like-it"}, 404, "no asset"),
        ("/api/v1/explore/path", {"from": RAW}, 400, "to"),
        ("/api/v1/explore/suggest", {}, 400, "q"),
    ]
    for path, params, status, words in cases:
        r = explorer_server.get(path, **params)
        assert r.status_code == status, (path, params, r.text)
        assert words in r.json()["reason"], (path, params, r.text)
    missing = explorer_server.get("/api/v1/explore/graph", name="DAILY_SALEZ").json()
    assert DAILY in missing["suggestions"]
    many = explorer_server.get("/api/v1/explore/graph", name=DAILY, expand=[ORDERS] * 51)
    assert many.status_code == 400 and "expand" in many.json()["reason"]


def test_the_orphan_table_reads_the_cli_report(explorer_server: Server) -> None:
    r = explorer_server.get("/api/v1/orphans", by="dataset")
    assert r.status_code == 200, r.text
    doc = r.json()
    cli = CliRunner().invoke(
        cli_main,
        [
            "--data-dir",
            str(explorer_server.data_dir),
            "orphans",
            "--by",
            "dataset",
            "--format",
            "json",
        ],
    )
    assert cli.exit_code == 0, cli.output
    expected = json.loads(cli.stdout)
    assert doc["rows"] == expected["rows"] and doc["totals"] == expected["totals"]
    assert [(row["bucket"], row["dataset"]) for row in doc["rows"]] == [
        ("other", "s3://other/x"),  # 3 GiB, the most expensive first
        ("lake", "s3://lake/raw/orders"),
        ("lake", "s3://lake/raw/events"),
    ]
    assert doc["totals"]["objects"] == 3 and doc["lookback_days"] == 90
    bad = explorer_server.get("/api/v1/orphans", by="owner")
    assert bad.status_code == 400 and "by" in bad.json()["reason"]
    bad = explorer_server.get("/api/v1/orphans", lookback_days="0")
    assert bad.status_code == 400 and "lookback_days" in bad.json()["reason"]
