"""Snowflake harvest throughput: 100,000 ACCESS_HISTORY rows (about 10 lineage pairs each) into
the embedded graph, goal under 60 s with peak RSS under 500 MB.

Two measurements, printed separately, because fakesnow cannot serve 100k rows in reasonable time:

1. The row-processing and graph-writing path (`write_windows`: parse the VARIANT JSON, build
   urns, reduce each window, write with the GraphWriter) fed from an in-process generator of
   rows shaped exactly like the cursor's, in `fetch_size` windows. Baselines in the same
   process: the conversion alone (no graph), and writing the first rows unreduced.
2. The fetch: the harvester's ACCESS_HISTORY query through the real connector from fakesnow's
   HTTP server, on a smaller row count (--fetch-rows), in rows/s.

Run: .venv/bin/python benchmarks/bench_snowflake.py [--rows 100000] [--fetch-rows 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from small import parse_args

from lineagegraph.graph.store import open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.snowflake import queries
from lineagegraph.harvest.snowflake.access_history import RowConverter, SoftDelete, parse_row
from lineagegraph.harvest.snowflake.harvester import SnowflakeReport, write_windows
from lineagegraph.harvest.snowflake.stages import StageResolver
from lineagegraph.identity import FoldRules
from lineagegraph.pipeline import harvest_run
from lineagegraph.settings import GraphSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import server_peak_rss_mb

ACCOUNT = "bench-acct"
T0 = 1_750_000_000_000
TABLES = 2_000
JOBS = 4_000
STAGE = "RAW.LAND.FEEDS"


def _table(i: int) -> str:
    return f"DB{i % 4}.SCHEMA_{i % 20}.TABLE_{i}"


def _job(rng: random.Random, j: int) -> tuple[str, str, str, str]:
    """One job's ACCESS_HISTORY JSON (direct, base, modified) and query text: a job always
    touches the same objects, as a scheduled query does."""
    if j % 100 == 0:  # a COPY from an external stage
        target = _table(rng.randrange(TABLES))
        direct = [
            {
                "objectDomain": "Stage",
                "objectName": STAGE,
                "objectId": 1,
                "stageKind": "External Named",
            }
        ]
        modified = [
            {
                "objectDomain": "Table",
                "objectName": target,
                "objectId": 2,
                "columns": [{"columnId": k, "columnName": f"C{k}"} for k in range(3)],
            }
        ]
        text = f"COPY INTO {target} FROM @{STAGE}/feed_{j}/dt=2025-06-01/ PATTERN='.*'"
        return json.dumps(direct), json.dumps(direct), json.dumps(modified), text
    sources = [_table(rng.randrange(TABLES)) for _ in range(rng.choice((2, 3)))]
    target = _table(rng.randrange(TABLES))
    direct = [
        {
            "objectDomain": "Table",
            "objectName": s,
            "objectId": 10 + n,
            "columns": [{"columnId": k, "columnName": f"C{k}"} for k in range(4)],
        }
        for n, s in enumerate(sources)
    ]
    columns = []
    for k in range(3):
        feeders = [(s, f"C{rng.randrange(4)}") for s in rng.sample(sources, min(len(sources), 2))]
        if rng.random() < 0.5:
            feeders.append((sources[-1], f"C{(k + 1) % 4}"))
        src = [
            {"columnName": c, "objectDomain": "Table", "objectId": 1, "objectName": s}
            for s, c in dict.fromkeys(feeders)
        ]
        columns.append(
            {"columnId": 100 + k, "columnName": f"C{k}", "directSources": src, "baseSources": src}
        )
    modified = [{"objectDomain": "Table", "objectName": target, "objectId": 3, "columns": columns}]
    read_only = j % 20 == 1
    return (json.dumps(direct), json.dumps(direct), "[]" if read_only else json.dumps(modified), "")


def generate(count: int, seed: int = 7) -> Iterator[tuple[Any, ...]]:
    """Cursor rows of queries.ACCESS_HISTORY_SINCE, oldest first, 6 s apart (~7 days / 100k)."""
    rng = random.Random(seed)
    jobs = [_job(rng, j) for j in range(JOBS)]
    for i in range(count):
        j = rng.randrange(JOBS)
        direct, base, modified, text = jobs[j]
        ddl = None
        if i % 1000 == 999:  # now and then a dropped scratch table
            ddl = json.dumps(
                {
                    "objectDomain": "Table",
                    "objectName": f"SCRATCH.S.T{i}",
                    "objectId": i,
                    "operationType": "DROP",
                    "properties": {},
                }
            )
        yield (
            f"01b2-{i:08d}",
            T0 + i * 6_000,
            f"USER_{j % 50}",
            direct,
            base,
            modified,
            ddl,
            f"hash{j}",
            "COPY" if text else "INSERT",
            "DB0",
            "SCHEMA_0",
            text or None,
            None,  # POLICIES_REFERENCED
        )


def windows(count: int, size: int) -> Iterator[list[tuple[Any, ...]]]:
    rows = generate(count)
    while batch := [r for _, r in zip(range(size), rows, strict=False)]:
        yield batch


def converter(counts: Counter[str]) -> RowConverter:
    resolver = StageResolver.from_settings(None, {STAGE: "s3://landing-bucket/feeds/"})
    return RowConverter(ACCOUNT, resolver, FoldRules(), set(), counts)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_convert_only(count: int) -> float:
    """The harvest path's conversion (shape cache included) without the graph."""
    counts: Counter[str] = Counter()
    conv = converter(counts)
    started = time.perf_counter()
    for row in generate(count):
        conv.convert_row(row)
    return time.perf_counter() - started


