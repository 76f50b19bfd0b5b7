"""Evaluating every alert rule over a graph with 10,000 freshness windows (the goal: under 10 s).

Builds, through GraphWriter into a fresh embedded FalkorDB store, `--sources` raw datasets each
written hourly by its own job for `--writes` hours and feeding a chain of `--chain` tables (so
sources x (1 + chain) assets with a learned freshness window). A tenth of the sources stopped
being written a day ago: they and their chains are late, and folding makes one alert per late
source. Then times lineagegraph.questions.alerts.evaluate, and in the same run the one graph
reads the freshness rule cannot do without (its assets' writes, `last_writes`) as the baseline.

    .venv/bin/python benchmarks/bench_alerts.py                       # 10,000 windows
    .venv/bin/python benchmarks/bench_alerts.py --sources 200 --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from small import parse_args

from lineagegraph.alerts_settings import AlertSettings
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Flow, Item, Transformation
from lineagegraph.questions.alerts import HOUR_MS, evaluate, last_writes
from lineagegraph.settings import GraphSettings

NOW = 1_717_000_000_000
LATE_EVERY = 10  # one source in ten stopped a day ago


def build(store: GraphStore, sources: int, chain: int, writes: int) -> int:
    """The graph; returns how many sources are late."""
    writer = GraphWriter(store)
    late = 0
    for s in range(sources):
        stopped = s % LATE_EVERY == 0
        late += stopped
        last = NOW - (24 * HOUR_MS if stopped else HOUR_MS // 2)
        raw = f"s3://raw/source-{s}"
        tables = [f"snowflake://bench/DB.S.T{s}_{c}" for c in range(chain)]
        items: list[Item] = [Asset(raw, "Dataset", "s3", raw.rsplit("/", 1)[1], NOW)]
        items += [Asset(t, "Table", "snowflake", t.rsplit(".", 1)[1], NOW) for t in tables]
        for w in range(writes):
            at = last - (writes - 1 - w) * HOUR_MS
            items.append(Transformation(f"spark://load-{s}", "spark", "load", f"{s}-{w}", at,
                                        writes=(raw,)))  # fmt: skip
            items += [Flow(a, b, at) for a, b in zip([raw, *tables], tables, strict=False)]
        writer.add_all(items)
    writer.flush()
    return late


def timed(repeat: int, work: object) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=2000)
    parser.add_argument("--chain", type=int, default=4)
    parser.add_argument("--writes", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3)
    args = parse_args(parser, sources=20, chain=2, writes=4, repeat=1)
    settings = AlertSettings()
    with (
        tempfile.TemporaryDirectory() as tmp,
        open_store(GraphSettings(data_dir=Path(tmp) / "store")) as store,
    ):
        store.ensure_schema()
        started = time.perf_counter()
        late = build(store, args.sources, args.chain, args.writes)
        windows = args.sources * (1 + args.chain)
        print(f"graph: {windows:,} assets with a freshness window, {late:,} sources late "
              f"({time.perf_counter() - started:.1f} s to build)")  # fmt: skip
        scan, _ = timed(args.repeat, lambda: last_writes(store))
        took, alerts = timed(args.repeat, lambda: evaluate(store, settings, NOW))
        assert isinstance(alerts, list)
        folded = sum(len(a.explains) for a in alerts)
        print(f"evaluate all rules: median {took:.2f} s, {len(alerts):,} alerts "
              f"({folded:,} late assets folded into them)")  # fmt: skip
        print(f"baseline, reading the writes alone: median {scan:.2f} s")
        print(f"ratio: evaluate {took / scan:.1f}x the reads")


if __name__ == "__main__":
    main()
