"""OpenLineage ingest into the embedded graph: events per second, against a parse-only baseline.

Writes N lineage-shaped COMPLETE RunEvents as JSON lines (200 jobs over layered datasets: raw
partitioned paths -> staging -> marts, 2-3 inputs, one output, column lineage on 4 columns,
symlinks on marts), then times (a) reading and mapping them without writing (the baseline, in
this run) and (b) the full `harvest openlineage` into a fresh embedded graph.

The goal: at least 2,000 events/s into the embedded graph.

    python benchmarks/bench_openlineage.py              # 20,000 events
    python benchmarks/bench_openlineage.py --events 5000
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lineagegraph.graph.store import open_store
from lineagegraph.harvest.openlineage import EventMapper, harvest_openlineage, read_events
from lineagegraph.identity import NO_FOLD_RULES
from lineagegraph.settings import GraphSettings

COLUMNS = ("id", "customer", "amount", "ts")


def dataset(layer: str, n: int, day: int) -> dict[str, Any]:
    if layer == "raw":
        return {"namespace": "s3a://lake", "name": f"raw/feed{n}/dt=2024-01-{day:02d}"}
    name = f"{layer}/t{n}"
    facets = {}
    if layer == "marts":
        alias = {"namespace": "s3a://lake/warehouse", "name": f"marts.t{n}", "type": "TABLE"}
        facets["symlinks"] = {"identifiers": [alias]}
    return {"namespace": "s3a://lake", "name": name, "facets": facets}


def events(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    jobs = []
    for j in range(200):  # raw -> staging (100 jobs), staging -> marts (100 jobs)
        src_layer, dst_layer = ("raw", "staging") if j < 100 else ("staging", "marts")
        jobs.append((j, src_layer, [rng.randrange(150) for _ in range(rng.randint(2, 3))],
                     dst_layer, j % 100))  # fmt: skip
    start = datetime(2024, 1, 1, tzinfo=UTC)
    out = []
    for i in range(count):
        j, src_layer, sources, dst_layer, target = jobs[i % len(jobs)]
        day = 1 + (i // len(jobs)) % 28
        inputs = [dataset(src_layer, s, day) for s in sources]
        output = dataset(dst_layer, target, day)
        output.setdefault("facets", {})["columnLineage"] = {"fields": {
            c: {"inputFields": [{**{k: inputs[k2 % len(inputs)][k] for k in ("namespace", "name")},
                                 "field": c} for k2 in range(2)]} for c in COLUMNS
        }}  # fmt: skip
        out.append({
            "eventType": "COMPLETE",
            "eventTime": (start + timedelta(minutes=i)).isoformat(),
            "producer": "https://github.com/lineagegraph/bench",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.UUID(int=rng.getrandbits(128)))},
            "job": {"namespace": "bench", "name": f"job{j}"},
            "inputs": inputs,
            "outputs": [output],
        })  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-ol-"))
    path = root / "events.jsonl"
    with open(path, "w") as fh:
        for event in events(args.events):
            fh.write(json.dumps(event) + "\n")

    start = time.perf_counter()
    problems: list[str] = []
    mapper = EventMapper(NO_FOLD_RULES, problems)
    items = sum(len(mapper.items(located)) for located in read_events(path, problems))
    parse_s = time.perf_counter() - start

    with open_store(GraphSettings(data_dir=root / "graph")) as store:
        start = time.perf_counter()
        run, report = harvest_openlineage(store, path)
        ingest_s = time.perf_counter() - start
        [[assets]] = store.execute("MATCH (a:Asset) RETURN count(a)", write=False).rows
        [[edges]] = store.execute("MATCH ()-[e]->() RETURN count(e)", write=False).rows

    assert report.complete == args.events and not problems, report.problems[:3]
    rate = args.events / ingest_s
    print(f"events: {args.events:,} ({path.stat().st_size / 2**20:.1f} MiB JSON lines), "
          f"{items:,} graph values, {assets:,} assets, {edges:,} relationships")  # fmt: skip
    print(f"baseline (read + map, no writes): {args.events / parse_s:,.0f} events/s "
          f"({parse_s:.2f} s)")  # fmt: skip
    print(f"harvest openlineage (embedded graph): {rate:,.0f} events/s ({ingest_s:.2f} s), "
          f"{ingest_s / parse_s:.1f}x the baseline; run {run.status}")  # fmt: skip
    print(f"goal (>= 2,000 events/s): {'met' if rate >= 2000 else 'NOT met'}")


if __name__ == "__main__":
    main()
