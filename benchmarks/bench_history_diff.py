"""`lineagegraph diff` of one day on a large graph with history, and what history costs in memory.

Builds bench_traversal's lineage-shaped graph (1,000,000 assets, ~2.2M FLOWS_TO) into a fresh
embedded store, then:

- memory: FalkorDB's used_memory of the graph without history (no changed_at, stopped,
  resumed, retired_at, live, and none of the range indexes made for diff) and with it (every
  edge stopped and came back once, the indexes made), each measured after a restart of the
  server from a snapshot, so that what the writes left behind does not count (goal: at most
  +30 %);
- diff: one day with ~10,000 changes written by the tool's own statements (edges stopped by
  drift, new edges, new assets, deleted assets whose lineage stops with them), then
  `history.diff` over that day, and the statements it reads, timed against the full-scan
  statements it used before `changed_at` (benchmarks/baseline_history_*.cypher), which must
  return the same rows (goal: under 5 s);
- the writers' cost: merge_flow_runs, which now raises each source's changed_at, against
  itself before (benchmarks/baseline_merge_flow_runs.cypher).

    .venv/bin/python benchmarks/bench_history_diff.py                 # 1,000,000 assets
    .venv/bin/python benchmarks/bench_history_diff.py --assets 100000 --changes 2000
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from small import parse_args

from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.history import delete_assets
from lineagegraph.graph.statements import statement
from lineagegraph.graph.store import open_store
from lineagegraph.questions import history
from lineagegraph.settings import GraphSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import load, server_cpu_s
from bench_traversal import CHAIN_LENGTH, CHAIN_SHARE, SEEN, build, generate

HERE = Path(__file__).resolve().parent
DAY = 86_400_000
STOP, BACK = SEEN + 1_000, SEEN + 2_000  # every edge's history, long before the day
DAY_START = SEEN + 30 * DAY
DIFF_STATEMENTS = (
    "history_changed_assets",
    "history_changed_columns",
    "history_changed_edges",
    "history_schema_changes",
)
# What history adds to a graph: the properties and the indexes made for `diff`.
STRIP_EDGES = (
    "MATCH ()-[e:FLOWS_TO]->() SET e.changed_at = null, e.stopped = null, e.resumed = null, "
    "e.retired_at = null, e.live = null"
)
STRIP_NODES = "MATCH (n) SET n.changed_at = null"
WITH_HISTORY = (
    "MATCH ()-[e:FLOWS_TO]->() SET e.stopped = [$stop], e.resumed = [$back], "
    "e.changed_at = $back, e.live = e.via"
)
WITH_CHANGED_AT = "MATCH (a:Asset) SET a.changed_at = $back"  # its edges' (or its own)


def history_indexes() -> list[str]:
    """The schema's index statements made for `diff`: on changed_at, first_seen and `at`."""
    statements = [
        " ".join(line for line in s.splitlines() if not line.lstrip().startswith("//")).strip()
        for s in statement("schema.falkordb").split(";")
    ]
    return [s for s in statements if any(p in s for p in (".changed_at)", ".first_seen)", ".at)"))]


def indexed(store: FalkorDBStore) -> int:
    """How many (label or type, property) indexes the graph has."""
    return sum(len(row[1]) for row in store.execute("CALL db.indexes()", write=False).rows)


def drop_text(create: str) -> str:
    return create.replace("CREATE INDEX FOR", "DROP INDEX FOR", 1)


def used_memory_mb(store: FalkorDBStore) -> float:
    """used_memory, once the graph is loaded (a query waits for that) and indexes are built."""
    store.execute("MATCH (a:Asset) RETURN count(a)", write=False)
    settle(store)
    return int(store._server.client().info("memory")["used_memory"]) / 2**20


def graph_memory_mb(store: FalkorDBStore) -> tuple[int, int]:
    """FalkorDB's own account of the graph (GRAPH.MEMORY USAGE, whole MiB, sampled): its
    total and the part in indexes."""
    usage = store._server.client().execute_command("GRAPH.MEMORY", "USAGE", store._graph.name)
    return int(usage[b"total_graph_sz_mb"]), int(usage[b"indices_sz_mb"])


