"""Spark listener overhead: the same small job with and without the listener, in one run.

Runs N small actions (read a tiny parquet, project, overwrite a parquet) without the listener
and N with it (writing to a fresh embedded graph), in alternating blocks (without, with, with,
without, ...) so that a change in the machine's load falls on both sides alike, and prints
per-action medians and p90s:

* action: the wall time of the write call itself, what the job sees; the listener's callback
  and worker run while the next action does, as in a real job;
* action + bus: the write plus Spark's listener bus drained, so the callback's plan capture is
  inside the measurement (an upper bound: a real job does not wait for the bus);
* callback: the time Spark's listener bus spends in the listener's onSuccess per action.

Between blocks the listener is unregistered; a block without it must record nothing (checked).
Progress goes to stderr as the blocks finish.

The goal: median added wall time per action under 20 ms over 200 actions.

    python benchmarks/bench_spark.py            # 200 actions each way (+ 50 each way with bus)
    python benchmarks/bench_spark.py --actions 40 --bus-actions 20
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from small import parse_args

from lineagegraph.settings import GraphSettings, Settings, SparkSettings
from lineagegraph.spark import SparkLineage, install
from lineagegraph.spark.listener import registered_proxy

BLOCK = 10  # actions per block


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def action(spark: Any, src: str, out: Path) -> None:
    df = spark.read.parquet(src).selectExpr("id", "name", "v * 2 AS w")
    df.write.mode("overwrite").parquet(str(out))


class Bench:
    def __init__(self, spark: Any, src: str, root: Path, handle: SparkLineage) -> None:
        self.spark, self.src, self.root, self.handle = spark, src, root, handle
        self.bus = spark.sparkContext._jsc.sc().listenerBus()
        self.manager = spark._jsparkSession.listenerManager()
        self.callbacks: list[float] = []
        on_success = handle.listener.onSuccess

        def timed(*args: Any) -> None:  # Py4J looks the method up on the object at each call
            start = time.perf_counter()
            on_success(*args)
            self.callbacks.append((time.perf_counter() - start) * 1000)

        handle.listener.onSuccess = timed  # type: ignore[method-assign]
        self._unregister()
        self.count = 0

    def _unregister(self) -> None:
        self.manager.unregister(registered_proxy(self.manager, self.handle.listener))
        assert registered_proxy(self.manager, self.handle.listener) is None

    def block(self, listener: bool, n: int, drain: bool) -> list[float]:
        """n actions, per-action milliseconds; the bus is drained after the block (untimed)."""
        if listener:
            self.manager.register(self.handle.listener)
        before = self.handle.counts.get("actions_recorded", 0)
        times = []
        for _ in range(n):
            self.count += 1
            start = time.perf_counter()
            action(self.spark, self.src, self.root / f"o{self.count % 10}")
            if drain:
                self.bus.waitUntilEmpty(60_000)
            times.append((time.perf_counter() - start) * 1000)
        self.bus.waitUntilEmpty(60_000)
        if listener:
            self._unregister()
        self.handle.flush(120)
        recorded = self.handle.counts.get("actions_recorded", 0) - before
        expected = n if listener else 0
        assert recorded == expected, f"{recorded} actions recorded, {expected} expected"
        return times

    def sides(self, n: int, drain: bool, label: str) -> tuple[list[float], list[float]]:
        """n actions each way in blocks of BLOCK, alternating which side goes first."""
        without: list[float] = []
        with_: list[float] = []
        for index in range((n + BLOCK - 1) // BLOCK):
            size = min(BLOCK, n - index * BLOCK)
            order = (False, True) if index % 2 == 0 else (True, False)
            for listener in order:
                (with_ if listener else without).extend(self.block(listener, size, drain))
            progress(f"{label}: {len(without)}/{n} actions each way, load {os.getloadavg()[0]:.1f}")
        return without, with_


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def interval(base: list[float], with_: list[float], rounds: int = 2000) -> tuple[float, float]:
    """A 90 % bootstrap interval of the added median: how far the noise of a shared machine
    lets the figure be trusted."""
    rng = random.Random(1)
    gaps = sorted(
        statistics.median(rng.choices(with_, k=len(with_)))
        - statistics.median(rng.choices(base, k=len(base)))
        for _ in range(rounds)
    )
    return gaps[rounds // 20], gaps[rounds - rounds // 20 - 1]


def compare(label: str, base: list[float], with_: list[float]) -> tuple[str, float]:
    added = statistics.median(with_) - statistics.median(base)
    low, high = interval(base, with_)
    return (
        f"{label:>13}: median {statistics.median(base):7.1f} ms without, "
        f"{statistics.median(with_):7.1f} ms with -> added {added:+6.1f} ms "
        f"(90% interval {low:+.1f} .. {high:+.1f}) "
        f"(ratio {statistics.median(with_) / statistics.median(base):.2f}); "
        f"p90 {p90(base):.1f} / {p90(with_):.1f} ms; mean added "
        f"{statistics.fmean(with_) - statistics.fmean(base):+.1f} ms",
        added,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=200, help="actions each way (>= 10)")
    parser.add_argument("--bus-actions", type=int, default=50, help="each way, bus drained")
    parser.add_argument("--warm-up", type=int, default=15, help="untimed actions each way first")
    args = parse_args(parser, actions=10, bus_actions=4, warm_up=2)
    with tempfile.TemporaryDirectory(prefix="bench-spark-", ignore_cleanup_errors=True) as tmp:
        run_benchmark(args, Path(tmp))


def run_benchmark(args: argparse.Namespace, root: Path) -> None:
    from pyspark.sql import SparkSession

    load_start = os.getloadavg()
    progress("starting a local Spark session ...")
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("bench-spark")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    src = str(root / "src")
    spark.createDataFrame(
        [(i, f"n{i}", float(i)) for i in range(100)], ["id", "name", "v"]
    ).write.parquet(src)
    settings = Settings(
        graph=GraphSettings(data_dir=root / "graph"),
        spark=SparkSettings(spool_dir=root / "spool", queue_size=10_000),
    )
    handle = install(spark, settings=settings)
    bench = Bench(spark, src, root / "out", handle)
    for listener in (True, False):  # warm-up: JIT, caches, the graph store, both sides
        bench.block(listener, args.warm_up, drain=True)
    bench.callbacks.clear()
    progress(f"warm-up done ({2 * args.warm_up} actions)")

    base, with_listener = bench.sides(args.actions, drain=False, label="action")
    callbacks = list(bench.callbacks)
    base_bus, with_bus = bench.sides(args.bus_actions, drain=True, label="action + bus")
    counts = handle.counts
    handle.stop()
    spark.stop()

    print(
        f"actions each way: {args.actions} (action), {args.bus_actions} (action + bus), "
        f"in alternating blocks of {BLOCK}, after {2 * args.warm_up} warm-up actions; "
        f"Spark {spark.version}, local[1]"
    )
    line, goal = compare("action", base, with_listener)
    print(line)
    print(compare("action + bus", base_bus, with_bus)[0])
    print(
        f"     callback: median {statistics.median(callbacks):.1f} ms, p90 {p90(callbacks):.1f} "
        f"ms on Spark's listener bus per action ({len(callbacks)} callbacks)"
    )
    print(f"listener counts: {counts}")
    print(
        f"load average: {load_start[0]:.1f} at start, {os.getloadavg()[0]:.1f} at the end "
        f"({os.cpu_count()} CPUs)"
    )
    high = interval(base, with_listener)[1]
    verdict = "NOT met" if goal >= 20 else "met" if high < 20 else f"met; interval up to {high:.0f}"
    print(f"goal (median added < 20 ms per action): {verdict}")


if __name__ == "__main__":
    main()
