"""OpenLineage ingest into the embedded graph: events per second, against a baseline in this run.

Writes N lineage-shaped COMPLETE RunEvents as JSON lines (200 jobs over layered datasets: raw
partitioned paths -> staging -> marts, 2-3 inputs, one output, column lineage on 4 columns,
symlinks on marts; each job runs N/200 times), then measures, in this order:

1. `harvest openlineage` into a fresh embedded graph (the figure the goal is about);
2. reading and mapping the events without writing (what parsing alone costs);
3. the baseline: the same events, mapped by the same mapper, written through the shared
   GraphWriter as they come (one row per graph value, no reduction), into a second fresh graph;
4. what `lineagegraph serve` adds to each batch it ingests: the same harvest with the RunEvent
   log (serve/eventlog.py) recording, its CPU per event against the harvest's (here + server).

Both graphs must come out identical (every node and relationship with its properties), so the
ratio compares two ways of writing the same graph. The machine's load average is printed with
each figure, and CPU seconds (this process plus the embedded server) next to wall seconds: on a
shared machine, events per CPU second is the figure that does not move with the neighbours.

The goal: at least 2,000 events/s into the embedded graph.

Then hostile events, each harvested by a process of its own (so its peak RSS is its own): one
event with `--hostile` inputs (100,000) and one output, refused by the default
[openlineage] max_event_datasets and stored with the cap raised to take it; and one with 1,500
inputs x 1,500 outputs (2.25 million FLOWS_TO uncapped), kept at dataset level by
max_event_flows. Goal: an event with 100,000 inputs is handled (stored or refused) in under
2 s and 200 MB (the harvesting process; the embedded server's peak is printed beside it).
Last, a real `lineagegraph serve` takes three hostile bodies (500, 1,000 and 1,500 inputs x as
many outputs) and gets SIGTERM a moment later: how long it takes to exit (it ingests what it
accepted first) and its peak RSS.

    python benchmarks/bench_openlineage.py              # 10,000 events
    python benchmarks/bench_openlineage.py --events 5000
    python benchmarks/bench_openlineage.py --events 5000 --drift   # every run reads other inputs
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from small import parse_args, server_pid

from lineagegraph.graph.store import GraphStore, Result, open_store
from lineagegraph.harvest.openlineage import (
    EventMapper,
    Located,
    OpenLineageReport,
    harvest_openlineage,
    read_events,
    run_state,
)
from lineagegraph.identity import NO_FOLD_RULES
from lineagegraph.pipeline import harvest_run
from lineagegraph.serve.eventlog import EventLog
from lineagegraph.settings import GraphSettings, OpenLineageSettings

COLUMNS = ("id", "customer", "amount", "ts")
HISTORY = (
    "stopped",
    "resumed",
    "retired_at",
    "live",
    "held_by",
    "held_from",
    "held_until",
    "changed_at",
)  # a stop moves changed_at, the edge's and its source node's
FACTS = ("run_times", "column_run_times", "changed_at")  # on nodes
GOAL = 2000


def dataset(layer: str, n: int, day: int) -> dict[str, Any]:
    if layer == "raw":
        return {"namespace": "s3a://lake", "name": f"raw/feed{n}/dt=2024-01-{day:02d}"}
    name = f"{layer}/t{n}"
    facets = {}
    if layer == "marts":
        alias = {"namespace": "s3a://lake/warehouse", "name": f"marts.t{n}", "type": "TABLE"}
        facets["symlinks"] = {"identifiers": [alias]}
    return {"namespace": "s3a://lake", "name": name, "facets": facets}


def events(count: int, seed: int = 7, drift: bool = False) -> Iterator[dict[str, Any]]:
    """`drift`: each run of a job reads 2-3 datasets of its layer drawn anew, so most runs stop
    some of the lineage the run before made (docs/history.md): the worst case of history."""
    rng = random.Random(seed)
    jobs = []
    for j in range(200):  # raw -> staging (100 jobs), staging -> marts (100 jobs)
        src_layer, dst_layer = ("raw", "staging") if j < 100 else ("staging", "marts")
        jobs.append(
            (
                j,
                src_layer,
                [rng.randrange(150) for _ in range(rng.randint(2, 3))],
                dst_layer,
                j % 100,
            )
        )
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(count):
        j, src_layer, sources, dst_layer, target = jobs[i % len(jobs)]
        if drift:
            sources = [rng.randrange(150) for _ in range(rng.randint(2, 3))]
        day = 1 + (i // len(jobs)) % 28
        inputs = [dataset(src_layer, s, day) for s in sources]
        output = dataset(dst_layer, target, day)
        output.setdefault("facets", {})["columnLineage"] = {
            "fields": {
                c: {
                    "inputFields": [
                        {
                            **{k: inputs[k2 % len(inputs)][k] for k in ("namespace", "name")},
                            "field": c,
                        }
                        for k2 in range(2)
                    ]
                }
                for c in COLUMNS
            }
        }
        yield {
            "eventType": "COMPLETE",
            "eventTime": (start + timedelta(minutes=i)).isoformat(),
            "producer": "https://github.com/lineagegraph/bench",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.UUID(int=rng.getrandbits(128)))},
            "job": {"namespace": "bench", "name": f"job{j}"},
            "inputs": inputs,
            "outputs": [output],
        }  # fmt: skip


class Meter:
    """Wall and CPU seconds (this process and the embedded server) and statements run."""

    def __init__(self, store: GraphStore, data_dir: Path) -> None:
        self.statements = 0
        self.rows = 0
        self._server = Path(f"/proc/{server_pid(data_dir)}/stat")
        execute = store.execute

        def counting(text: str, params: dict[str, Any] | None = None, *, write: bool) -> Result:
            self.statements += 1
            self.rows += len((params or {}).get("rows", ()))
            return execute(text, params, write=write)

        store.execute = counting  # type: ignore[method-assign]

    def _server_cpu(self) -> float:
        fields = self._server.read_text().rsplit(") ", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def __enter__(self) -> Meter:
        self.load = os.getloadavg()[0]
        self._start = (time.perf_counter(), time.process_time(), self._server_cpu())
        self.statements = self.rows = 0
        return self

    def __exit__(self, *exc: object) -> None:
        wall, cpu, server = self._start
        self.wall = time.perf_counter() - wall
        self.cpu = time.process_time() - cpu
        self.server_cpu = self._server_cpu() - server
        self.load_after = os.getloadavg()[0]


def measured(root: Path, name: str, write: Callable[[GraphStore], None]) -> tuple[Meter, Any]:
    """Run `write` into a fresh embedded graph; its meter and the graph's full contents."""
    data_dir = root / name
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        meter = Meter(store, data_dir)
        with meter:
            write(store)
        return meter, graph_contents(store)


