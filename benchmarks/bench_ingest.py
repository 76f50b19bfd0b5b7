"""Embedded ingest and traversal: 1M assets and ~2M FLOWS_TO through the store's batch writer.

Prints nodes/s and relationships/s for the batched writer, the same for a one-row-per-statement
MERGE baseline measured in this run (on a sample), their ratio, traversal medians to depth 20,
and peak memory of this process and of the FalkorDB server.

    python benchmarks/bench_ingest.py                 # the issue's size: 1,000,000 assets
    python benchmarks/bench_ingest.py --assets 100000 # a quicker look
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lineage_shapes as shapes
from small import parse_args

from lineagegraph.graph.statements import statement
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter, _rows
from lineagegraph.settings import GraphSettings


def timed_write(store: GraphStore, items) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    writer = GraphWriter(store)
    start = time.perf_counter()
    n = 0
    for item in items:
        writer.add(item)
        n += 1
    writer.flush()
    return n, time.perf_counter() - start


def one_row_per_statement(store: GraphStore, items) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    n = 0
    for item in items:
        for name, row in _rows(item):
            store.execute(statement(name), {"rows": [row]}, write=True)
        n += 1
    return n, time.perf_counter() - start


def server_peak_rss_mb(data_dir: Path) -> float | None:
    import json

    try:
        pid = json.loads((data_dir / "server.json").read_text())["pid"]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, KeyError):
        return None
    return None


def traversal_ms(store: GraphStore, starts: list[str], direction: str) -> list[float]:
    from lineagegraph import lineage

    way = "downstream" if direction == "down" else "upstream"
    times = []
    for urn in starts:
        t = time.perf_counter()
        lineage.traverse(store, urn, way, depth=20)
        times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=1_000_000)
    parser.add_argument("--baseline", type=int, default=2_000, help="rows for the baseline")
    parser.add_argument("--batch-size", type=int, default=5_000)
    args = parse_args(parser, assets=3_000, baseline=1_000)

    data_dir = Path(tempfile.mkdtemp(prefix="lg-bench-ingest-"))
    try:
        settings = GraphSettings(data_dir=data_dir, batch_size=args.batch_size)
        with open_store(settings) as store:
            store.init_schema()
            n_nodes, t_nodes = timed_write(store, shapes.assets(args.assets))
            n_edges, t_edges = timed_write(store, shapes.flows(args.assets))
            print(
                f"assets:   {n_nodes:>10,} in {t_nodes:6.1f} s = {n_nodes / t_nodes:>8,.0f} nodes/s"
            )
            print(
                f"FLOWS_TO: {n_edges:>10,} in {t_edges:6.1f} s = {n_edges / t_edges:>8,.0f} rels/s"
            )

            # Baseline in the same run and store: one MERGE statement per row.
            base = settings.model_copy(update={"graph_name": "baseline"})
            with open_store(base) as bstore:
                bstore.init_schema()
                sample = list(islice(shapes.assets(args.assets), args.baseline))
                bn, bt = one_row_per_statement(bstore, sample)
                urns = {a.urn for a in sample}
                sample_flows = [
                    f
                    for f in islice(shapes.flows(args.assets), args.baseline * 5)
                    if f.src in urns and f.dst in urns
                ][: args.baseline]
                be, bte = one_row_per_statement(bstore, sample_flows)
            print(
                f"baseline:   one row per statement: {bn / bt:,.0f} nodes/s, {be / bte:,.0f} rels/s"
            )
            print(
                f"ratio:      batched/baseline nodes x{(n_nodes / t_nodes) / (bn / bt):.1f}, "
                f"rels x{(n_edges / t_edges) / (be / bte):.1f}"
            )

            shape = shapes.shape(args.assets)
            try:
                for label, starts, direction in (
                    ("downstream from raw", shape.raw, "down"),
                    ("downstream from chain heads", shape.chain_heads, "down"),
                    ("downstream from hubs", shape.hubs, "down"),
                    ("upstream from reports", shape.reports, "up"),
                    ("upstream from chain tails", shape.chain_tails, "up"),
                ):
                    ms = traversal_ms(store, starts, direction)
                    print(
                        f"traversal:  {label:<28} depth 20: median {statistics.median(ms):6.1f} ms,"
                        f" max {max(ms):6.1f} ms over {len(ms)} starts"
                    )
            except ImportError:
                print("traversal:  lineagegraph.lineage is not available in this build")

            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            server = server_peak_rss_mb(data_dir)
            print(
                f"peak RSS:   this process {rss:,.0f} MB, FalkorDB server {server:,.0f} MB"
                if server
                else f"peak RSS:   this process {rss:,.0f} MB"
            )
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
