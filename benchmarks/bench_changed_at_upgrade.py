"""Setting `changed_at` on a store written before it: the Neo4j statements (pages of urns)
against the embedded store's own step (pages of node ids), both on the embedded store.

Builds bench_traversal's lineage-shaped graph (200,000 assets, ~440,000 FLOWS_TO; every edge
stopped and came back once) into a fresh embedded store, takes `changed_at` off every node and
edge, and times:

- the embedded store's step (FalkorDBStore._set_changed_at: 20,000 node ids a statement);
- lineagegraph.graph.upgrade.set_changed_at, what Neo4j's init_schema runs (10,000 nodes a
  statement, in urn order, after the last urn of the page before), here on the embedded store.

Both must set the same values. The ratio says whether the embedded store could use the Neo4j
statements instead of its own (it does not: FalkorDB has no index-ordered LIMIT, so each urn
page sorts what is left). What they cost on Neo4j cannot be measured here (no server).

    .venv/bin/python benchmarks/bench_changed_at_upgrade.py
    .venv/bin/python benchmarks/bench_changed_at_upgrade.py --assets 50000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from small import parse_args

from lineagegraph.graph import upgrade
from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import load, server_cpu_s
from bench_traversal import CHAIN_LENGTH, CHAIN_SHARE, SEEN, build, generate

WITH_HISTORY = (
    "MATCH ()-[e:FLOWS_TO]->() SET e.stopped = [$stop], e.resumed = [$back], e.retired_at = null"
)
FORGET = (
    "MATCH ()-[e:FLOWS_TO]->() SET e.changed_at = null",
    "MATCH (n) SET n.changed_at = null",
)
NODES = "MATCH (a:Asset) RETURN a.urn, a.changed_at"
EDGES = "MATCH (a:Asset)-[e:FLOWS_TO]->(b) RETURN a.urn, b.urn, e.changed_at"


def values(store: FalkorDBStore) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Every asset's and FLOWS_TO's changed_at."""
    nodes = {urn: at for urn, at in store.execute(NODES, write=False).rows}
    edges = {(a, b): at for a, b, at in store.execute(EDGES, write=False).rows}
    return nodes, edges


def timed(store: FalkorDBStore, step: Callable[[], None]) -> tuple[float, float, float]:
    """Wall seconds, server CPU seconds and this process's CPU seconds of `step`, run on a
    store with no changed_at anywhere."""
    for text in FORGET:
        store.execute(text, write=True)
    pid = store._server.server_pid()
    cpu, own, began = server_cpu_s(pid), time.process_time(), time.perf_counter()
    step()
    return time.perf_counter() - began, server_cpu_s(pid) - cpu, time.process_time() - own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=200_000, help="assets in the graph")
    parser.add_argument("--page", type=int, default=upgrade.PAGE, help="nodes per urn page")
    parser.add_argument("--seed", type=int, default=7)
    args = parse_args(parser, assets=1_000, page=100)
    smallest = int(CHAIN_LENGTH / CHAIN_SHARE)
    if args.assets < smallest:
        parser.error(f"--assets must be at least {smallest:,} (bench_traversal's graph)")
    print(load())
    with tempfile.TemporaryDirectory(prefix="bench-changed-at-") as tmp:
        settings = GraphSettings(data_dir=Path(tmp), graph_name="upgrade")
        store = open_store(settings)
        assert isinstance(store, FalkorDBStore)
        with store:
            shape, items = generate(args.assets, 4, args.seed)
            build(store, items)
            store.execute(WITH_HISTORY, {"stop": SEEN + 1_000, "back": SEEN + 2_000}, write=True)
            print(f"graph: {args.assets:,} assets, {shape.flows:,} FLOWS_TO")
            ids = timed(store, store._set_changed_at)
            expected = values(store)
            urns = timed(store, lambda: upgrade.set_changed_at(store, upgrade.Marker(), args.page))
            same = values(store) == expected
            assert SEEN + 2_000 in expected[0].values(), "the edges' history raised their sources"
    for name, (wall, server, client) in (
        ("embedded step (node ids)", ids),
        (f"Neo4j statements (urn pages of {args.page:,})", urns),
    ):
        print(f"{name}: {wall:.1f} s, server CPU {server:.1f} s, client CPU {client:.2f} s")
    print(f"the same changed_at on every asset and FLOWS_TO: {same}")
    print(
        f"ratio: urn pages {urns[1] / max(ids[1], 0.01):.1f}x the id pages' server CPU "
        f"({urns[0] / ids[0]:.1f}x wall)"
    )
    print(load())
    if not same:
        raise SystemExit("the two ways set different values")


if __name__ == "__main__":
    main()