def restarted(settings: GraphSettings, store: FalkorDBStore) -> FalkorDBStore:
    """The same store after its server stopped and started again (a fresh heap), loading a
    snapshot: replaying the append-only file's queries leaves memory behind them."""
    store._server.rewrite_aof()
    store.close()
    again = open_store(settings)
    assert isinstance(again, FalkorDBStore)
    return again


def settle(store: FalkorDBStore, seconds: float = 900.0) -> None:
    """Wait until every index is built (FalkorDB builds them in the background)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = store.execute("CALL db.indexes()", write=False)
        status = result.columns.index("status")
        if all(row[status] == "OPERATIONAL" for row in result.rows):
            return
        time.sleep(1)
    raise SystemExit("the indexes were not built in time")


def day_of_changes(
    store: FalkorDBStore, layers: dict[str, list[str]], changes: int, seed: int
) -> dict[str, int]:
    """About `changes` changes within one day, through the writers' statements: edges that
    stopped (drift), new edges, new assets, deleted assets (their lineage stops too)."""
    rng = random.Random(seed + 2)
    at = iter(range(DAY_START + 1_000, DAY_START + DAY, 1_000))
    edges = store.execute(
        "MATCH (a:Asset)-[e:FLOWS_TO]->(b:Asset) RETURN a.urn, b.urn LIMIT $n",
        {"n": changes * 20},
        write=False,
    ).rows
    rng.shuffle(edges)
    share = changes // 10
    stopped = edges[: 4 * share]
    rows = [{"src": s, "dst": d, "stopped": [STOP, t], "resumed": [BACK], "retired_at": t,
             "live": [], "changed_at": t}
            for (s, d), t in zip(stopped, at, strict=False)]  # fmt: skip
    store.write_batches("history_set_flows", rows, ("src", "dst"))
    new_assets = [f"snowflake://bench-acct/NEW.PUBLIC.T_{i}" for i in range(share)]
    table = {"system": "snowflake", "props": {}}
    assets = [{**table, "urn": u, "name": u, "seen": next(at)} for u in new_assets]
    store.write_batches("merge_tables", assets, ("urn",))
    targets = layers["reports"]
    flows = [{"src": rng.choice(targets), "dst": u, "at": next(at), "via": []}
             for u in new_assets for _ in range(3)]  # fmt: skip
    store.write_batches("merge_flows", flows, ("src", "dst"))
    deleted = rng.sample(layers["marts"], share // 2)
    delete_assets(store, [{"urn": u, "at": next(at)} for u in deleted])
    return {
        "edges stopped": len(rows),
        "assets added": len(assets),
        "edges added": len(flows),
        "assets deleted": len(deleted),
    }


def timed_reads(store: FalkorDBStore, texts: dict[str, str], window: dict[str, int]) -> Any:
    """(ms, server CPU s, rows) of each statement's text, run once."""
    pid = store._server.server_pid()
    out = {}
    for name, text in texts.items():
        cpu, began = server_cpu_s(pid), time.perf_counter()
        rows = store.execute(text, window, write=False).rows
        out[name] = ((time.perf_counter() - began) * 1000, server_cpu_s(pid) - cpu, rows)
    return out


