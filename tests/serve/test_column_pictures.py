"""The column view's choice of columns when a box cannot list them all, asked in-process of an
embedded store harvested from the explorer's events (the HTTP and browser tests cover the rest)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from explorer_fixtures import CTRL, DAILY, IMG, ORDERS, events

from lineagegraph.graph.store import open_store
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.serve.explorer import column_pictures
from lineagegraph.settings import GraphSettings, Settings

SVG = "{http://www.w3.org/2000/svg}"


def test_a_full_box_lists_the_columns_with_lineage_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "events.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events()), encoding="utf-8")
    monkeypatch.setattr(column_pictures, "MAX_COLUMNS", 2)
    with open_store(GraphSettings(data_dir=tmp_path / "store")) as store:
        store.init_schema()
        harvest_openlineage(store, source, full=True)
        view = column_pictures.columns(store, Settings(), ORDERS, "downstream", 1, False)
    # ORDERS has four columns, three with lineage on the picture: two of those are listed
    # (by name); DAILY_SALES's three all feed from ORDERS, so the first two by name
    assert [(c["asset"], c["name"]) for c in view["columns"]] == [
        (ORDERS, IMG), (ORDERS, "AMOUNT"), (DAILY, "DAY"), (DAILY, "NOTE"),
    ]  # fmt: skip
    assert CTRL not in {c["name"] for c in view["columns"]}
    # only edges between listed columns are drawn
    edges = [(e["from"], e["to"]) for e in view["column_edges"]]
    assert edges == [(f"{ORDERS}#{IMG}", f"{DAILY}#NOTE")]
    root = ET.fromstring(view["svg"])
    notes = [t.text for t in root.iter(f"{SVG}text") if (t.text or "").startswith("…")]
    assert notes == ["… 2 more column(s)", "… 1 more column(s)"]