def graph_contents(store: GraphStore) -> tuple[list[str], list[str]]:
    nodes = store.execute(
        "MATCH (n) WHERE NOT n:HarvestRun RETURN labels(n), properties(n)", write=False
    ).rows
    edges = store.execute(
        "MATCH (a)-[e]->(b) RETURN a.urn, type(e), b.urn, properties(e)", write=False
    ).rows
    nodes = [[labels, {k: v for k, v in p.items() if k not in FACTS}] for labels, p in nodes]
    stopped = sum(1 for *_, props in edges if props.get("stopped"))
    # The baseline writes no history (when edges stopped: each run's own writes): compared
    # without it, and the edges that stopped are counted.
    edges = [[a, t, b, {k: v for k, v in p.items() if k not in HISTORY}] for a, t, b, p in edges]
    return sorted(map(repr, nodes)), sorted(map(repr, edges)), stopped


def line(label: str, events: int, m: Meter) -> str:
    return (
        f"{label}: {events / m.wall:,.0f} events/s ({m.wall:.2f} s wall; CPU {m.cpu:.2f} s "
        f"here + {m.server_cpu:.2f} s server = {events / (m.cpu + m.server_cpu):,.0f} "
        f"events per CPU second); {m.statements:,} statements "
        f"({1000 * m.statements / events:.1f} per 1,000 events), {m.rows:,} rows "
        f"({m.rows / events:.1f} per event); "
        f"load {m.load:.1f} -> {m.load_after:.1f}"
    )


