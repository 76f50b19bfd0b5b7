"""The explorer's column view as of a time, over real HTTP: the columns an asset had then and
their column lineage then, from history written by a real OpenLineage harvest in which a
load's second run dropped a column (its schema facet) and added another, with column lineage
for both runs; and once in chromium, through the page's time control and "deleted" box."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import test_explorer_browser
from serve_fixtures import TOKEN, Server
from test_explorer_browser import CHROMIUM, DRIVER, by_css, column_urns, drawn, wait

from lineagegraph.graph.store import open_store
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.render.style import CHANGE_COLOURS
from lineagegraph.settings import GraphSettings

browser = test_explorer_browser.browser  # a fixture: headless chromium
SVG = "{http://www.w3.org/2000/svg}"
SF = "snowflake://acme"
ORDERS = f"{SF}/DB.S.ORDERS"
RAW = "s3://raw/orders"
FIRST, SECOND = "2024-05-01T10:00:00Z", "2024-05-10T10:00:00Z"
DROPPED_AT = int(datetime(2024, 5, 10, 10, tzinfo=UTC).timestamp() * 1000)  # the second run


def _load(at: str, fed: dict[str, str]) -> dict[str, Any]:
    """A run of the load writing ORDERS with ID and the columns of `fed` (column <- raw field)."""
    schema = [{"name": n, "type": "NUMBER"} for n in ("ID", *fed)]
    lineage = {
        column: {"inputFields": [{"namespace": "s3://raw", "name": "orders", "field": field}]}
        for column, field in fed.items()
    }
    raw_schema = [{"name": n, "type": "double"} for n in ("amount", "coupon", "discount")]
    return {"eventType": "COMPLETE", "eventTime": at, "run": {"runId": f"load-{at}"},
            "job": {"namespace": "airflow", "name": "load"}, "producer": "tests",
            "inputs": [{"namespace": "s3://raw", "name": "orders",
                        "facets": {"schema": {"fields": raw_schema}}}],
            "outputs": [{"namespace": SF, "name": "DB.S.ORDERS",
                         "facets": {"schema": {"fields": schema},
                                    "columnLineage": {"fields": lineage}}}]}  # fmt: skip


@pytest.fixture(scope="module")
def orders_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """ORDERS had COUPON (fed by raw coupon) until the second run, which dropped it and added
    DISCOUNT (fed by raw discount); AMOUNT is fed by raw amount throughout."""
    tmp = tmp_path_factory.mktemp("explorer-columns-history")
    source = tmp / "events.jsonl"
    runs = [
        _load(FIRST, {"AMOUNT": "amount", "COUPON": "coupon"}),
        _load(SECOND, {"AMOUNT": "amount", "DISCOUNT": "discount"}),
    ]
    source.write_text("".join(json.dumps(e) + "\n" for e in runs), encoding="utf-8")
    with open_store(GraphSettings(data_dir=tmp / "store")) as store:
        store.init_schema()
        _, report = harvest_openlineage(store, source, full=True)
    assert not report.problems, report.problems
    with Server(tmp / "store").running() as running:
        yield running


def _columns(orders_server: Server, **params: str) -> tuple[dict[str, Any], ET.Element]:
    r = orders_server.get("/api/v1/explore/columns", name=ORDERS, **params)
    assert r.status_code == 200, r.text
    answer = r.json()
    return answer, ET.fromstring(answer["svg"])


def _of_orders(answer: dict[str, Any]) -> dict[str, int | None]:
    """ORDERS' columns listed, each with when it was dropped (None: standing)."""
    return {c["name"]: c["dropped_at"] for c in answer["columns"] if c["asset"] == ORDERS}


def _feeds(answer: dict[str, Any]) -> set[tuple[str, str]]:
    """The column edges as (raw field, ORDERS column)."""
    return {
        (e["from"].rsplit("#", 1)[1], e["to"].rsplit("#", 1)[1]) for e in answer["column_edges"]
    }


