"""Read commands refuse a store that does not exist or holds nothing, rather than answer from it.

Opening the embedded store creates its data directory, so a mistyped --data-dir would
otherwise read as an empty graph: "no asset matches", or an orphan report of zero rows that
looks like good news. Read commands call `require_existing_store` before opening the store,
and raise `EmptyGraph` when an answer comes back empty because the graph holds nothing.
"""

from __future__ import annotations

from lineagegraph.errors import StoreError
from lineagegraph.graph.embedded import AOF_DIR, DB_FILE, SOCKET_FILE
from lineagegraph.graph.store import GraphStore
from lineagegraph.settings import Settings

STORE_FILES = (DB_FILE, AOF_DIR, SOCKET_FILE)
"""Any of these in the data directory: a store was written there (a saved snapshot, an
append-only log, or a server running on it right now)."""
HARVEST_HINT = "run `lineagegraph harvest all` (or harvest s3, snowflake, spark, openlineage)"


class EmptyGraph(StoreError):
    """The store exists but holds nothing to answer from (exit code 3, like a missing store)."""


def require_existing_store(settings: Settings) -> None:
    """For the embedded store: fail, creating nothing, unless its data directory holds a store.
    A Neo4j server is checked by connecting to it."""
    if settings.graph.uri:
        return
    data_dir = settings.graph.data_dir.expanduser()
    shown = str(data_dir.resolve())
    if not data_dir.is_dir():
        problem = "does not exist" if not data_dir.exists() else "is not a directory"
        raise StoreError(
            f"no graph store at {shown!r}: the directory {problem}. Give the store's directory "
            f"with --data-dir (or [graph] data_dir, LINEAGEGRAPH_GRAPH__DATA_DIR), or "
            f"{HARVEST_HINT} to create one"
        )
    if not any((data_dir / name).exists() for name in STORE_FILES):
        raise StoreError(
            f"no graph store in {shown!r}: the directory holds no store files "
            f"({', '.join(STORE_FILES)}). Give the store's directory with --data-dir, or "
            f"{HARVEST_HINT} to fill this one"
        )


def require_assets(store: GraphStore, statement: str, what: str, harvest: str) -> None:
    """Raise EmptyGraph when `statement` (a lineage_any_* probe) finds nothing of `what`."""
    if not store.read(statement, {}):
        raise EmptyGraph(
            f"the graph in {store.location} holds no {what} yet: run `lineagegraph harvest "
            f"{harvest}` first (or give the right store with --data-dir or --graph)"
        )