def hostile_event(inputs: int, outputs: int) -> dict[str, Any]:
    """One run with `inputs` x `outputs` datasets, each named as little as a producer can."""
    return {
        "eventType": "COMPLETE", "eventTime": "2024-01-01T00:00:00Z",
        "producer": "https://github.com/lineagegraph/bench", "run": {"runId": "hostile"},
        "job": {"namespace": "bench", "name": "hostile"},
        "inputs": [{"namespace": "s3://h", "name": f"i{i}"} for i in range(inputs)],
        "outputs": [{"namespace": "s3://h", "name": f"o{i}"} for i in range(outputs)],
    }  # fmt: skip


def hostile_child(inputs: int, outputs: int, max_datasets: int, root: Path) -> None:
    """In a process of its own: harvest one hostile event into a fresh graph; print a line."""
    path = root / f"hostile-{inputs}x{outputs}-{max_datasets}.json"
    path.write_text(json.dumps(hostile_event(inputs, outputs)) + "\n")
    limits = OpenLineageSettings(max_event_datasets=max_datasets)
    data_dir = root / path.stem
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        start = time.perf_counter()
        run, report = harvest_openlineage(store, path, limits=limits)
        wall = time.perf_counter() - start
        status = Path(f"/proc/{server_pid(data_dir)}/status").read_text()
        server = int(status.split("VmHWM:")[1].split()[0]) / 1024
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    what = "refused" if report.skipped_bad else "stored" if not report.problems else "capped"
    print(
        f"hostile event, {inputs:,} inputs x {outputs:,} outputs "
        f"({path.stat().st_size / 2**10:,.0f} KiB; max_event_datasets {max_datasets:,}): "
        f"{what} in {wall:.2f} s, peak RSS {rss:,.0f} MiB (embedded server {server:,.0f} "
        f"MiB); {run.counts['merge_flows']:,} FLOWS_TO, "
        f"{run.counts['merge_reads_from']:,} READS_FROM"
    )


def hostile(inputs: int, root: Path) -> None:
    default = OpenLineageSettings().max_event_datasets
    for shape in ((inputs, 1, default), (inputs, 1, inputs + 1), (1500, 1500, default)):
        args = [sys.executable, __file__, "--hostile-child", *map(str, shape), str(root)]
        subprocess.run(args, check=True)