def test_as_of_a_time_the_columns_and_their_lineage_are_those_of_then(
    orders_server: Server,
) -> None:
    for as_of in ("2024-05-05", str(DROPPED_AT - 1)):  # before the drop, to the millisecond
        then, root = _columns(orders_server, as_of=as_of)
        # DISCOUNT was first seen later: not there; COUPON was dropped later: there
        assert _of_orders(then) == {"ID": None, "AMOUNT": None, "COUPON": None}
        assert _feeds(then) == {("amount", "AMOUNT"), ("coupon", "COUPON")}
        assert not [g for g in root.iter(f"{SVG}g") if g.get("class") == "column dropped"]
        # a column first seen later stays out even when deleted ones are asked for
        with_deleted, _ = _columns(orders_server, as_of=as_of, include_deleted="true")
        assert _of_orders(with_deleted) == _of_orders(then)
    for as_of in (None, str(DROPPED_AT), "2024-05-11"):  # now, and from the drop on
        params = {} if as_of is None else {"as_of": as_of}
        after, _ = _columns(orders_server, **params)
        assert _of_orders(after) == {"ID": None, "AMOUNT": None, "DISCOUNT": None}
        assert _feeds(after) == {("amount", "AMOUNT"), ("discount", "DISCOUNT")}
        # the raw side still has coupon: a drop is its own asset's
        assert f"{RAW}#coupon" in {c["urn"] for c in after["columns"]}


def test_a_dropped_column_is_shown_marked_when_deleted_ones_are_asked_for(
    orders_server: Server,
) -> None:
    answer, root = _columns(orders_server, include_deleted="true")
    assert _of_orders(answer) == {
        "ID": None, "AMOUNT": None, "COUPON": DROPPED_AT, "DISCOUNT": None,
    }  # fmt: skip
    # its lineage, which stopped when it was dropped, is drawn too
    assert _feeds(answer) == {("amount", "AMOUNT"), ("coupon", "COUPON"), ("discount", "DISCOUNT")}
    urns = [c["urn"] for c in answer["columns"]]  # what data-column indexes
    (gone,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "column dropped"]
    assert urns[int(gone.get("data-column", -1))] == f"{ORDERS}#COUPON"
    assert gone.findtext(f"{SVG}title") == f"{ORDERS}#COUPON (dropped 2024-05-10 10:00:00Z)"
    (name,) = gone.iter(f"{SVG}text")
    assert name.text == "COUPON" and name.get("text-decoration") == "line-through"


def _marks(answer: dict[str, Any], root: ET.Element) -> dict[str, str | None]:
    """ORDERS' columns listed, each with its change since (None: none), checked against the
    class and outline of its row in the SVG."""
    marks = {c["name"]: c["change"] for c in answer["columns"] if c["asset"] == ORDERS}
    urns = [c["urn"] for c in answer["columns"]]
    for g in root.iter(f"{SVG}g"):
        if "column" not in (g.get("class") or "").split():
            continue
        column = answer["columns"][int(g.get("data-column", -1))]
        change = column["change"]
        assert (change in (g.get("class") or "").split()) == bool(change), g.attrib
        rect = g.find(f"{SVG}rect")
        assert rect is not None
        assert (rect.get("stroke") == CHANGE_COLOURS.get(change or "")) == bool(change)
        assert urns.index(column["urn"]) == int(g.get("data-column", -1))
    return marks


def _feed_marks(answer: dict[str, Any], root: ET.Element) -> dict[tuple[str, str], str | None]:
    """The column edges as (raw field, ORDERS column) with their change, checked against the
    SVG's paths."""
    drawn = {
        (int(p.get("data-from", -1)), int(p.get("data-to", -1))): p.get("class")
        for p in root.iter(f"{SVG}path")
        if "feed" in (p.get("class") or "").split()
    }
    urns = [c["urn"] for c in answer["columns"]]
    marks = {}
    for e in answer["column_edges"]:
        pair = (e["from"].rsplit("#", 1)[1], e["to"].rsplit("#", 1)[1])
        marks[pair] = e["change"]
        ends = (urns.index(e["from"]), urns.index(e["to"]))
        assert drawn[ends] == ("feed " + e["change"] if e["change"] else "feed")
    return marks


