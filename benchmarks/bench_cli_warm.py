"""`lineagegraph upstream` from the CLI: cold (no server) against warm (`lineagegraph serve` up).

Issue 13: on a large embedded store every CLI command first loaded the graph into a server of
its own. With `serve` running on the same data directory the CLI joins serve's embedded server,
where the graph is already loaded, so what is left is Python starting and the question itself.

Builds the layered lineage graph of bench_traversal.py (--assets of them) in a fresh embedded
store, then times, each in a process of its own as a user runs it:

1. cold: `lineagegraph upstream URN` with no server running (it starts one, loads the graph,
   answers, and stops it as the last user);
2. warm, serve running: the same command beside a `lineagegraph serve` process;
3. warm, a holder: beside a plain process that keeps the store open (this benchmark itself);
4. the floor: `python -c "import lineagegraph.cli"`, the start-up every command pays.

All three answers must be the same. Prints medians of --repeat runs and the ratio cold/warm.

    .venv/bin/python benchmarks/bench_cli_warm.py --assets 1000000   # the issue's size
    .venv/bin/python benchmarks/bench_cli_warm.py --assets 200000 --repeat 3
    .venv/bin/python benchmarks/bench_cli_warm.py --assets 1000000 --store /tmp/g1m  # kept
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_serve import free_port, start_server
from bench_traversal import build, generate, urn_of
from small import parse_args

from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings

SRC = Path(__file__).resolve().parents[1] / "src"
LAYERS = 5


def timed(argv: list[str], data_dir: Path) -> tuple[float, str]:
    """Seconds of wall clock for one process, and what it printed."""
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "LINEAGEGRAPH_GRAPH__DATA_DIR": str(data_dir)}
    began = time.perf_counter()
    result = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {result.stderr[-2000:]}")
    return seconds, result.stdout


def median_run(argv: list[str], data_dir: Path, repeat: int) -> tuple[float, str]:
    runs = [timed(argv, data_dir) for _ in range(repeat)]
    assert len({out for _, out in runs}) == 1, "the same question gave different answers"
    return statistics.median(s for s, _ in runs), runs[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=200_000, help="assets in the graph")
    parser.add_argument("--depth", type=int, default=5, help="hops the question follows")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, median reported")
    parser.add_argument(
        "--store",
        type=Path,
        help="keep the graph in this directory, and reuse it when it already holds one "
        "(built by this script; --assets is then what it was built with)",
    )
    args = parse_args(parser, assets=2_000, repeat=1)
    with tempfile.TemporaryDirectory(prefix="bench-cli-warm-") as tmp:
        data_dir = args.store or Path(tmp) / "store"
        if not (data_dir / "appendonlydir").exists():
            shape, items = generate(args.assets, LAYERS, seed=13)
            began = time.perf_counter()
            with open_store(GraphSettings(data_dir=data_dir)) as store:
                build(store, items)
            print(
                f"graph: {args.assets:,} assets, {shape.flows:,} flows, built in "
                f"{time.perf_counter() - began:.0f} s"
            )
        print(f"store: {data_dir} ({args.assets:,} assets)")
        # The first asset of the last layer: every graph generate() builds has it.
        ask = [
            "-m",
            "lineagegraph.cli",
            "upstream",
            urn_of("reports", 0),
            "--depth",
            str(args.depth),
            "--format",
            "json",
        ]
        floor, _ = median_run(["-c", "import lineagegraph.cli"], data_dir, args.repeat)
        cold, answer = median_run(ask, data_dir, args.repeat)
        serve = start_server(data_dir, free_port())
        try:
            warm, served_answer = median_run(ask, data_dir, args.repeat)
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=600)
        with open_store(GraphSettings(data_dir=data_dir)):
            held, held_answer = median_run(ask, data_dir, args.repeat)
        assert answer == served_answer == held_answer, "warm and cold answers differ"
    print(f"upstream, depth {args.depth}, median of {args.repeat} (one process each):")
    print(f"  cold (no server):          median {cold:.2f} s")
    print(f"  warm, serve running:       median {warm:.2f} s")
    print(f"  warm, a holder process:    median {held:.2f} s")
    print(f"  python + imports alone:    median {floor:.2f} s")
    print(f"ratio: cold {cold / warm:.1f}x warm (serve); warm is {floor / warm:.0%} start-up")
    print(f"load: {os.getloadavg()[0]:.2f} (1-min average, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
