"""The embedded store decodes FalkorDB's compact replies itself for the scalar types a report's
rows are made of: every value type must come out exactly as the client's own parser (then
`_plain`) makes it, on a real server's replies."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from falkordb import QueryResult
from falkordb.graph import RO_QUERY_CMD
from graphs import drop_graph

from lineagegraph.errors import QueryError
from lineagegraph.graph.falkordb import FalkorDBStore, _plain, _result
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings

AWKWARD = [
    "",
    " padded ",
    "true",
    "false",
    "null",
    "tab\there\nnew line\r\x01\x1f\x7f",
    "ünï cødé ✓ 漢字 😀 \u200b\u2028",
    'it\'s "quoted" \\ back',
    "nul\x00 and the store's code \x02\x0e\x0f\x10\x12\x1f ",
]
VALUES = (
    "null AS null, true AS yes, false AS no, 0 AS zero, -1 AS minus, 9223372036854775807 AS big, "
    "1.5 AS half, -0.0 AS negzero, 1e300 AS huge, 0.1 + 0.2 AS inexact, 7 / 2.0 AS ratio, "
    "toFloat(3) AS whole, 0.0 / 0.0 AS nan, 1e308 * 10 AS inf, $strings AS strings, "
    "[1, 'a', null, true, 2.5, [[]], {k: [false]}] AS mixed, [] AS empty, "
    "{a: 1, `ü k`: 'v', n: null, nested: {b: [1.0]}} AS map, {} AS nothing"
)


@pytest.fixture
def store(embedded_dir: Path) -> Iterator[FalkorDBStore]:
    s = open_store(GraphSettings(data_dir=embedded_dir, graph_name="decoding"))
    assert isinstance(s, FalkorDBStore)
    try:
        yield s
    finally:
        drop_graph(s)
        s.close()


def both(store: FalkorDBStore, text: str, params: dict[str, Any] | None = None) -> list[Any]:
    """The rows `_result` decodes, after checking they equal the client parser's, value for
    value and type for type (True is not 1, 1.0 is not 1)."""
    query = store._encode(text, params)
    reply = store._graph.execute_command(RO_QUERY_CMD, store._graph.name, query, "--compact")
    generic = QueryResult(store._graph, reply)
    ours = _result(reply, store._graph)
    assert ours.columns == [str(h[1]) for h in generic.header]
    expected = [[_plain(v) for v in row] for row in generic.result_set]
    assert _typed(ours.rows) == _typed(expected)
    return ours.rows


def _typed(value: Any) -> Any:
    """A value with the type of each part spelled out, so equal means the same types too
    (NaN, which equals nothing, compares by name)."""
    if isinstance(value, list):
        return ["list", [_typed(v) for v in value]]
    if isinstance(value, dict):
        return [type(value).__name__, [(k, _typed(v)) for k, v in value.items()]]
    if isinstance(value, float) and math.isnan(value):
        return ["float", "nan"]
    return [type(value).__name__, value]


def test_scalars_lists_and_maps_decode_as_the_client_parses_them(store: FalkorDBStore) -> None:
    [row] = both(store, f"RETURN {VALUES}", {"strings": AWKWARD})
    # The server sends doubles to 15 significant digits: 0.1 + 0.2 arrives as 0.3.
    assert row[:12] == [None, True, False, 0, -1, 2**63 - 1, 1.5, -0.0, 1e300, 0.3, 3.5, 3.0]
    assert [type(v) for v in row[1:4]] == [bool, bool, int] and type(row[11]) is float
    assert math.isnan(row[12]) and row[13] == math.inf
    assert row[14] == AWKWARD
    assert row[15] == [1, "a", None, True, 2.5, [[]], {"k": [False]}]
    assert row[16:] == [[], {"a": 1, "ü k": "v", "n": None, "nested": {"b": [1.0]}}, {}]
    assert type(row[17]) is dict  # plain, not the parser's OrderedDict


def test_nodes_edges_paths_and_points_keep_the_parsers_shapes(store: FalkorDBStore) -> None:
    store.execute(
        "CREATE (:Asset:Table {urn: $a, tags: ['x', 'y'], size: 2.5, live: true})"
        "-[:FLOWS_TO {runs: 1, via: $via}]->(:Asset {urn: $b, n: null})",
        {"a": AWKWARD[5], "b": AWKWARD[6], "via": AWKWARD},
        write=True,
    )
    [row] = both(
        store,
        "MATCH p = (a:Table)-[e]->(b) RETURN a, e, p, [a, b] AS nodes, {edge: e, path: p} AS "
        "inside, point({latitude: 1.5, longitude: -2.25}) AS place, vecf32([1.0, 2.5]) AS vec",
    )
    node, edge, path, nodes, inside, place, vec = row
    assert node == {
        "_labels": ["Asset", "Table"],
        "urn": AWKWARD[5],
        "tags": ["x", "y"],
        "size": 2.5,
        "live": True,
    }
    assert edge == {"_type": "FLOWS_TO", "runs": 1, "via": AWKWARD}
    assert path == [node, edge, nodes[1]] and nodes[1]["urn"] == AWKWARD[6]
    assert inside == {"edge": edge, "path": path}
    assert place == {"latitude": 1.5, "longitude": -2.25} and vec == [1.0, 2.5]


def test_many_rows_and_no_rows(store: FalkorDBStore) -> None:
    rows = both(store, "UNWIND range(1, 2000) AS i RETURN i, toString(i) AS s, i % 2 = 0 AS even")
    assert rows[-1] == [2000, "2000", True] and len(rows) == 2000
    assert both(store, "UNWIND [] AS i RETURN i") == []
    assert store.execute("CREATE (:Asset {urn: 'x'})", write=True).rows == []


def test_an_error_while_the_query_runs_is_a_query_error(store: FalkorDBStore) -> None:
    """Met while running, not in the text: FalkorDB 4.16 answers with the error alone (older
    servers sent it as the reply's last part, which `_run` checks too)."""
    with pytest.raises(QueryError, match=r"rejected the query: Division by zero"):
        store.execute("UNWIND [1, 0] AS x RETURN 1 / x", write=False)


def test_plain_replies_carry_strings_integers_and_nulls_as_sent(store: FalkorDBStore) -> None:
    """A verbose reply (GraphStore.read `plain`) gives the same strings, integers and nulls as
    a compact one, awkward text and the integer range's ends included; no rows, no rows."""
    text = (
        "UNWIND $strings AS s RETURN s, size(s) AS n, null AS nothing, "
        "9223372036854775807 AS top, -9223372036854775807 - 1 AS bottom"
    )
    query = store._encode(text, {"strings": AWKWARD})
    plain = store._run(RO_QUERY_CMD, query, compact=False)
    assert plain.columns == ["s", "n", "nothing", "top", "bottom"]
    assert _typed(plain.rows) == _typed(both(store, text, {"strings": AWKWARD}))
    assert [row[0] for row in plain.rows] == AWKWARD
    assert store._run(RO_QUERY_CMD, "UNWIND [] AS x RETURN x", compact=False).rows == []
