"""The graph store: its interface (base.py) and the function that picks a backend.

Backends import base.py, and only this module imports the backends: no import cycle.
"""

from __future__ import annotations

from lineagegraph.graph.base import GraphStore, Result, chunks, distinct_rounds
from lineagegraph.graph.settings import GraphSettings

__all__ = ["GraphStore", "Result", "chunks", "distinct_rounds", "open_store"]


def open_store(settings: GraphSettings) -> GraphStore:
    """Neo4j when a URI is set, else the embedded FalkorDB store under data_dir."""
    if settings.uri:
        from lineagegraph.graph.neo4j import Neo4jStore

        return Neo4jStore(settings)
    from lineagegraph.graph.falkordb import FalkorDBStore

    return FalkorDBStore(settings)