def writer_cost(store: FalkorDBStore, settings: GraphSettings, rows: int, seed: int) -> None:
    """merge_flow_runs now (it raises each source's changed_at) against before changed_at
    (benchmarks/baseline_merge_flow_runs.cypher), into two fresh graphs of the same server,
    batches alternated: the edges created, then merged again. Worst case: every edge is newer
    than its source's changed_at, so every source is raised."""
    rng = random.Random(seed + 3)
    nodes = max(10, rows // 2)
    assets = [{"urn": f"a{i}", "system": "s", "name": f"a{i}", "seen": 1, "props": {}}
              for i in range(nodes)]  # fmt: skip
    flows = {(f"a{rng.randrange(nodes)}", f"a{rng.randrange(nodes)}") for _ in range(rows)}
    rows_of = [{"src": s, "dst": d, "times": [5, 6], "first": 5, "last": 6, "via": ["j"]}
               for s, d in sorted(flows)]  # fmt: skip
    parts = [rows_of[i : i + 5_000] for i in range(0, len(rows_of), 5_000)]
    baseline = (HERE / "baseline_merge_flow_runs.cypher").read_text(encoding="utf-8")
    texts = {"new": statement("merge_flow_runs"), "old": baseline}
    graphs = {}
    for way in texts:
        graphs[way] = open_store(settings.model_copy(update={"graph_name": f"bench_writer_{way}"}))
        graphs[way].execute("MATCH (n) DETACH DELETE n", write=True)
        graphs[way].init_schema()
        graphs[way].write_batches("merge_tables", assets, ("urn",))
    pid = store._server.server_pid()
    try:
        for round_name in ("created", "merged again"):
            cpu = dict.fromkeys(texts, 0.0)
            for i, part in enumerate(parts):
                for way in ("old", "new") if i % 2 else ("new", "old"):
                    began = server_cpu_s(pid)
                    graphs[way].write_parts(texts[way], [part])
                    cpu[way] += server_cpu_s(pid) - began
            print(
                f"merge_flow_runs, {len(flows):,} FLOWS_TO {round_name}: server CPU "
                f"{cpu['new']:.1f} s now, {cpu['old']:.1f} s before changed_at: "
                f"ratio: writer {cpu['new'] / max(cpu['old'], 0.01):.2f}x"
            )
    finally:
        for graph in graphs.values():
            graph.execute("MATCH (n) DETACH DELETE n", write=True)
            graph.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=1_000_000, help="assets in the graph")
    parser.add_argument("--changes", type=int, default=10_000, help="changes within the day")
    parser.add_argument("--repeat", type=int, default=3, help="timed diffs, each way")
    parser.add_argument("--writer-rows", type=int, default=250_000, help="FLOWS_TO rows timed")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data-dir", type=Path, help="store directory (default: a temp dir)")
    args = parse_args(parser, assets=1_000, changes=100, repeat=1, writer_rows=2_000)
    smallest = int(CHAIN_LENGTH / CHAIN_SHARE)
    if args.assets < smallest:
        parser.error(f"--assets must be at least {smallest:,} (bench_traversal's graph)")
    if args.changes < 10:
        parser.error("--changes must be at least 10")
    print(load())
    with tempfile.TemporaryDirectory(prefix="bench-history-diff-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        settings = GraphSettings(data_dir=data_dir, graph_name=f"bench_diff_{args.assets}")
        store = open_store(settings)
        assert isinstance(store, FalkorDBStore)
        try:
            store = run(store, settings, args)
        finally:
            store.close()


def run(store: FalkorDBStore, settings: GraphSettings, args: argparse.Namespace) -> FalkorDBStore:
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    store.init_schema()
    shape, items = generate(args.assets, 4, args.seed)
    began = time.perf_counter()
    build(store, items)
    print(f"graph: {args.assets:,} assets, {shape.flows:,} FLOWS_TO; built in "
          f"{time.perf_counter() - began:.0f} s")  # fmt: skip

    # Memory: without history (properties and indexes), then with it; each after a restart.
    indexes = history_indexes()
    store.execute(STRIP_EDGES, write=True)
    store.execute(STRIP_NODES, write=True)
    for text in indexes:
        store.execute(drop_text(text), write=True)
    store = restarted(settings, store)
    plain = used_memory_mb(store)
    plain_graph = graph_memory_mb(store)
    kept = indexed(store)
    store.execute(WITH_HISTORY, {"stop": STOP, "back": BACK}, write=True)
    store.execute(WITH_CHANGED_AT, {"back": BACK}, write=True)
    store.init_schema()  # the indexes again
    settle(store)
    store = restarted(settings, store)
    with_history = used_memory_mb(store)
    history_graph = graph_memory_mb(store)
    made = indexed(store)
    assert made == kept + len(indexes), (kept, made, len(indexes))
    print(
        f"memory (used_memory after a restart): without history {plain:,.0f} MiB, with history "
        f"(every FLOWS_TO stopped and came back once, changed_at, {len(indexes)} range indexes) "
        f"{with_history:,.0f} MiB: {100 * (with_history / plain - 1):+.1f} % (goal: at most +30 %)"
    )
    print(
        f"  GRAPH.MEMORY USAGE: graph {plain_graph[0]:,} -> {history_graph[0]:,} MiB, of which "
        f"indexes {plain_graph[1]:,} -> {history_graph[1]:,} MiB"
    )

    # An older store's first open: changed_at set on every node and lineage edge, in pages.
    store.execute("MATCH ()-[e:FLOWS_TO]->() SET e.changed_at = null", write=True)
    store.execute(STRIP_NODES, write=True)
    pid = store._server.server_pid()
    cpu, began = server_cpu_s(pid), time.perf_counter()
    store._set_changed_at()
    print(
        f"changed_at set on an older store (schema step 3): {time.perf_counter() - began:.0f} s, "
        f"server CPU {server_cpu_s(pid) - cpu:.0f} s"
    )

    # One day of changes, and its diff.
    made = day_of_changes(store, shape.layers, args.changes, args.seed)
    print("the day: " + ", ".join(f"{n:,} {what}" for what, n in made.items()))
    window = {"since": DAY_START, "until": DAY_START + DAY}
    new = {name: statement(name) for name in DIFF_STATEMENTS}
    old = {name: (HERE / f"baseline_{name}.cypher").read_text(encoding="utf-8") for name in new}
    times: dict[str, list[float]] = {"new": [], "old": []}
    cpus: dict[str, list[float]] = {"new": [], "old": []}
    per: dict[str, dict[str, list[float]]] = {"new": {}, "old": {}}
    for _ in range(args.repeat):
        for way, texts in (("new", new), ("old", old)):
            got = timed_reads(store, texts, window)
            times[way].append(sum(ms for ms, _, _ in got.values()))
            cpus[way].append(sum(cpu for _, cpu, _ in got.values()))
            for name, (ms, _, _) in got.items():
                per[way].setdefault(name, []).append(ms)
            if way == "new":
                answers = {n: sorted(map(json.dumps, rows)) for n, (_, _, rows) in got.items()}
            else:
                for n, (_, _, rows) in got.items():
                    if sorted(map(json.dumps, rows)) != answers[n]:
                        raise SystemExit(f"{n}: the baseline's rows differ from the new one's")
    pid = store._server.server_pid()
    cpu, began, own = server_cpu_s(pid), time.perf_counter(), time.process_time()
    found = history.diff(store, window["since"], window["until"])
    whole = time.perf_counter() - began
    print(
        f"diff of the day: {len(found.changes):,} changes in {whole:.2f} s (goal: under 5 s; "
        f"server CPU {server_cpu_s(pid) - cpu:.2f} s, client CPU "
        f"{time.process_time() - own:.2f} s)"
    )
    for name in DIFF_STATEMENTS:
        n, o = statistics.median(per["new"][name]), statistics.median(per["old"][name])
        print(f"  {name:<26} {n:>9.1f} ms   full scan {o:>9.1f} ms   {o / n:>7.1f}x")
    n_ms, o_ms = statistics.median(times["new"]), statistics.median(times["old"])
    n_cpu, o_cpu = statistics.median(cpus["new"]), statistics.median(cpus["old"])
    print(
        f"  the four statements: {n_ms / 1000:.2f} s (server CPU {n_cpu:.2f} s) vs the full "
        f"scans' {o_ms / 1000:.2f} s (server CPU {o_cpu:.2f} s): {o_ms / n_ms:.1f}x faster, "
        f"median of {args.repeat}"
    )
    print(
        f"ratio: full scans {o_ms / n_ms:.1f}x the indexed statements; memory with history "
        f"{with_history / plain:.2f}x without"
    )
    writer_cost(store, settings, args.writer_rows, args.seed)
    print(load())
    return store


if __name__ == "__main__":
    main()
