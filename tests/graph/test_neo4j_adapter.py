"""The Neo4j adapter's plumbing over a real Bolt connection, without Docker.

FalkorDB's experimental Bolt listener speaks enough of the protocol for the official driver to
connect, run managed transactions and decode nodes, relationships and paths. It is not Neo4j
(it ignores access modes, every error is "unknown error"), so this only proves the adapter's
plumbing with tiny data; the behavioural suite runs on real Neo4j when Docker is available.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from graphs import free_port_below_32768

from lineagegraph.errors import QueryError, StoreError
from lineagegraph.graph.neo4j import Neo4jStore
from lineagegraph.settings import GraphSettings


def test_adapter_writes_reads_and_decodes_over_bolt(bolt_uri: str, tmp_path: Path) -> None:
    store = Neo4jStore(GraphSettings(uri=bolt_uri))
    try:
        store.execute(
            "CREATE (:Asset:Table {urn: $a})-[:FLOWS_TO {runs: 2}]->(:Asset {urn: $b})",
            {"a": "snowflake://acme/D.S.A", "b": "snowflake://acme/D.S.B"},
            write=True,
        )
        result = store.execute(
            "MATCH p = (a:Table {urn: $a})-[e:FLOWS_TO]->(b) RETURN a, e, p, b.urn AS b",
            {"a": "snowflake://acme/D.S.A"},
            write=False,
        )
        assert result.columns == ["a", "e", "p", "b"]
        a, e, p, b = result.rows[0]
        assert a == {"_labels": ["Asset", "Table"], "urn": "snowflake://acme/D.S.A"}
        assert e == {"_type": "FLOWS_TO", "runs": 2}
        assert [x.get("urn", x.get("_type")) for x in p] == [
            "snowflake://acme/D.S.A",
            "FLOWS_TO",
            "snowflake://acme/D.S.B",
        ]
        assert b == "snowflake://acme/D.S.B"
        with pytest.raises(QueryError, match="Neo4j"):
            store.execute("MATCH (n RETURN n", write=False)
    finally:
        store.close()


def test_nothing_listening_is_a_store_error() -> None:
    port = free_port_below_32768()
    with pytest.raises(StoreError, match=f"cannot reach Neo4j at bolt://127.0.0.1:{port}"):
        Neo4jStore(GraphSettings(uri=f"bolt://127.0.0.1:{port}"))
