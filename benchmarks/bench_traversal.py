"""Upstream/downstream traversal speed on a lineage-shaped graph, against a naive baseline.

Builds a layered DAG (raw S3 feeds -> staging -> intermediate -> marts -> reports) through
GraphWriter into a fresh embedded FalkorDB store: fan-in of 1-10 per asset (most small, some
skip-level edges), a few hub tables with hundreds of neighbours each way, and chains 20 deep.
Then times lineagegraph.questions.lineage.traverse to depth 20 from several start assets and,
in the same run, the naive variable-length pattern that enumerates paths
(`MATCH (a)-[:FLOWS_TO*1..20]->(b) RETURN DISTINCT b`), with a timeout; when the baseline times
out at depth 20 it is retried at smaller depths and the report says so.

    .venv/bin/python benchmarks/bench_traversal.py --assets 100000
    .venv/bin/python benchmarks/bench_traversal.py --assets 20000 --repeat 5   # quicker
    .venv/bin/python benchmarks/bench_traversal.py --assets 1000000 --no-baseline  # as-of at 1M
"""

from __future__ import annotations

import argparse
import itertools
import random
import resource
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from redis.utils import HIREDIS_AVAILABLE
from small import parse_args

from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import dataset_urn, snowflake_urn_from_parts
from lineagegraph.model import Asset, Flow, Item
from lineagegraph.questions import lineage
from lineagegraph.settings import GraphSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import load, server_cpu_s, server_peak_rss_mb

ACCOUNT = "bench-acct"
SEEN = 1_717_000_000_000

FAN_IN_WEIGHTS = [30, 25, 15, 10, 6, 5, 3, 3, 2, 1]  # P(fan-in = 1..10): mostly small
SKIP_SHARE = 0.1  # share of inputs taken from any earlier layer instead of the one before
HUBS = 6
HUB_DEGREE = (200, 600)  # inputs and outputs of each hub
CHAIN_LENGTH = 20
CHAIN_SHARE = 0.02  # of the assets, in chains


@dataclass
class LineageGraph:
    layers: dict[str, list[str]]
    hubs: list[str]
    chains: list[list[str]]
    flows: int


def urn_of(layer: str, i: int) -> str:
    if layer == "raw":
        return dataset_urn(f"s3://raw-bucket/feeds/feed_{i}/")
    return snowflake_urn_from_parts(ACCOUNT, layer.upper(), "PUBLIC", f"T_{i}")


def kind_of(layer: str) -> str:
    return "Dataset" if layer == "raw" else "Table"


def layer_names(count: int) -> list[str]:
    """raw -> staging -> marts -> reports (docs/graph-model.md), with intermediate layers
    between staging and marts when more than four are asked for."""
    middle = [f"intermediate_{i}" for i in range(1, count - 3)]
    return ["raw", "staging", *middle, "marts", "reports"]


