"""Classifications in lineage answers: `upstream`, `downstream` and `impact` list each asset's
tags (its own and its columns', own and derived, with the why in JSON) through the CLI on the
embedded store, and the Python API's answers carry them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tags import (  # the graph and the CLI of the tag tests
    EMAIL,
    LAKE,
    MART,
    MART_EMAIL,
    RAW,
    STG,
    STG_EMAIL,
    T0,
    fact,
    graph,
    run,
    write,
)

from lineagegraph.graph.store import GraphStore

__all__ = ["run"]  # a fixture


def by_urn(assets: list[dict[str, Any]]) -> dict[str, list[tuple[Any, ...]]]:
    """urn -> (tag, on, kind, origin, hops) of each tag listed beside it."""
    return {
        a["urn"]: [(t["tag"], t["on"], t["kind"], t["origin"], t["hops"]) for t in a["tags"]]
        for a in assets
    }


def test_impact_and_upstream_list_tags_with_their_why(run) -> None:  # type: ignore[no-untyped-def]
    assert run("tag", "RAW.PUBLIC.USERS#EMAIL", "pii=email", "--reason", "e-mail").exit_code == 0
    assert run("tag", "RAW.PUBLIC.USERS", "owner=crm").exit_code == 0
    impact = json.loads(run("impact", "RAW.PUBLIC.USERS", "--format", "json").stdout)
    assert by_urn([impact["start"]]) == {
        RAW: [("owner=crm", RAW, "own", RAW, 0), ("pii=email", EMAIL, "own", EMAIL, 0)]
    }
    tags = by_urn(impact["assets"])
    assert tags[MART] == [
        ("owner=crm", MART, "derived", RAW, 2),  # a plain column copy carries an asset's tag
        ("pii=email", MART_EMAIL, "derived", EMAIL, 2),  # on its column
    ]
    assert sorted(tags[LAKE]) == [
        ("owner=crm", LAKE, "derived", RAW, 2),
        ("pii=email", LAKE, "derived", EMAIL, 2),
        ("zone=lake", LAKE, "own", LAKE, 0),  # a settings glob
    ]
    [lake] = [a for a in impact["assets"] if a["urn"] == LAKE]
    [pii] = [t for t in lake["tags"] if t["tag"] == "pii=email"]
    assert (pii["path"], pii["source"], pii["reason"]) == (
        [EMAIL, STG_EMAIL, LAKE],
        "manual",
        "e-mail",
    )
    assert [g["tags"] for g in impact["groups"]["snowflake/Table"]] == [
        a["tags"] for a in impact["assets"] if a["system"] == "snowflake"
    ]
    text = run("impact", "RAW.PUBLIC.USERS").output
    assert f"{LAKE}  (distance 2, tags owner=crm, pii=email, zone=lake)" in text
    assert "(tags owner=crm, pii=email)" in text.splitlines()[0]

    up = json.loads(run("upstream", "s3://lake/users export", "--format", "json").stdout)
    assert by_urn(up["assets"])[STG] == [
        ("owner=crm", STG, "derived", RAW, 1),
        ("pii=email", STG_EMAIL, "derived", EMAIL, 1),
    ]
    table = run("upstream", "s3://lake/users export").output.splitlines()
    assert "tags" in table[1].split()
    assert any(RAW in line and "owner=crm, pii=email" in line for line in table)
    tree = run("upstream", "s3://lake/users export", "--format", "tree").output
    assert "tags owner=crm, pii=email, zone=lake]" in tree.splitlines()[0]


def test_untagging_clears_the_answers(run) -> None:  # type: ignore[no-untyped-def]
    run("tag", "RAW.PUBLIC.USERS#EMAIL", "pii=email")
    run("untag", "RAW.PUBLIC.USERS#EMAIL", "pii")
    down = json.loads(run("downstream", "RAW.PUBLIC.USERS", "--format", "json").stdout)
    assert {a["urn"]: [t["tag"] for t in a["tags"]] for a in down["assets"]} == {
        STG: [],
        MART: [],
        LAKE: ["zone=lake"],
    }
    table = run("downstream", "STG.PUBLIC.USERS", "--label", "Table").output
    assert "tags" not in table.splitlines()[1].split()  # no column when nothing is tagged


def test_the_python_api_answers_carry_tags(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lineagegraph

    write(store, [*graph(), fact(EMAIL, "pii=email")])
    monkeypatch.delenv("LINEAGEGRAPH_CONFIG", raising=False)
    settings = lineagegraph.load_settings(identity={"snowflake_account": "acme"})
    up = lineagegraph.upstream(store, settings, "MART.PUBLIC.USER_COUNTS")
    assert {a.urn: a.tag_names for a in up.assets} == {STG: ["pii=email"], RAW: ["pii=email"]}
    impact = lineagegraph.impact(store, settings, "RAW.PUBLIC.USERS").impact
    assert {a.urn: a.tag_names for a in impact.assets} == {
        STG: ["pii=email"],
        MART: ["pii=email"],
        LAKE: ["pii=email"],
    }
    columns = lineagegraph.columns(store, settings, "MART.PUBLIC.USER_COUNTS#EMAIL")
    assert columns.start.tags is None  # not a listing of assets: not asked
    write(store, [fact(EMAIL, "pii=email", at=T0 + 1, removed=True)])  # nothing tagged now
    impact = lineagegraph.impact(store, settings, "RAW.PUBLIC.USERS").impact
    assert [a.tags for a in [impact.start, *impact.assets]] == [(), (), (), ()]


def test_pictures_mark_the_assets_that_carry_tags(run) -> None:  # type: ignore[no-untyped-def]
    """Mermaid, DOT and the HTML page name each asset's tags under it and draw its border
    apart; an untagged asset has neither."""
    run("tag", "RAW.PUBLIC.USERS#EMAIL", "pii=email")
    mermaid = run("downstream", "RAW.PUBLIC.USERS", "--format", "mermaid").output
    lines = mermaid.splitlines()
    [mart] = [line for line in lines if "USER_COUNTS" in line]
    assert "snowflake · Table · tags pii=email</small>" in mart
    tagged = {line.split()[0] for line in lines if "tags pii=email" in line}
    tagged -= {line.split()[0] for line in lines if "RAW.PUBLIC.USERS" in line}  # the start
    [classes] = [line for line in lines if line.strip().endswith(" tagged")]
    assert set(classes.split()[1].split(",")) == {t.partition("[")[0] for t in tagged}
    assert "classDef tagged stroke:#b91c1c" in mermaid

    dot = run("downstream", "RAW.PUBLIC.USERS", "--format", "dot").output
    [mart] = [line for line in dot.splitlines() if "USER_COUNTS" in line]
    assert 'color="#b91c1c"' in mart and "penwidth=3" in mart
    assert "\\ntags: pii=email" in mart  # the tooltip

    page = run("downstream", "RAW.PUBLIC.USERS", "--format", "html").output
    assert "red border: carries a classification" in page
    assert f"<td>{MART}</td><td>pii=email</td>" in page
    assert 'stroke="#b91c1c"' in page

    run("untag", "RAW.PUBLIC.USERS#EMAIL", "pii")
    after = run("downstream", "RAW.PUBLIC.USERS", "--format", "mermaid").output.splitlines()
    assert not any("pii" in line for line in after)
    [lake] = [line.split("[")[0].strip() for line in after if "tags zone=lake" in line]
    assert f"  class {lake} tagged" in after  # only the asset a settings glob tags
