"""Embedded ingest and traversal: 1M assets and ~2M FLOWS_TO through the store's batch writer.

Ingests the same graph into fresh stores with durability on (the append-only file fsynced
before every reply, as users get it) and off (no append-only file: a private switch of this
benchmark only), alternating the order over rounds, and prints both rates, their ratio and the
load average, the server's CPU seconds (a figure the machine's load hardly moves), and how
long each close took (with durability on, the last user compacts the grown append-only file
before stopping the server). Then, on the last durable store (reopened: it survived its stop),
a one-row-per-statement MERGE baseline (on a sample) with its ratio, traversal medians to depth
20, and peak memory of this process and of the FalkorDB server.

    python benchmarks/bench_ingest.py                 # the issue's size: 1,000,000 assets
    python benchmarks/bench_ingest.py --assets 100000 --rounds 2 --modes always,everysec,off
"""

from __future__ import annotations

import argparse
import os
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

from lineagegraph.graph.falkordb import FalkorDBStore
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


def server_peak_rss_mb(store: GraphStore) -> float | None:
    try:
        pid = store._server.server_pid()  # type: ignore[attr-defined]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, AttributeError):
        return None
    return None


def ingest(
    settings: GraphSettings, assets: int, appendfsync: str | None
) -> tuple[float, float, float, float]:
    """Nodes/s and relationships/s into a fresh store with the given AOF policy, the server's
    CPU seconds for them (what the other processes of a loaded machine hardly change), and the
    seconds its close took (the last user compacts a grown append-only file, then stops)."""
    store = FalkorDBStore(settings, appendfsync=appendfsync)
    with store:
        n_nodes, t_nodes = timed_write(store, shapes.assets(assets))
        n_edges, t_edges = timed_write(store, shapes.flows(assets))
        cpu = server_cpu_s(store._server.server_pid())
        closing = time.perf_counter()
    return n_nodes / t_nodes, n_edges / t_edges, cpu, time.perf_counter() - closing


def server_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def disk_mb(data_dir: Path) -> float:
    return sum(f.stat().st_size for f in data_dir.rglob("*") if f.is_file()) / 2**20


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def traversal_ms(store: GraphStore, starts: list[str], direction: str) -> list[float]:
    from lineagegraph.questions import lineage

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
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every mode")
    parser.add_argument(
        "--modes", default="always,off", help="AOF fsync policies to compare; off = no AOF"
    )
    args = parse_args(parser, assets=3_000, baseline=1_000)
    modes = [m.strip() for m in args.modes.split(",")]

    root = Path(tempfile.mkdtemp(prefix="lg-bench-ingest-"))
    try:
        rates: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
        kept: Path | None = None
        for r in range(args.rounds):
            for mode in modes if r % 2 == 0 else modes[::-1]:  # alternate who goes first
                data_dir = root / f"{mode}-{r}"
                settings = GraphSettings(data_dir=data_dir, batch_size=args.batch_size)
                nodes, rels, cpu, close_s = ingest(
                    settings, args.assets, None if mode == "off" else mode
                )
                rates[mode].append((nodes, rels))
                print(
                    f"round {r + 1} {mode:<8} {nodes:>8,.0f} nodes/s {rels:>8,.0f} rels/s  "
                    f"server CPU {cpu:5.1f} s, close {close_s:5.1f} s, "
                    f"{disk_mb(data_dir):,.0f} MB on disk  ({load()})",
                    flush=True,
                )
                if mode != "always":
                    shutil.rmtree(data_dir)
                    continue
                if kept:
                    shutil.rmtree(kept)
                kept = data_dir
        means = {
            m: (statistics.mean(n for n, _ in v), statistics.mean(e for _, e in v))
            for m, v in rates.items()
        }
        for mode, (nodes, rels) in means.items():
            line = f"{mode:<8} mean {nodes:>8,.0f} nodes/s {rels:>8,.0f} rels/s"
            if "off" in means and mode != "off":
                off_n, off_e = means["off"]
                line += f"  = {nodes / off_n:.0%} / {rels / off_e:.0%} of off"
            print(line)
        print(f"{args.assets:,} assets per run; {load()}")
        if kept is None:
            return
        durable_nodes, durable_rels = means["always"]

        settings = GraphSettings(data_dir=kept, batch_size=args.batch_size)
        with open_store(settings) as store:
            n = store.execute("MATCH (n:Asset) RETURN count(n)", write=False).rows[0][0]
            print(f"reopened:   the last durable store holds {n:,} assets")

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
                f"ratio:      batched/baseline nodes x{durable_nodes / (bn / bt):.1f}, "
                f"rels x{durable_rels / (be / bte):.1f}"
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
                print("traversal:  lineagegraph.questions.lineage is not available in this build")

            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            server = server_peak_rss_mb(store)
            print(
                f"peak RSS:   this process {rss:,.0f} MB, FalkorDB server {server:,.0f} MB"
                if server
                else f"peak RSS:   this process {rss:,.0f} MB"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
