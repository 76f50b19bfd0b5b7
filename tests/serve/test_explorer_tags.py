"""Classifications in the explorer over real HTTP: `colour=tag` colours each asset of a
picture by its tags (own and derived, its columns' included) with a legend naming them, and
an asset's page carries each tag's why (origin, path, hops) and where tags stopped."""

from __future__ import annotations

import signal
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_fixtures import Server
from tag_fixtures import tagged_server

from lineagegraph.graph.store import open_store
from lineagegraph.render.style import UNTAGGED, tag_colour
from lineagegraph.settings import GraphSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "questions"))
from test_tags import EMAIL, LAKE, MART, RAW, STG, STG_EMAIL, STG_HASH, graph, write

T0 = 1_700_000_000_000
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with tagged_server(tmp_path_factory, "explore-tags") as running:
        yield running


def fills(answer: dict) -> dict[str, str | None]:  # type: ignore[type-arg]
    """urn -> the fill of its box on the SVG (a box names its node by its place in `nodes`)."""
    root = ET.fromstring(answer["svg"])
    return {
        answer["nodes"][int(g.get("data-node"))]["urn"]: g.find(f"{SVG}rect").get("fill")  # type: ignore[arg-type,union-attr]
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "node"
    }


def test_colour_by_tag(server: Server) -> None:
    got = server.get("/api/v1/explore/graph", name=STG, depth=2, colour="tag")
    assert got.status_code == 200, got.text
    picture = got.json()
    tags = {n["urn"]: n["tags"] for n in picture["nodes"] if n["kind"] != "Transformation"}
    assert tags == {RAW: ["pii=email"], STG: ["pii=email"], MART: ["pii=email"],
                    LAKE: ["pii=email"]}  # fmt: skip
    pii = tag_colour(["pii=email"])
    assert {fills(picture)[urn] for urn in tags} == {pii}
    assert picture["legend"] == [{"label": "pii=email", "colour": pii}]
    # by quality (the default) the nodes carry no tags and the legend names systems
    plain = server.get("/api/v1/explore/graph", name=STG, depth=2).json()
    assert {tuple(n["tags"]) for n in plain["nodes"]} == {()}
    assert pii not in fills(plain).values()


def test_colour_by_tag_in_the_column_view_and_paths(server: Server) -> None:
    columns = server.get("/api/v1/explore/columns", name=MART, depth=1, colour="tag").json()
    assert fills(columns)[MART] == tag_colour(["pii=email"])  # EMAIL carries it
    paths = server.get("/api/v1/explore/path", **{"from": RAW, "to": LAKE}, colour="tag").json()
    assert {n["urn"]: n["tags"] for n in paths["nodes"]}[LAKE] == ["pii=email"]


def test_untagged_assets_have_their_own_colour(tmp_path: Path) -> None:
    data_dir = tmp_path / "store"
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.init_schema()
        write(store, graph())
    running = Server(data_dir)
    running.start()
    try:
        picture = running.get("/api/v1/explore/graph", name=STG, colour="tag").json()
    finally:
        running.kill(signal.SIGTERM)
    assert set(fills(picture).values()) <= {UNTAGGED, "#ffffff"}  # jobs are drawn hollow
    assert picture["legend"] == [{"label": "untagged", "colour": UNTAGGED}]


def test_the_asset_page_says_why(server: Server) -> None:
    page = server.get("/api/v1/explore/asset", name=STG).json()
    tags = page["tags"]
    assert tags["target"]["urn"] == STG
    [derived] = tags["columns"][STG_EMAIL]["derived"]
    assert (derived["key"], derived["value"], derived["hops"]) == ("pii", "email", 1)
    assert derived["path"] == [EMAIL, STG_EMAIL]
    assert (derived["origin"]["source"], derived["origin"]["reason"]) == ("manual", "e-mail")
    assert {(s["dst"], s["reason"]) for s in tags["stops"]} >= {(STG_HASH, "masked by SHA2")}
    raw = server.get("/api/v1/explore/asset", name=RAW).json()["tags"]
    assert [o["key"] for o in raw["columns"][EMAIL]["own"]] == ["pii"]