def test_changes_since_a_time_mark_the_columns_and_edges_added_and_removed(
    orders_server: Server,
) -> None:
    between = "2024-05-05"  # after the first run, before the second
    for params in ({}, {"include_deleted": "true"}):
        answer, root = _columns(orders_server, since=between, **params)
        # COUPON, dropped since, is drawn again (or listed as dropped) and marked removed
        assert _marks(answer, root) == {
            "ID": None, "AMOUNT": None, "COUPON": "removed", "DISCOUNT": "added",
        }  # fmt: skip
        assert _feed_marks(answer, root) == {
            ("amount", "AMOUNT"): None,
            ("coupon", "COUPON"): "removed",
            ("discount", "DISCOUNT"): "added",
        }
        assert answer["column_changes"] == {"added": 2, "removed": 2}
    # as of a time before the drop, nothing changed since the first run's day
    answer, root = _columns(orders_server, since=between, as_of=str(DROPPED_AT - 1))
    assert _marks(answer, root) == {"ID": None, "AMOUNT": None, "COUPON": None}
    assert answer["column_changes"] == {"added": 0, "removed": 0}
    # before the first run nothing stood: all that stands is added, nothing removed
    answer, root = _columns(orders_server, since="2024-04-01")
    assert set(_marks(answer, root).values()) == {"added"}
    assert set(_feed_marks(answer, root).values()) == {"added"}
    # without `since`, nothing is marked and no count is given
    answer, root = _columns(orders_server)
    assert set(_marks(answer, root).values()) == {None} and "column_changes" not in answer


def test_a_bad_time_is_a_400_with_the_reason(orders_server: Server) -> None:
    for params, reason in [
        ({"as_of": "last tuesday"}, "as_of: not a time"),
        ({"as_of": "2024-02-30"}, "as_of: not a time"),
        ({"as_of": "2024-05-05", "since": "2024-05-06"}, "since (2024-05-06"),
    ]:
        r = orders_server.get(
            "/api/v1/explore/columns", name=ORDERS, include_deleted="true", **params
        )
        assert r.status_code == 400, (params, r.text)
        assert reason in r.json()["reason"], (params, r.text)


@pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and its driver")
def test_in_the_browser_as_of_lists_then_s_columns_and_dropped_ones_on_request(
    orders_server: Server, browser: Any
) -> None:
    browser.get(orders_server.url + "/")
    browser.execute_script("sessionStorage.setItem('lineagegraph-token', arguments[0])", TOKEN)
    browser.refresh()
    browser.find_element("id", "search").send_keys("DB.S.ORDERS\n")
    wait(browser, lambda d: ORDERS in drawn(d))
    browser.find_element("id", "columns").click()

    def listed(d: Any) -> set[str]:
        return {u.rsplit("#", 1)[1] for u in column_urns(d, "#canvas g.column") if ORDERS in u}

    wait(browser, lambda d: listed(d) == {"ID", "AMOUNT", "DISCOUNT"})
    set_as_of = (  # as the time control's input would hold it: the browser's local time
        "const box = document.getElementById('as-of'); box.value = arguments[0] === null ? ''"
        " : localTime(arguments[0]); box.dispatchEvent(new Event('change'));"
    )
    browser.execute_script(set_as_of, DROPPED_AT - 1)
    wait(browser, lambda d: listed(d) == {"ID", "AMOUNT", "COUPON"})
    browser.execute_script(set_as_of, None)
    wait(browser, lambda d: listed(d) == {"ID", "AMOUNT", "DISCOUNT"})
    set_since = set_as_of.replace("'as-of'", "'since'")
    browser.execute_script(set_since, DROPPED_AT - 86_400_000)  # changes since the day before
    marked = {"ID", "AMOUNT", "DISCOUNT (added)", "COUPON (removed)"}  # tooltips
    wait(browser, lambda d: listed(d) == marked)
    summary = browser.find_element("id", "summary").text
    assert summary.endswith("; columns and their edges 2 added, 2 removed"), summary
    browser.execute_script(set_since, None)
    wait(browser, lambda d: listed(d) == {"ID", "AMOUNT", "DISCOUNT"})
    browser.find_element("id", "deleted").click()
    dropped = {"ID", "AMOUNT", "DISCOUNT", "COUPON (dropped 2024-05-10 10:00:00Z)"}  # tooltips
    wait(browser, lambda d: listed(d) == dropped)
    (gone,) = by_css(browser, "#canvas g.column.dropped")
    gone.click()
    picked = browser.find_element("id", "picked").text
    assert picked.startswith(f"Column COUPON (dropped 2024-05-10T10:00:00Z) of {ORDERS}: 1 ")
    logs = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not logs, logs
