"""Helpers for tests on the embedded store (importable from any test: tests/ is on sys.path)."""

from __future__ import annotations

import contextlib

import redis

from lineagegraph.graph.falkordb import FalkorDBStore


def drop_graph(store: FalkorDBStore) -> None:
    """Delete a store's graph and its schema marker, as a user's `GRAPH.DELETE` would: tests
    drop their graphs to keep the shared server's memory and dump small."""
    with contextlib.suppress(redis.ResponseError):  # never written: nothing to delete
        store._graph.delete()
    store._db.connection.delete(store._schema_key)
