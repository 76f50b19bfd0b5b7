"""Read commands refuse a store that does not exist or holds nothing, rather than answer from it.

Opening the embedded store creates its data directory, so a mistyped --data-dir would
otherwise read as an empty graph: "no asset matches", or an orphan report of zero rows that
looks like good news. Read commands call `require_existing_store` before opening the store,
and raise `EmptyGraph` when an answer comes back empty because the graph holds nothing.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from lineagegraph.errors import StoreError
from lineagegraph.graph.embedded import AOF_DIR, DB_FILE, SOCKET_FILE
from lineagegraph.graph.store import GraphStore
from lineagegraph.settings import Settings

STORE_FILES = (DB_FILE, AOF_DIR, SOCKET_FILE)
"""Any of these in the data directory: a store was written there (a saved snapshot, an
append-only log, or a server running on it right now)."""
HARVEST_HINT = "run `lineagegraph harvest all` (or harvest s3, snowflake, spark, openlineage)"


NEARBY_LOOKS = 2000
"""How many directories the search for a store nearby may look into (an error path, but one
that must not crawl a home directory)."""


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
            f"{HARVEST_HINT} to create one{_nearby_hint(data_dir)}"
        )
    if not holds_store(data_dir):
        raise StoreError(
            f"no graph store in {shown!r}: the directory holds no store files "
            f"({', '.join(STORE_FILES)}). Give the store's directory with --data-dir, or "
            f"{HARVEST_HINT} to fill this one{_nearby_hint(data_dir)}"
        )


def holds_store(directory: Path) -> bool:
    """Whether an embedded store was written in `directory`."""
    return any((directory / name).exists() for name in STORE_FILES)


def nearby_stores(root: Path, limit: int = NEARBY_LOOKS) -> list[Path]:
    """Stores in `root` and the directories up to two levels below it (`lineagegraph-demo/
    graph`, the default `.lineagegraph`), looking into at most `limit` directories: the store
    a user meant is usually right there, under another name."""
    found: list[Path] = []
    level, looked = [root], 0
    for _ in range(3):
        below: list[Path] = []
        for directory in level:
            if looked >= limit:
                return found
            looked += 1
            if holds_store(directory):
                found.append(directory)
            try:
                with os.scandir(directory) as entries:
                    dirs = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
                below += sorted(dirs)
            except OSError:
                continue
        level = below
    return found


def _nearby_hint(missing: Path) -> str:
    """ "; found a store nearby: ..." with the options that use it, or "" if none is near."""
    cwd = Path.cwd()
    stores = [s for s in nearby_stores(cwd) if s.resolve() != missing.resolve()]
    if not stores:
        return ""
    shown = [os.path.relpath(s, cwd) for s in stores[:3]]
    first, absolute = shlex.quote(shown[0]), shlex.quote(str(stores[0].resolve()))
    return (
        f". Found a store nearby: {', '.join(shown)}; use it with --data-dir {first}, or "
        f"point this shell at it: export LINEAGEGRAPH_GRAPH__DATA_DIR={absolute}"
    )


def require_assets(store: GraphStore, statement: str, what: str, harvest: str) -> None:
    """Raise EmptyGraph when `statement` (a lineage_any_* probe) finds nothing of `what`."""
    if not store.read(statement, {}):
        raise EmptyGraph(
            f"the graph in {store.location} holds no {what} yet: run `lineagegraph harvest "
            f"{harvest}` first (or give the right store with --data-dir or --graph)"
        )
