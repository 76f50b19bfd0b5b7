"""dbt harvest into the embedded graph: models per second, against loading the JSON alone.

Synthesizes a dbt project from the shapes of a real dbt 1.10 manifest and catalog
(benchmarks/data/dbt_shapes.json, taken from the test project's dbt-duckdb build): SOURCES
sources, then models in four layers (staging reads one source; intermediate, marts and
reports read 2-4 models of the layers below, a few hub models read by many), COLUMNS columns
each, compiled SQL that joins the upstreams and derives each column from one or two upstream
columns, and a catalog listing every column. Then measures, in this order:

1. the baseline: `json.load` of manifest.json and catalog.json, nothing else;
2. reading and mapping the project without a store (what parsing and SQL lineage cost);
3. `harvest_dbt` into a fresh embedded graph (the figure the goal is about), with its peak RSS.

The goal: 5,000 models and 50,000 columns in under 15 s, peak RSS under 500 MB.

    python benchmarks/bench_dbt.py                 # 5,000 models, 10 columns each
    python benchmarks/bench_dbt.py --models 1000 --no-column-lineage
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from small import parse_args, server_pid

from lineagegraph.graph.store import open_store
from lineagegraph.harvest.dbt import harvest_dbt, read_project
from lineagegraph.settings import GraphSettings

SHAPES = json.loads((Path(__file__).parent / "data" / "dbt_shapes.json").read_text())
NAMESPACE = "duckdb:///warehouse/bench.duckdb"
LAYERS = ("stg", "int", "mart", "rpt")
GOAL_SECONDS, GOAL_RSS_MB = 15.0, 500


def column_names(n: int) -> list[str]:
    return ["id"] + [f"col_{i}" for i in range(1, n)]


def relation(node: dict[str, Any]) -> str:
    return f'"{node["database"]}"."{node["schema"]}"."{node.get("alias") or node["identifier"]}"'


def source_node(i: int, columns: list[str]) -> dict[str, Any]:
    node = copy.deepcopy(SHAPES["source"])
    name = f"src_{i}"
    unique_id = f"source.bench.raw.{name}"
    node.update(
        unique_id=unique_id,
        name=name,
        identifier=name,
        schema="raw",
        fqn=["bench", "raw", name],
        database="bench",
    )
    node["relation_name"] = relation(node)
    shape = next(iter(SHAPES["source"]["columns"].values()))
    node["columns"] = {c: {**copy.deepcopy(shape), "name": c} for c in columns}
    return node


def model_node(name: str, parents: list[dict[str, Any]], columns: list[str]) -> dict[str, Any]:
    node = copy.deepcopy(SHAPES["model"])
    unique_id = f"model.bench.{name}"
    node.update(
        unique_id=unique_id,
        name=name,
        alias=name,
        database="bench",
        schema="main",
        fqn=["bench", name],
        path=f"{name}.sql",
        columns={},
    )
    node["relation_name"] = relation(node)
    node["depends_on"] = {"macros": [], "nodes": [p["unique_id"] for p in parents]}
    aliases = [f"t{i}" for i in range(len(parents))]
    selects = []
    for i, column in enumerate(columns):
        a = aliases[i % len(aliases)]
        b = aliases[(i + 1) % len(aliases)]
        selects.append(
            f"{a}.id as {column}"
            if column == "id"
            else f"coalesce({a}.{column}, {b}.{column}) as {column}"
        )
    joins = "".join(
        f"\nleft join {relation(p)} as {a} on {a}.id = t0.id"
        for p, a in zip(parents[1:], aliases[1:], strict=True)
    )
    node["compiled_code"] = (
        f"select {', '.join(selects)}\nfrom {relation(parents[0])} as t0{joins}\nwhere t0.id > 0"
    )
    node["raw_code"] = node["compiled_code"]
    return node


def catalog_entry(node: dict[str, Any], columns: list[str]) -> dict[str, Any]:
    entry = copy.deepcopy(SHAPES["catalog_node"])
    entry["unique_id"] = node["unique_id"]
    entry["metadata"].update(
        database=node["database"],
        schema=node["schema"],
        name=node.get("alias") or node["identifier"],
    )
    entry["columns"] = {
        c: {"type": "INTEGER", "index": i + 1, "name": c, "comment": None}
        for i, c in enumerate(columns)
    }
    return entry


def synthesize(target: Path, models: int, columns: int, seed: int = 5) -> None:
    """Write manifest.json and catalog.json of a layered project into `target`."""
    rng = random.Random(seed)
    names = column_names(columns)
    sources = [source_node(i, names) for i in range(max(1, models // 10))]
    layers: list[list[dict[str, Any]]] = []
    for index in range(models):
        layer = min(3, index * 4 // models)
        if layer == 0:
            parents = [rng.choice(sources)]
        else:
            below = [m for level in layers[:layer] for m in level]
            hubs = below[:5]
            parents = rng.sample(below, min(len(below), rng.randint(2, 4)))
            if rng.random() < 0.3:
                parents = [rng.choice(hubs), *[p for p in parents if p not in hubs]][:4]
        while len(layers) <= layer:
            layers.append([])
        layers[layer].append(model_node(f"{LAYERS[layer]}_{index}", parents, names))
    nodes = {m["unique_id"]: m for level in layers for m in level}
    manifest = {**{k: {} for k in ("macros", "docs", "exposures", "metrics", "groups",
                                   "selectors", "disabled", "semantic_models", "unit_tests",
                                   "saved_queries", "parent_map", "child_map", "group_map")},
                "metadata": SHAPES["metadata"], "nodes": nodes,
                "sources": {s["unique_id"]: s for s in sources}}  # fmt: skip
    catalog = {
        "metadata": SHAPES["catalog_metadata"], "errors": None,
        "nodes": {u: catalog_entry(n, names) for u, n in nodes.items()},
        "sources": {s["unique_id"]: catalog_entry(s, names) for s in sources},
    }  # fmt: skip
    (target / "manifest.json").write_text(json.dumps(manifest))
    (target / "catalog.json").write_text(json.dumps(catalog))


def server_cpu(data_dir: Path) -> float:
    """CPU seconds the embedded server has used (utime + stime)."""
    stat = Path(f"/proc/{server_pid(data_dir)}/stat").read_text()
    fields = stat.rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def server_rss_mb(data_dir: Path) -> float:
    status = Path(f"/proc/{server_pid(data_dir)}/status").read_text()
    return (
        int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1])
        / 1024
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=5000)
    parser.add_argument("--columns", type=int, default=10, help="columns per model")
    parser.add_argument("--no-column-lineage", action="store_true")
    args = parse_args(parser, models=200)
    lineage = not args.no_column_lineage
    with tempfile.TemporaryDirectory(prefix="bench-dbt-") as tmp:
        target, data_dir = Path(tmp) / "target", Path(tmp) / "store"
        target.mkdir()
        synthesize(target, args.models, args.columns)
        size = sum(p.stat().st_size for p in target.iterdir()) / 1e6
        print(
            f"project: {args.models:,} models, {args.models * args.columns:,} model columns, "
            f"{size:.0f} MB of JSON; load average {os.getloadavg()[0]:.2f}"
        )

        started = time.perf_counter()
        for name in ("manifest.json", "catalog.json"):
            with (target / name).open("rb") as fh:
                json.load(fh)
        baseline = time.perf_counter() - started
        print(f"baseline json.load alone: {baseline:.2f} s")

        started = time.perf_counter()
        project = read_project(target, namespace=NAMESPACE, column_lineage=lineage)
        count = sum(1 for _ in project.items())
        parsed = time.perf_counter() - started
        print(
            f"read and map, no store: {parsed:.2f} s, {count:,} values, "
            f"{project.report.counts.get('column_feeds', 0):,} column feeds"
        )
        del project

        with open_store(GraphSettings(data_dir=data_dir, graph_name="bench")) as store:
            store.init_schema()
            cpu = (time.process_time(), server_cpu(data_dir))
            started = time.perf_counter()
            run, report = harvest_dbt(store, target, namespace=NAMESPACE, column_lineage=lineage)
            seconds = time.perf_counter() - started
            cpu = (time.process_time() - cpu[0], server_cpu(data_dir) - cpu[1])
            server = server_rss_mb(data_dir)
        assert run.status == "success", run.error
        models = report.counts.get("models", 0)
        rss = peak_rss_mb()
        print(
            f"harvest dbt into the embedded graph: {seconds:.2f} s, {models / seconds:,.0f} "
            f"models/s, {report.counts.get('columns', 0):,} columns; load average "
            f"{os.getloadavg()[0]:.2f}"
        )
        print(
            f"CPU: {cpu[0]:.2f} s this process (parsing on one thread, writing on another), "
            f"{cpu[1]:.2f} s the embedded server"
        )
        print(
            f"ratio: harvest {seconds / baseline:.1f}x json.load alone "
            f"(read and map {parsed / baseline:.1f}x)"
        )
        print(f"peak RSS: {rss:.0f} MB this process, {server:.0f} MB the embedded server")
        met = seconds < GOAL_SECONDS and rss < GOAL_RSS_MB
        print(
            f"goal (< {GOAL_SECONDS:.0f} s, < {GOAL_RSS_MB} MB at 5,000 models): "
            f"{'met' if met else 'NOT met'} at {args.models:,} models"
        )


if __name__ == "__main__":
    main()