def bench_write(
    data_dir: Path, count: int, fetch_size: int, reduce: bool
) -> tuple[float, Counter[str], float | None]:
    """Seconds, counts and the FalkorDB server's peak RSS (read while it still runs)."""
    settings = GraphSettings.model_validate(
        {"data_dir": data_dir, "graph_name": f"bench_{reduce}_{count}"}
    )
    with open_store(settings) as store:
        store.init_schema()
        store.execute("MATCH (n) DETACH DELETE n", write=True)
        started = time.perf_counter()
        with harvest_run(store, "snowflake", ACCOUNT) as (run, writer):
            conv = converter(run.counts)
            if reduce:
                report = SnowflakeReport(scope=ACCOUNT, window_start=T0)
                run.watermark = write_windows(windows(count, fetch_size), conv, writer, report)
            else:
                _write_unreduced(count, conv, store, writer)
        elapsed = time.perf_counter() - started
        return elapsed, run.counts, server_peak_rss_mb(data_dir)


def _write_unreduced(count: int, conv: RowConverter, store: Any, writer: GraphWriter) -> None:
    """The naive path: every row parsed and converted, every value written."""
    for row in generate(count):
        for value in conv.convert(parse_row(row)):
            if not isinstance(value, SoftDelete):
                writer.add(value)
    writer.flush()


def bench_fetch(count: int, fetch_size: int) -> float | None:
    """Seconds to fetch `count` rows of the harvester's query from fakesnow over HTTP."""
    try:
        import fakesnow
        import snowflake.connector
    except ImportError:
        return None
    from lineagegraph.demo.account_usage import AccountUsage

    with fakesnow.server() as kwargs:
        conn = snowflake.connector.connect(**kwargs, database="SNOWFLAKE")
        AccountUsage(conn).reset(["ACCESS_HISTORY", "QUERY_HISTORY"])
        cur = conn.cursor()
        rows = list(generate(count))
        for chunk in range(0, count, 500):
            part = rows[chunk : chunk + 500]
            values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(part))
            params = [v for r in part for v in (r[0], r[1], r[2], r[3], r[4], r[5], r[6])]
            cur.execute(
                "INSERT INTO SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY (query_id, query_start_time,"
                " user_name, direct_objects_accessed, base_objects_accessed, objects_modified,"
                " object_modified_by_ddl) SELECT column1, TO_TIMESTAMP_LTZ(column2, 3), column3,"
                " PARSE_JSON(column4), PARSE_JSON(column5), PARSE_JSON(column6),"
                f" PARSE_JSON(column7) FROM VALUES {values}",
                params,
            )
        started = time.perf_counter()
        cur.execute(queries.ACCESS_HISTORY_SINCE, {"start_ms": T0 - 1})
        fetched = 0
        while batch := cur.fetchmany(fetch_size):
            fetched += len(batch)
        elapsed = time.perf_counter() - started
        conn.close()
        assert fetched == count, (fetched, count)
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--fetch-rows", type=int, default=5_000)
    parser.add_argument("--fetch-size", type=int, default=10_000)
    parser.add_argument("--baseline-rows", type=int, default=10_000)
    args = parse_args(parser, rows=500, fetch_rows=100, fetch_size=200, baseline_rows=100)

    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    convert_s = bench_convert_only(args.rows)
    print(
        f"convert only (shape cache, no graph): {args.rows:,} rows in {convert_s:.1f} s "
        f"({args.rows / convert_s:,.0f} rows/s)"
    )
    with tempfile.TemporaryDirectory(prefix="bench-snowflake-") as tmp:
        data_dir = Path(tmp)
        base_s, _, _ = bench_write(data_dir, args.baseline_rows, args.fetch_size, False)
        print(
            f"baseline, every row converted and written: {args.baseline_rows:,} rows in "
            f"{base_s:.1f} s "
            f"({args.baseline_rows / base_s:,.0f} rows/s)"
        )
        full_s, counts, server_mb = bench_write(data_dir, args.rows, args.fetch_size, True)
    pairs = counts["table_pairs"] + counts["column_pairs"]
    print(
        f"harvest path: {counts['rows']:,} rows, {pairs:,} lineage pairs "
        f"({counts['table_pairs']:,} table, {counts['column_pairs']:,} column) in "
        f"{full_s:.1f} s: {counts['rows'] / full_s:,.0f} rows/s, {pairs / full_s:,.0f} pairs/s"
    )
    print(
        f"  vs unreduced baseline: {(counts['rows'] / full_s) / (args.baseline_rows / base_s):.1f}x"
        f" rows/s; vs convert-only: {full_s / convert_s:.1f}x the time"
    )
    print(f"  goal < 60 s: {'met' if full_s < 60 else 'MISSED'} ({full_s:.1f} s)")
    rss = peak_rss_mb()
    print(
        f"  peak RSS, harvester process: {rss:,.0f} MB (goal < 500 MB: "
        f"{'met' if rss < 500 else 'MISSED'}); FalkorDB server: "
        f"{f'{server_mb:,.0f} MB' if server_mb else 'unknown'}"
    )
    writes = {k: v for k, v in sorted(counts.items()) if k.startswith("merge_")}
    print(f"  graph rows written: {writes}")
    print(f"load average after the harvest: {os.getloadavg()[0]:.1f}")
    fetch_s = bench_fetch(args.fetch_rows, args.fetch_size)
    if fetch_s is None:
        print("fetch: skipped (fakesnow[server] not installed)")
    else:
        print(
            f"fetch from fakesnow over HTTP: {args.fetch_rows:,} rows in {fetch_s:.1f} s "
            f"({args.fetch_rows / fetch_s:,.0f} rows/s; a fake server on this machine, not "
            "Snowflake)"
        )


if __name__ == "__main__":
    main()