def generate(assets: int, layer_count: int, seed: int) -> tuple[LineageGraph, Iterator[Item]]:
    """The graph's shape (for choosing start assets) and its items, nodes first."""
    rng = random.Random(seed)
    chain_assets = int(assets * CHAIN_SHARE) // CHAIN_LENGTH * CHAIN_LENGTH
    names = layer_names(layer_count)
    per_layer = (assets - chain_assets) // len(names)
    layers = {name: [urn_of(name, i) for i in range(per_layer)] for name in names}
    edges: set[tuple[str, str]] = set()
    for index, name in enumerate(names[1:], start=1):
        previous = layers[names[index - 1]]
        for dst in layers[name]:
            for _ in range(rng.choices(range(1, 11), FAN_IN_WEIGHTS)[0]):
                source_layer = (
                    layers[names[rng.randrange(index)]] if rng.random() < SKIP_SHARE else previous
                )
                edges.add((rng.choice(source_layer), dst))
    hub_layer = names[len(names) // 2 - 1]  # staging with four layers
    hubs = rng.sample(layers[hub_layer], HUBS)
    upstream_pool = [u for name in names[: names.index(hub_layer)] for u in layers[name]]
    downstream_pool = [u for name in names[names.index(hub_layer) + 1 :] for u in layers[name]]

    def some(pool: list[str]) -> list[str]:  # a hub's degree, fewer in a small graph
        return rng.sample(pool, min(len(pool), rng.randint(*HUB_DEGREE)))

    for hub in hubs:
        edges.update((src, hub) for src in some(upstream_pool))
        edges.update((hub, dst) for dst in some(downstream_pool))
    chains = []
    for c in range(chain_assets // CHAIN_LENGTH):
        chain = [urn_of("chains", c * CHAIN_LENGTH + k) for k in range(CHAIN_LENGTH)]
        edges.add((rng.choice(layers["staging"]), chain[0]))
        edges.update(itertools.pairwise(chain))
        edges.add((chain[-1], rng.choice(layers["marts"])))
        chains.append(chain)
    layers["chains"] = [urn for chain in chains for urn in chain]

    def items() -> Iterator[Item]:
        for name, urns in layers.items():
            system = "s3" if name == "raw" else "snowflake"
            for urn in urns:
                yield Asset(urn, kind_of(name), system, urn.rsplit("/", 1)[-1], SEEN)  # type: ignore[arg-type]
        for src, dst in sorted(edges):
            yield Flow(
                src, dst, SEEN, f"snowflake://{ACCOUNT}/query/job_{zlib.crc32(dst.encode()):x}"
            )

    return LineageGraph(layers, hubs, chains, len(edges)), items()


def build(store: GraphStore, items: Iterator[Item]) -> None:
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()


def starts(graph: LineageGraph, count: int, seed: int) -> dict[str, list[str]]:
    """Start assets per direction: ordinary ones, hubs and chain ends."""
    rng = random.Random(seed + 1)
    ordinary = max(1, count - 2)
    return {
        "downstream": rng.sample(graph.layers["raw"], ordinary // 2)
        + rng.sample(graph.layers["staging"], ordinary - ordinary // 2)
        + [graph.hubs[0], graph.chains[0][0]],
        "upstream": rng.sample(graph.layers["reports"], ordinary // 2)
        + rng.sample(graph.layers["marts"], ordinary - ordinary // 2)
        + [graph.hubs[1], graph.chains[0][-1]],
    }


# The baselines are what this benchmark measures against, not statements the tool runs, so they
# live here; the depth is an integer constant of this script (no backend takes a parameter).
# "distinct" asks only for the reachable set; "distance" also for each asset's distance, as
# lineage.traverse answers, which makes the backend enumerate the paths.
BASELINES = {
    "distinct": "RETURN DISTINCT b.urn AS urn",
    "distance": "RETURN b.urn AS urn, min(length(p)) AS distance",
}


def baseline_text(kind: str, direction: str, depth: int) -> str:
    arrow = ("-", "->") if direction == "downstream" else ("<-", "-")
    return (
        f"MATCH p = (a:Asset {{urn: $urn}}){arrow[0]}[:FLOWS_TO*1..{depth}]{arrow[1]}"
        f"(b:Asset) {BASELINES[kind]}"
    )


def run_baseline(
    store: GraphStore, kind: str, direction: str, urn: str, depths: list[int], timeout_ms: int
) -> tuple[int, float, int] | None:
    """(depth, ms, assets) at the deepest of `depths` that finishes within the timeout."""
    graph = store._graph  # type: ignore[attr-defined]  # the FalkorDB client, for its timeout
    for depth in depths:
        began = time.perf_counter()
        try:
            rows = graph.ro_query(
                baseline_text(kind, direction, depth), {"urn": urn}, timeout=timeout_ms
            ).result_set
        except Exception as exc:  # the server answers "Query timed out"
            if "timed out" not in str(exc).lower():
                raise
            continue
        return depth, (time.perf_counter() - began) * 1000, len(rows)
    return None


def baseline_cell(
    base: tuple[int, float, int] | None,
    ours: float,
    depth: int,
    timeout_ms: int,
    found: int,
    ratios: list[float],
) -> str:
    """`ms ratio` for the table, e.g. `12.0 0.5x`, `timeout >400x`, `35.1@d10 n/a`."""
    if base is None:
        return f"{'timeout':>9} {'>' + format(timeout_ms / ours, '.0f') + 'x':>7}"
    at, ms, count = base
    if at != depth:
        return f"{format(ms, '.1f') + '@d' + str(at):>9} {'n/a':>7}"
    assert count == found, (count, found)  # the same answer, or the comparison means nothing
    ratios.append(ms / ours)
    return f"{ms:>9.1f} {format(ms / ours, '.1f') + 'x':>7}"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=100_000, help="assets in the graph")
    parser.add_argument("--layers", type=int, default=4, help="layers, raw to reports (>= 4)")
    parser.add_argument("--starts", type=int, default=8, help="start assets per direction")
    parser.add_argument("--depth", type=int, default=20, help="traversal depth")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per start")
    parser.add_argument("--baseline-timeout-ms", type=int, default=20_000)
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the naive baseline (hours at 1,000,000 assets): ours, and as-of against now",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data-dir", type=Path, help="store directory (default: a temp dir)")
    args = parse_args(parser, assets=1_000, starts=2, repeat=1)
    smallest = int(CHAIN_LENGTH / CHAIN_SHARE)  # room for one 20-deep chain
    if args.assets < smallest:
        parser.error(f"--assets must be at least {smallest:,} (the graph holds 20-deep chains)")
    if args.layers < 4:
        parser.error("--layers must be at least 4 (raw, staging, marts, reports)")

    with tempfile.TemporaryDirectory(prefix="bench-traversal-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        name = f"bench_{args.assets}_{args.layers}_{args.seed}"
        settings = GraphSettings(data_dir=data_dir, graph_name=name)
        with open_store(settings) as store:
            store.execute("MATCH (n) DETACH DELETE n", write=True)
            store.init_schema()
            shape, items = generate(args.assets, args.layers, args.seed)
            began = time.perf_counter()
            build(store, items)
            built = time.perf_counter() - began
            total = sum(len(v) for v in shape.layers.values())
            print(
                f"graph: {total:,} assets in {args.layers} layers + chains, "
                f"{shape.flows:,} FLOWS_TO edges, {HUBS} hubs, "
                f"{len(shape.chains)} chains of {CHAIN_LENGTH}; built in {built:.1f} s "
                f"({(total + shape.flows) / built:,.0f} items/s)"
            )
            report(store, shape, args)
            server_rss = server_peak_rss_mb(store)
        own_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"peak RSS: benchmark process {own_rss:,.0f} MiB, FalkorDB server "
            + (f"{server_rss:,.0f} MiB" if server_rss else "unknown")
        )


def report(store: GraphStore, shape: LineageGraph, args: argparse.Namespace) -> None:
    all_ms: list[float] = []
    depths = [d for d in (args.depth, 10, 6, 4) if d <= args.depth]
    for direction, urns in starts(shape, args.starts, args.seed).items():
        print(f"\n{direction}, depth {args.depth} (naive ms and naive/ours ratio per baseline):")
        print(
            f"  {'start':<44} {'assets':>6} {'ours ms':>8} {'p95':>7}   "
            f"{'distinct':>9} {'ratio':>7}   {'distance':>9} {'ratio':>7}"
        )
        mss: list[float] = []
        ratios: dict[str, list[float]] = {kind: [] for kind in BASELINES}
        for urn in urns:
            times, found = [], []
            for _ in range(args.repeat):
                began = time.perf_counter()
                found = lineage.traverse(store, urn, direction, depth=args.depth)
                times.append((time.perf_counter() - began) * 1000)
            mss.extend(times)
            ours = statistics.median(times)
            cells = (
                []
                if args.no_baseline
                else [
                    baseline_cell(
                        run_baseline(store, kind, direction, urn, depths, args.baseline_timeout_ms),
                        ours,
                        args.depth,
                        args.baseline_timeout_ms,
                        len(found),
                        ratios[kind],
                    )
                    for kind in BASELINES
                ]
            )
            label = urn if len(urn) <= 44 else "…" + urn[-43:]
            print(
                f"  {label:<44} {len(found):>6} {ours:>8.1f} {percentile(times, 0.95):>7.1f}   "
                + "   ".join(cells)
            )
        all_ms.extend(mss)
        summary = f"  {direction}: median {statistics.median(mss):.1f} ms, "
        summary += f"p95 {percentile(mss, 0.95):.1f} ms over {len(mss)} traversals"
        for kind, values in ratios.items():
            if values:
                summary += f"; {kind} naive/ours median {statistics.median(values):.2f}x"
        print(summary)
    print(
        f"\nall traversals: median {statistics.median(all_ms):.1f} ms, "
        f"p95 {percentile(all_ms, 0.95):.1f} ms (goal: median under 50 ms)"
    )
    print(
        f"naive = MATCH p = (a)-[:FLOWS_TO*1..d]->(b) RETURN DISTINCT b (distinct) or "
        f"RETURN b, min(length(p)) (distance); timeout {args.baseline_timeout_ms} ms; "
        f"`x@dN` = timed out at depth {args.depth}, finished at depth N (no ratio taken)"
    )
    parser_kind = "hiredis (C)" if HIREDIS_AVAILABLE else "pure Python (install hiredis)"
    print(f"redis-py reply parser: {parser_kind}")
    as_of_report(store, shape, args)


HISTORY = "MATCH ()-[e:FLOWS_TO]->() SET e.stopped = [$stop], e.resumed = [$back]"
"""Every edge stopped once and came back (docs/history.md): the history the as-of goal is for."""


def as_of_report(store: GraphStore, shape: LineageGraph, args: argparse.Namespace) -> None:
    """--as-of traversal against today's on the same graph, once every edge has a history:
    the same starts, each way, alternating the two so that load moves both alike."""
    store.execute(HISTORY, {"stop": SEEN + 1000, "back": SEEN + 2000}, write=True)
    as_of = SEEN + 3000  # after every edge came back: the same answers as now
    now_ms: list[float] = []
    then_ms: list[float] = []
    cpu = {"now": 0.0, "as of": 0.0}
    server = {"now": 0.0, "as of": 0.0}  # the server's CPU: what a loaded machine moves least
    pid = store._server.server_pid()  # type: ignore[attr-defined]
    for direction, urns in starts(shape, args.starts, args.seed).items():
        for urn in urns:
            for _ in range(args.repeat):
                for when, times in ((None, now_ms), (as_of, then_ms)):
                    began, began_cpu = time.perf_counter(), time.process_time()
                    began_server = server_cpu_s(pid)
                    found = lineage.traverse(store, urn, direction, depth=args.depth, as_of=when)
                    times.append((time.perf_counter() - began) * 1000)
                    cpu["now" if when is None else "as of"] += time.process_time() - began_cpu
                    server["now" if when is None else "as of"] += server_cpu_s(pid) - began_server
                    if when is None:
                        expected = len(found)
                    elif len(found) != expected:
                        raise SystemExit(f"as-of answer differs from now's for {urn}")
    ratio = statistics.median(then_ms) / statistics.median(now_ms)
    p95 = percentile(then_ms, 0.95) / percentile(now_ms, 0.95)
    print(
        f"\nwith history (every FLOWS_TO stopped and resumed once), {len(now_ms)} traversals "
        f"each: now median {statistics.median(now_ms):.1f} ms, p95 "
        f"{percentile(now_ms, 0.95):.1f} ms; --as-of median {statistics.median(then_ms):.1f} ms, "
        f"p95 {percentile(then_ms, 0.95):.1f} ms; as-of/now {ratio:.2f}x median, {p95:.2f}x p95 "
        f"(goal: at most 1.5x); client CPU {cpu['now']:.2f} s now, {cpu['as of']:.2f} s as of; "
        f"server CPU {server['now']:.2f} s now, {server['as of']:.2f} s as of; {load()}"
    )


if __name__ == "__main__":
    main()