def serve_sigterm(root: Path, wait: float = 1.5) -> None:
    """Post three hostile bodies to a real `serve`, SIGTERM it `wait` s later; print a line."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "lineagegraph.cli",
        "--data-dir",
        str(root / "serve"),
        "serve",
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/api/v1"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{base}/namespaces", timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    answers: list[str] = []

    def post(n: int) -> None:
        body = json.dumps(hostile_event(n, n) | {"run": {"runId": f"r{n}"}}).encode()
        request = urllib.request.Request(
            f"{base}/lineage", body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=600) as answer:
                answers.append(str(answer.status))
        except OSError as exc:
            answers.append(type(exc).__name__)

    posts = [threading.Thread(target=post, args=(n,)) for n in (500, 1000, 1500)]
    for thread in posts:
        thread.start()
    time.sleep(wait)
    peak, start = 0, time.perf_counter()
    status = Path(f"/proc/{proc.pid}/status")
    proc.send_signal(signal.SIGTERM)
    while proc.poll() is None:
        with contextlib.suppress(OSError, IndexError):  # gone, or going
            peak = max(peak, int(status.read_text().split("VmHWM:")[1].split()[0]) // 1024)
        time.sleep(0.05)
    took = time.perf_counter() - start
    for thread in posts:
        thread.join()
    print(
        f"SIGTERM {wait} s after three hostile bodies (answers {', '.join(sorted(answers))}): "
        f"serve exited {proc.returncode} in {took:.2f} s, peak RSS {peak:,} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument(
        "--drift", action="store_true", help="every run reads other inputs (history's worst case)"
    )
    parser.add_argument("--hostile", type=int, default=100_000, help="inputs of the big event")
    parser.add_argument("--hostile-child", nargs=4, help=argparse.SUPPRESS)
    args = parse_args(parser, events=300, hostile=1000)
    if args.hostile_child:
        *shape, root = args.hostile_child
        hostile_child(*map(int, shape), Path(root))
        return
    with tempfile.TemporaryDirectory(prefix="bench-ol-", ignore_cleanup_errors=True) as tmp:
        run_benchmark(args.events, Path(tmp), args.drift)
        if args.drift:  # the ingest figures only: the hostile events are the same either way
            return
        hostile(args.hostile, Path(tmp))
        serve_sigterm(Path(tmp))


def run_benchmark(n: int, root: Path, drift: bool = False) -> None:
    path = root / "events.jsonl"
    with open(path, "w") as fh:
        for event in events(n, drift=drift):
            fh.write(json.dumps(event) + "\n")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    reports = []
    ingest, graph = measured(root, "graph", lambda s: reports.append(harvest_openlineage(s, path)))
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    [(run, report)] = reports
    assert report.complete == n and not report.problems, report.problems[:3]

    load = os.getloadavg()[0]
    start = time.perf_counter()
    read = OpenLineageReport()
    mapper = EventMapper(NO_FOLD_RULES, read.problems)
    values = sum(len(mapper.items(located)) for located in read_events(path, read))
    parse_s = time.perf_counter() - start
    parse_load = os.getloadavg()[0]

    def unreduced(store: GraphStore) -> None:
        mapper = EventMapper(NO_FOLD_RULES, [])
        with harvest_run(store, "openlineage", str(path)) as (_, writer):
            for located in read_events(path, OpenLineageReport()):
                writer.add_all(mapper.items(located))
                state = run_state(located.event)  # every run event: its run's state
                if state is not None:
                    writer.add(state)

    base, base_graph = measured(root, "baseline", unreduced)
    same = graph[:2] == base_graph[:2]

    rate, base_rate = n / ingest.wall, n / base.wall
    print(
        f"events: {n:,} ({path.stat().st_size / 2**20:.1f} MiB JSON lines, 200 jobs), "
        f"{values:,} graph values ({values / n:.1f} per event); graph: "
        f"{len(graph[0]):,} nodes, {len(graph[1]):,} relationships"
    )
    print(line("harvest openlineage", n, ingest) + f"; run {run.status}")
    print(
        f"read + map only (no writes): {n / parse_s:,.0f} events/s ({parse_s:.2f} s); "
        f"load {load:.1f} -> {parse_load:.1f}"
    )
    print(line("baseline (same mapper, every value written as it comes)", n, base))
    print(
        f"ratio: harvest {rate / base_rate:.1f}x the baseline's events/s (wall), "
        f"{(base.cpu + base.server_cpu) / (ingest.cpu + ingest.server_cpu):.1f}x by CPU; "
        f"graphs identical (but for history): {same}; edges that stopped holding: {graph[2]:,}"
    )
    print(f"peak RSS: {rss_peak:,.0f} MiB after the harvest ({rss_before:,.0f} MiB before it)")
    print(
        f"goal (>= {GOAL:,} events/s): {'met' if rate >= GOAL else 'NOT met'} "
        f"at load {ingest.load:.1f} on {os.cpu_count()} CPUs"
    )
    assert same, "the harvest and the baseline wrote different graphs"
    event_log(path, root, n, (ingest.cpu + ingest.server_cpu) / n)


def event_log(path: Path, root: Path, n: int, harvest_cpu: float) -> None:
    """The harvest as serve runs it, its events recorded in the event log: CPU seconds the
    log's recorder and commit take (timed around each call), per event, against the harvest's."""
    log = EventLog(root / "events.sqlite", keep=100_000, keep_days=0)
    spent = [0.0]

    def with_log(store: GraphStore) -> None:
        with log.recording() as record:

            def timed(located: Located, at: int | None) -> None:
                begin = time.process_time()
                record(located, at)
                spent[0] += time.process_time() - begin

            harvest_openlineage(store, path, on_event=timed)
            begin = time.process_time()
        spent[0] += time.process_time() - begin  # the last chunk, pruning and the commit

    meter, _ = measured(root, "with-event-log", with_log)
    per_event = spent[0] / n
    print(
        f"serve's event log, recorded from the harvest: {1e6 * per_event:.1f} us CPU per event "
        f"against {1e6 * harvest_cpu:.0f} us for the harvest (here + server); the harvest "
        f"with it {1e6 * (meter.cpu + meter.server_cpu) / n:.0f} us per event; load "
        f"{meter.load:.1f} -> {meter.load_after:.1f}"
    )
    print(f"ratio: the event log adds {per_event / harvest_cpu:.3f}x the harvest's CPU")


if __name__ == "__main__":
    main()
