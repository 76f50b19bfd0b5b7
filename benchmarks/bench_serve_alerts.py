"""Lineage reads from `lineagegraph serve` while it evaluates alerts, against the same reads with
alerts off, in this run.

Issue 23's goal: serve's lineage reads keep p95 under 50 ms while it evaluates the alert rules.
The graph is bench_alerts' (`--sources` raw datasets each written hourly by its own job and
feeding a chain of `--chain` tables: sources x (1 + chain) freshness windows; a tenth of the
sources late), built once into an embedded store. `lineagegraph serve` runs on it twice: with
[alerts] interval_seconds 0 (alerts off, the baseline), then every `--interval` seconds (each
evaluation reads every window; the rules take the read lock one statement at a time). Each
time one client sends `--requests` `GET /api/v1/lineage?nodeId=dataset:s3://raw:source-N&depth=20`
(keep-alive, one at a time, after 10 to warm): p50, p95 and max, how many evaluations ran
meanwhile (/metrics), and the CPU seconds of serve and the store. The ratio is p95 with alerts
over p95 without. Load average is printed beside each: the machine is shared.

    python benchmarks/bench_serve_alerts.py                     # 2,000 sources: 10,000 windows
    python benchmarks/bench_serve_alerts.py --sources 500 --requests 300
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import requests
from bench_alerts import build
from bench_serve import READ_GOAL_MS, TOKEN, cpu_seconds, free_port, http_reads, p95, start_server
from small import parse_args, server_pid

from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=2000)
    parser.add_argument("--chain", type=int, default=4)
    parser.add_argument("--writes", type=int, default=6)
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between evaluations")
    parser.add_argument("--requests", type=int, default=500)
    args = parse_args(parser, sources=20, chain=2, writes=2, interval=1.0, requests=20)
    with tempfile.TemporaryDirectory(prefix="bench-serve-alerts-", ignore_cleanup_errors=True) as t:
        data_dir = Path(t) / "store"
        started = time.perf_counter()
        with open_store(GraphSettings(data_dir=data_dir)) as store:
            store.ensure_schema()
            late = build(store, args.sources, args.chain, args.writes)
        print(
            f"graph: {args.sources * (1 + args.chain):,} assets with a freshness window, "
            f"{late:,} sources late ({time.perf_counter() - started:.1f} s to build)"
        )
        rnd = random.Random(3)
        nodes = [f"dataset:s3://raw:source-{rnd.randrange(args.sources)}" for _ in range(500)]
        picks = [nodes[i % len(nodes)] for i in range(args.requests)]
        base = reads(data_dir, picks, 0)
        loaded = reads(data_dir, picks, args.interval)
    print(f"ratio: p95 with alerts {loaded / base:.2f}x without; goal p95 < {READ_GOAL_MS} ms "
          f"while evaluating: {'met' if loaded < READ_GOAL_MS else 'NOT met'}")  # fmt: skip


def reads(data_dir: Path, picks: list[str], interval: float) -> float:
    """Time the reads on a serve evaluating alerts every `interval` seconds (0: never); prints
    the figures, returns p95 in ms."""
    port = free_port()
    env = {"LINEAGEGRAPH_ALERTS__INTERVAL_SECONDS": str(interval)}
    process = start_server(data_dir, port, env)
    try:
        store = server_pid(data_dir)
        took = wait_evaluations(port) if interval else 0.0  # reads overlap the next ones
        load = os.getloadavg()[0]
        before = (cpu_seconds(process.pid), cpu_seconds(store), evaluations(port))
        ms, sizes = http_reads(port, picks)
        after = (cpu_seconds(process.pid), cpu_seconds(store), evaluations(port))
        load_after = os.getloadavg()[0]
    finally:
        process.terminate()
        process.wait(timeout=120)
    label = f"alerts every {interval:g} s" if interval else "alerts off"
    print(
        f"{label}: GET /api/v1/lineage depth 20 ({statistics.median(sizes):.0f} nodes): "
        f"p50 {statistics.median(ms):.1f} ms, p95 {p95(ms):.1f} ms, max {max(ms):.1f} ms over "
        f"{len(ms)} requests in {sum(ms) / 1000:.1f} s; {after[2] - before[2]} evaluations "
        f"ended meanwhile (the first took {took:.1f} s); CPU serve "
        f"{after[0] - before[0]:.2f} s + store {after[1] - before[1]:.2f} s; "
        f"load {load:.1f} -> {load_after:.1f}"
    )
    return p95(ms)


def evaluations(port: int) -> int:
    """The evaluations serve has run (/metrics)."""
    text = requests.get(
        f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
    ).text
    [line] = [x for x in text.splitlines() if x.startswith("lineagegraph_alert_evaluations_total")]
    return int(float(line.split()[-1]))


def wait_evaluations(port: int) -> float:
    """Seconds until serve's first evaluation ends (about how long one takes)."""
    start = time.monotonic()
    while evaluations(port) < 1 and time.monotonic() < start + 600:
        time.sleep(0.1)
    return time.monotonic() - start


if __name__ == "__main__":
    main()
