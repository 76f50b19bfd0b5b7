"""Classifications along lineage at scale: every derived tag of the graph, `tags ASSET#COLUMN`
and `check --policy` over the whole graph, against a per-origin baseline.

Builds a layered graph of tables (20 columns each) in a fresh embedded store: every column of
a layer is fed by two columns of the two tables its table reads in the layer before (5 % of the
feeds only hash the value: SHA2, where tags stop), and a last layer of S3 datasets that tables
flow into with no column lineage. Columns of the first layer carry the tagged origins (pii=email,
pii=phone, sensitivity=confidential, sensitivity=restricted). The graph is loaded with CREATE
statements of this script in the shape GraphWriter writes (MERGE is several times slower and
the load is not what is measured); the tags through GraphWriter.

Measures: all derived tags (lineagegraph.questions.tags.derive_all), its wall time and the
peak RSS of this process; `tags` of random columns deep in the graph (p50/p95, as the command
answers, resolving the name included); `upstream` of a last-layer table with every asset's
tags, against the traversal alone and one derivation per asset; `check --policy` over the
whole graph. The baseline is
what a per-origin search costs: a variable-length FEEDS pattern from each of a sample of
origins, extrapolated to all of them.

    .venv/bin/python benchmarks/bench_tags.py               # 1,000,000 columns, 2,000,000 feeds
    .venv/bin/python benchmarks/bench_tags.py --columns 200000 --origins 2000
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from small import parse_args

from lineagegraph.graph.store import GraphStore, chunks, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import TagFact
from lineagegraph.questions.answers import upstream
from lineagegraph.questions.lineage import traverse
from lineagegraph.questions.policy import check_policies
from lineagegraph.questions.tag_answers import tags_of
from lineagegraph.questions.tags import asset_tags, derive_all
from lineagegraph.settings import GraphSettings, Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import server_peak_rss_mb

ACCOUNT = "bench"
SEEN = 1_717_000_000_000
COLUMNS_PER_TABLE = 20
FEEDS_PER_COLUMN = 2
THIRD_FEED = 2 / 9  # share of columns with a third feed: 2 FEEDS per column over 10 layers
READS_PER_TABLE = 2
MASKED_SHARE = 0.05
TAGS = [("pii", "email"), ("pii", "phone"), ("sensitivity", "confidential"),
        ("sensitivity", "restricted")]  # fmt: skip
LEVELS = {"sensitivity": ["public", "internal", "confidential", "restricted"]}

CREATE_TABLES = """UNWIND $rows AS r
CREATE (:Asset:Table {urn: r.urn, system: 'snowflake', name: r.name, first_seen: $seen,
                      last_seen: $seen})"""
CREATE_DATASETS = """UNWIND $rows AS r
CREATE (:Asset:Dataset {urn: r.urn, system: 's3', name: r.name, bucket: r.bucket,
                        first_seen: $seen, last_seen: $seen})"""
CREATE_COLUMNS = """UNWIND $rows AS r
MATCH (a:Asset {urn: r.asset})
CREATE (:Column {urn: r.urn, name: r.name, first_seen: $seen, last_seen: $seen})
       -[:COLUMN_OF]->(a)"""
CREATE_FEEDS = """UNWIND $rows AS r
MATCH (a:Column {urn: r.src})
MATCH (b:Column {urn: r.dst})
CREATE (a)-[:FEEDS {first_seen: $seen, last_seen: $seen, via: [], masked_by: r.masked_by,
                    plain: size(r.masked_by) = 0}]->(b)"""
CREATE_FLOWS = """UNWIND $rows AS r
MATCH (a:Asset {urn: r.src})
MATCH (b:Asset {urn: r.dst})
CREATE (a)-[:FLOWS_TO {first_seen: $seen, last_seen: $seen, via: []}]->(b)"""
BASELINE = """MATCH (c:Column {urn: $urn})-[:FEEDS*1..%d]->(d:Column)
RETURN count(DISTINCT d) AS reached"""


def table(layer: int, i: int) -> str:
    return f"snowflake://{ACCOUNT}/L{layer}.PUBLIC.T_{i}"


def column(layer: int, i: int, c: int) -> str:
    return f"{table(layer, i)}#C{c}"


class Shape:
    """The graph's sizes, from the number of columns and layers asked for."""

    def __init__(self, columns: int, layers: int, sinks: int) -> None:
        self.layers = layers
        self.tables = max(READS_PER_TABLE, columns // COLUMNS_PER_TABLE // layers)
        self.sinks = sinks

    @property
    def columns(self) -> int:
        return self.layers * self.tables * COLUMNS_PER_TABLE

    @property
    def feeds(self) -> int:
        per_column = FEEDS_PER_COLUMN + THIRD_FEED
        return round((self.layers - 1) * self.tables * COLUMNS_PER_TABLE * per_column)


def build(store: GraphStore, shape: Shape, seed: int) -> tuple[int, int]:
    """Load the graph; returns (feeds, flows) written."""
    rng = random.Random(seed)
    params = {"seen": SEEN}

    def run(text: str, rows: Iterator[dict[str, Any]]) -> int:
        count = 0
        for chunk in chunks(rows, 10_000):
            store.execute(text, {**params, "rows": chunk}, write=True)
            count += len(chunk)
        return count

    layer_range = range(shape.layers)
    run(CREATE_TABLES, ({"urn": table(k, i), "name": f"T_{i}"}
                        for k in layer_range for i in range(shape.tables)))  # fmt: skip
    sinks = [f"s3://sink-{i % 7}/exports/e{i}" for i in range(shape.sinks)]
    run(CREATE_DATASETS, ({"urn": u, "name": u.rsplit("/", 1)[1],
                           "bucket": u.split("/")[2]} for u in sinks))  # fmt: skip
    run(CREATE_COLUMNS, ({"urn": column(k, i, c), "name": f"C{c}", "asset": table(k, i)}
                         for k in layer_range for i in range(shape.tables)
                         for c in range(COLUMNS_PER_TABLE)))  # fmt: skip
    reads = {
        (k, i): rng.sample(range(shape.tables), READS_PER_TABLE)
        for k in range(1, shape.layers)
        for i in range(shape.tables)
    }

    def feeds() -> Iterator[dict[str, Any]]:
        for (k, i), sources in reads.items():
            for c in range(COLUMNS_PER_TABLE):
                picked = set()
                wanted = FEEDS_PER_COLUMN + (rng.random() < THIRD_FEED)
                while len(picked) < wanted:
                    picked.add((rng.choice(sources), rng.randrange(COLUMNS_PER_TABLE)))
                for j, d in sorted(picked):
                    masked = ["SHA2"] if rng.random() < MASKED_SHARE else []
                    yield {"src": column(k - 1, j, d), "dst": column(k, i, c), "masked_by": masked}

    def flows() -> Iterator[dict[str, Any]]:
        for (k, i), sources in reads.items():
            for j in sources:
                yield {"src": table(k - 1, j), "dst": table(k, i)}
        for n, sink in enumerate(sinks):
            yield {"src": table(shape.layers - 1, n % shape.tables), "dst": sink}

    return run(CREATE_FEEDS, feeds()), run(CREATE_FLOWS, flows())


def tag_origins(store: GraphStore, shape: Shape, origins: int, seed: int) -> None:
    rng = random.Random(seed + 1)
    first = [(i, c) for i in range(shape.tables) for c in range(COLUMNS_PER_TABLE)]
    writer = GraphWriter(store)
    writer.add_all(
        TagFact(column(0, i, c), *rng.choice(TAGS), "manual", "bench", SEEN, "benchmark")
        for i, c in rng.sample(first, min(origins, len(first)))
    )
    writer.finish()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load_average() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds(store: GraphStore) -> tuple[float, float]:
    """CPU seconds so far of this process and of the store's server: what a busy machine
    changes far less than wall time."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    try:
        pid = store._server.server_pid()  # type: ignore[attr-defined]
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        server = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError, IndexError):
        server = float("nan")
    return own.ru_utime + own.ru_stime, server


def cpu_text(before: tuple[float, float], after: tuple[float, float]) -> str:
    return f"CPU {after[0] - before[0]:.1f} s here + {after[1] - before[1]:.1f} s in the server"


def upstream_with_tags(store: GraphStore, settings: Settings, urn: str, sample: int) -> None:
    """`upstream` of a last-layer table (hundreds of assets at full size): the traversal
    alone, the answer with every asset's tags (one derivation for all), and the baseline of
    one derivation per asset, timed on a sample and extrapolated."""
    began = time.perf_counter()
    plain = traverse(store, urn, "upstream")
    took_plain = time.perf_counter() - began
    began, cpu = time.perf_counter(), cpu_seconds(store)
    answer = upstream(store, settings, urn)
    took, cpu_after = time.perf_counter() - began, cpu_seconds(store)
    tagged = sum(1 for a in answer.assets if a.tags)
    picked = answer.assets[:sample]
    began = time.perf_counter()
    for item in picked:
        asset_tags(store, settings.tags, [item.urn])
    estimate = (time.perf_counter() - began) / max(1, len(picked)) * len(answer.assets)
    print(
        f"upstream of {urn}: {len(plain):,} assets in {took_plain:.2f} s without tags, "
        f"{took:.2f} s with every asset's and column's tags ({tagged:,} tagged; "
        f"{cpu_text(cpu, cpu_after)}); "
        f"baseline, one derivation per asset: est. {estimate:.1f} s "
        f"({estimate / took:.1f}x); {load_average()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--columns", type=int, default=1_000_000, help="columns in the graph")
    parser.add_argument("--layers", type=int, default=10, help="layers of tables")
    parser.add_argument("--origins", type=int, default=10_000, help="tagged columns")
    parser.add_argument("--sinks", type=int, default=1_000, help="S3 datasets at the end")
    parser.add_argument("--lookups", type=int, default=100, help="`tags` questions timed")
    parser.add_argument("--baseline-origins", type=int, default=20)
    parser.add_argument(
        "--per-asset", type=int, default=20, help="assets of the per-asset baseline timed"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data-dir", type=Path, help="store directory (default: a temp dir)")
    args = parse_args(
        parser,
        columns=4_000,
        layers=5,
        origins=40,
        sinks=10,
        lookups=10,
        baseline_origins=3,
        per_asset=3,
    )
    shape = Shape(args.columns, args.layers, args.sinks)
    policies = [
        {"name": "pii in the first layers", "tag": "pii",
         "databases": [f"L{k}" for k in range(shape.layers // 2)]},
        {"name": "restricted stays in snowflake", "tag": "sensitivity=restricted",
         "buckets": []},
    ]  # fmt: skip
    settings = Settings(tags={"levels": LEVELS, "policies": policies})

    with tempfile.TemporaryDirectory(prefix="bench-tags-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        graph = GraphSettings(data_dir=data_dir, graph_name=f"tags_{args.columns}_{args.seed}")
        with open_store(graph) as store:
            store.execute("MATCH (n) DETACH DELETE n", write=True)
            store.init_schema()
            began = time.perf_counter()
            feeds, flows = build(store, shape, args.seed)
            tag_origins(store, shape, args.origins, args.seed)
            built = time.perf_counter() - began
            print(
                f"graph: {shape.columns:,} columns in {shape.layers * shape.tables:,} tables, "
                f"{feeds:,} FEEDS ({MASKED_SHARE:.0%} masked), {flows:,} FLOWS_TO, "
                f"{args.sinks:,} S3 sinks, {args.origins:,} tagged origins; built in {built:.0f} s"
            )
            before = rss_mb()
            print(load_average())
            began, cpu = time.perf_counter(), cpu_seconds(store)
            found = derive_all(store, settings.tags)
            derived = found.derived_count()
            took = time.perf_counter() - began
            print(
                f"all derived tags: {derived:,} (node, tag) pairs over "
                f"{len(found.piece.names):,} nodes, {len(found.stop_edges):,} stops "
                f"in {took:.1f} s; "
                f"peak RSS {rss_mb():,.0f} MiB (before {before:,.0f} MiB); "
                f"{cpu_text(cpu, cpu_seconds(store))}; {load_average()}"
            )
            del found

            rng = random.Random(args.seed + 2)
            deep = [
                column(k, rng.randrange(shape.tables), rng.randrange(COLUMNS_PER_TABLE))
                for k in [rng.randrange(shape.layers // 2, shape.layers)
                          for _ in range(args.lookups)]
            ]  # fmt: skip
            times, cpu = [], cpu_seconds(store)
            for urn in deep:
                began = time.perf_counter()
                tags_of(store, settings, urn)
                times.append((time.perf_counter() - began) * 1000)
            print(
                f"tags ASSET#COLUMN, {len(deep)} columns in layers {shape.layers // 2}+: "
                f"p50 {statistics.median(times):.1f} ms, p95 {percentile(times, 0.95):.1f} ms; "
                f"{cpu_text(cpu, cpu_seconds(store))} in all; {load_average()}"
            )

            upstream_with_tags(store, settings, table(shape.layers - 1, 0), args.per_asset)

            began, cpu = time.perf_counter(), cpu_seconds(store)
            verdict = check_policies(store, settings.tags)
            took_policy = time.perf_counter() - began
            print(
                f"check --policy, whole graph: {len(verdict.violations):,} violations in "
                f"{took_policy:.1f} s; {cpu_text(cpu, cpu_seconds(store))}; {load_average()}"
            )

            sample = rng.sample(
                [r["target"] for r in store.read("tags_facts")], args.baseline_origins
            )
            began = time.perf_counter()
            for urn in sample:
                store.execute(BASELINE % (shape.layers - 1), {"urn": urn}, write=False)
            per_origin = (time.perf_counter() - began) / len(sample)
            estimate = per_origin * args.origins
            print(
                f"baseline, a variable-length FEEDS search per origin: {per_origin * 1000:.0f} ms "
                f"each, est. {estimate:.1f} s for {args.origins:,} (no stops, no paths)"
            )
            print(f"ratio: per-origin baseline {estimate / took:.1f}x all derived tags")
            server = server_peak_rss_mb(store)
            print(
                f"peak RSS: benchmark process {rss_mb():,.0f} MiB, FalkorDB server "
                + (f"{server:,.0f} MiB" if server else "unknown")
            )


if __name__ == "__main__":
    main()
