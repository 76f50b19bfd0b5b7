"""Fixtures of the graph tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from graphs import bolt_server, drop_graph

from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings


@pytest.fixture()
def falkordb(embedded_dir: Path) -> Iterator[FalkorDBStore]:
    """A graph of its own on the session's embedded server, dropped afterwards."""
    store = open_store(GraphSettings(data_dir=embedded_dir, graph_name=f"t_{uuid.uuid4().hex}"))
    assert isinstance(store, FalkorDBStore)
    try:
        yield store
    finally:
        drop_graph(store)
        store.close()


@pytest.fixture(scope="module")
def bolt_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """FalkorDB's Bolt listener, for the Neo4j adapter's plumbing without Docker."""
    with bolt_server(tmp_path_factory.mktemp("bolt")) as uri:
        yield uri
