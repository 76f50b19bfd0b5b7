"""Spark listener overhead: the same small job with and without the listener, in one run.

Runs N small actions (read a tiny parquet, project, overwrite a parquet) without the listener,
then N with it (writing to a fresh embedded graph), and prints per-action medians and p90s:

* action: the wall time of the write call itself (what the job sees);
* action + bus: the write plus Spark's listener bus drained, so the callback's plan capture is
  inside the measurement (an upper bound: a real job does not wait for the bus).

The goal: median added wall time per action under 20 ms over 200 actions.

    python benchmarks/bench_spark.py            # 200 actions each way
    python benchmarks/bench_spark.py --actions 50
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from lineagegraph.settings import GraphSettings, Settings, SparkSettings
from lineagegraph.spark import install


def run_actions(spark: Any, src: str, out: Path, n: int, drain: bool) -> list[float]:
    bus = spark.sparkContext._jsc.sc().listenerBus()
    times = []
    for i in range(n):
        start = time.perf_counter()
        df = spark.read.parquet(src).selectExpr("id", "name", "v * 2 AS w")
        df.write.mode("overwrite").parquet(str(out / f"o{i % 10}"))
        if drain:
            bus.waitUntilEmpty(60_000)
        times.append((time.perf_counter() - start) * 1000)
    return times


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=200)
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    root = Path(tempfile.mkdtemp(prefix="bench-spark-"))
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
    run_actions(spark, src, root / "warm", 30, drain=True)  # JIT and caches warm for both sides

    base = run_actions(spark, src, root / "base", args.actions, drain=False)
    base_bus = run_actions(spark, src, root / "base", args.actions, drain=True)
    settings = Settings(
        graph=GraphSettings(data_dir=root / "graph"),
        spark=SparkSettings(spool_dir=root / "spool", queue_size=10_000),
    )
    handle = install(spark, settings=settings)
    handle.flush()
    with_listener = run_actions(spark, src, root / "with", args.actions, drain=False)
    with_bus = run_actions(spark, src, root / "with", args.actions, drain=True)
    start = time.perf_counter()
    drained = handle.flush(120)
    drain_s = time.perf_counter() - start
    counts = handle.counts
    handle.stop()
    spark.stop()

    print(f"actions per side: {args.actions} (after 30 warm-up actions), Spark {spark.version}")
    rows = [("action", base, with_listener), ("action + bus", base_bus, with_bus)]
    for label, b, w in rows:
        added = statistics.median(w) - statistics.median(b)
        print(
            f"{label:>13}: median {statistics.median(b):7.1f} ms without, "
            f"{statistics.median(w):7.1f} ms with -> added {added:+6.1f} ms "
            f"(ratio {statistics.median(w) / statistics.median(b):.2f}); "
            f"p90 {p90(b):.1f} / {p90(w):.1f} ms"
        )
    print(f"worker backlog after the last action: drained={drained} in {drain_s:.2f} s")
    print(f"listener counts: {counts}")
    goal = statistics.median(with_listener) - statistics.median(base)
    print(f"goal (median added < 20 ms per action): {'met' if goal < 20 else 'NOT met'}")


if __name__ == "__main__":
    main()
