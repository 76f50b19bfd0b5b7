"""`harvest kafka` when things go wrong, on a real broker (Tansu): killed with SIGKILL over and
over during a backlog, two members of one group and a rebalance, a store slower than
librdkafka's max.poll.interval.ms. Afterwards every event is in the graph once: each job's
`runs` counts its runs exactly (a lost event would lower it; none is counted twice, since a
job counts only runs newer than its last), and the group's offsets cover every message."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graphs import drop_graph
from kafka_helpers import LAKE, env, event, kafka_settings, produce, rows, unique
from services.tansu import FAST_GROUP, create_topic

from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.harvest.kafka import harvest_kafka
from lineagegraph.settings import GraphSettings

confluent_kafka = pytest.importorskip(
    "confluent_kafka", reason="confluent-kafka is not installed (pip install 'lineagegraph[kafka]')"
)

SRC = Path(__file__).resolve().parents[2] / "src"


def backlog(bootstrap: str, topic: str, jobs: int, runs: int) -> int:
    """`runs` runs of each of `jobs` jobs (START then COMPLETE, later runs later), keyed by job
    as openlineage-python's Kafka transport keys them; the number of messages."""
    messages: list[tuple[str | None, bytes | None]] = []
    for run in range(runs):
        at = f"2026-05-01T{run // 60:02d}:{run % 60:02d}:00Z"
        for job in range(jobs):
            run_id = f"{job}-{run}"
            for kind in ("START", "COMPLETE"):
                value = event(f"job{job}", run_id, at, [f"raw/{job}"], [f"out/{job}"], kind)
                messages.append((f"run:tests/job{job}", json.dumps(value).encode()))
    produce(bootstrap, topic, messages)
    return len(messages)


def assert_exactly_once(store: GraphStore, jobs: int, runs: int) -> None:
    found = rows(store, "MATCH (t:Transformation) RETURN t.name, t.runs")
    assert sorted(found) == sorted([f"job{j}", runs] for j in range(jobs))
    flows = rows(store, "MATCH (a)-[f:FLOWS_TO]->(b) RETURN a.urn, b.urn, f.runs")
    assert sorted(flows) == sorted(
        [f"{LAKE}/raw/{j}", f"{LAKE}/out/{j}", runs] for j in range(jobs)
    )


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    """The group's committed offset in each partition (what it will read next)."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        found = consumer.committed(
            [confluent_kafka.TopicPartition(topic, p) for p in range(partitions)], 10
        )
    finally:
        consumer.close()
    return [tp.offset for tp in found]


def test_killed_ten_times_during_a_backlog_it_ends_with_every_event_once(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    jobs, runs, partitions = 200, 50, 3
    topic = create_topic(kafka_bootstrap, unique("kill"), partitions)
    group = unique("g")
    total = backlog(kafka_bootstrap, topic, jobs, runs)
    assert total == 20_000
    data_dir = tmp_path / "graph"
    command = [sys.executable, "-m", "lineagegraph.cli", "--data-dir", str(data_dir),
               "harvest", "kafka"]  # fmt: skip
    environ = {**os.environ, "PYTHONPATH": str(SRC),
               **env(kafka_bootstrap, topic, group, batch_events=500)}  # fmt: skip
    seed = random.randrange(2**32)
    pick = random.Random(seed)
    log = tmp_path / "harvests.log"
    progress = [0]  # messages committed before each run, then after the last kill

    def done() -> int:
        offsets = committed(kafka_bootstrap, group, topic, partitions)
        return sum(max(offset, 0) for offset in offsets)

    with log.open("ab") as out:
        while len(progress) <= 10:
            process = subprocess.Popen(command, env=environ, stdout=out, stderr=subprocess.STDOUT)
            # Killed at a random moment once it is reading (it has committed a batch): while
            # it writes a batch, between a write and its commit, or between two batches.
            deadline = time.monotonic() + 120
            while process.poll() is None and done() == progress[-1]:
                assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
                time.sleep(0.1)
            if process.poll() is None:
                time.sleep(pick.uniform(0, 0.6))
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=30)
                progress.append(done())
                continue
            # It caught up before its kill came: only when the kills were almost done.
            assert process.returncode == 0, log.read_text(errors="replace")[-3000:]
            break
        final = subprocess.run(command, env=environ, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=300)  # fmt: skip
    print(f"seed {seed}: committed after each kill {progress[1:]}")
    kills_mid_backlog = sum(0 < n < total for n in progress[1:])
    assert kills_mid_backlog >= 10, (seed, progress)
    text = final.stdout.decode(errors="replace")
    assert final.returncode == 0, text
    assert all(f"{topic}[{p}]: lag 0" in text for p in range(partitions)), text
    assert sum(committed(kafka_bootstrap, group, topic, partitions)) == total, f"seed {seed}"
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        assert_exactly_once(store, jobs, runs)
        statuses = rows(store, "MATCH (r:HarvestRun {system: 'kafka'}) RETURN r.status")
    assert sorted(s for [s] in statuses).count("success") >= 1


@pytest.fixture
def two_stores(embedded_dir: Path) -> Iterator[tuple[GraphStore, GraphStore]]:
    """Two connections to one new graph of the embedded server: two consumers, one graph."""
    settings = GraphSettings(data_dir=embedded_dir, graph_name=f"test_{uuid.uuid4().hex[:12]}")
    with open_store(settings) as first, open_store(settings) as second:
        first.init_schema()
        try:
            yield first, second
        finally:
            assert isinstance(first, FalkorDBStore)
            drop_graph(first)


def slowed(store: GraphStore, seconds: float, times: int) -> list[float]:
    """Make the first `times` batch writes of `store` take `seconds` longer; when each began."""
    began: list[float] = []
    write = store.write_batches

    def slow(*args: Any, **kwargs: Any) -> int:
        if len(began) < times:
            began.append(time.monotonic())
            time.sleep(seconds)
        return write(*args, **kwargs)

    store.write_batches = slow  # type: ignore[method-assign]
    return began


def test_two_consumers_of_a_group_share_the_partitions_through_a_rebalance(
    kafka_bootstrap: str, two_stores: tuple[GraphStore, GraphStore], tmp_path: Path
) -> None:
    jobs, runs, partitions = 40, 40, 4
    topic = create_topic(kafka_bootstrap, unique("pair"), partitions)
    group = unique("g")
    total = backlog(kafka_bootstrap, topic, jobs, runs)
    first, second = two_stores
    slowed(first, 0.3, 60)  # the first member is still busy when the second joins
    settings = kafka_settings(kafka_bootstrap, topic, group, batch_events=100)
    reports: dict[str, Any] = {}

    def consume(name: str, store: GraphStore) -> None:
        reports[name] = harvest_kafka(store, settings, tmp_path, exclusive=False)[1]

    a = threading.Thread(target=consume, args=("a", first))
    a.start()
    deadline = time.monotonic() + 60
    while not rows(first, "MATCH (t:Transformation) RETURN count(t)")[0][0]:
        assert time.monotonic() < deadline, "the first member wrote nothing in 60 s"
        time.sleep(0.2)
    b = threading.Thread(target=consume, args=("b", second))
    b.start()
    a.join(300), b.join(300)
    assert set(reports) == {"a", "b"}, "a member failed (see the log)"
    one, two = reports["a"].consumer, reports["b"].consumer
    assert one.rebalances >= 2  # assigned everything, then its share after the second joined
    assert two.consumed > 0 and one.consumed > 0  # both read a share
    assert one.committed + two.committed >= total
    assert sum(committed(kafka_bootstrap, group, topic, partitions)) == total
    assert_exactly_once(first, jobs, runs)


def test_a_store_slower_than_the_poll_interval_keeps_the_consumer_in_its_group(
    kafka_bootstrap: str, store: GraphStore, tmp_path: Path
) -> None:
    """A batch takes 10 s to write, over max.poll.interval.ms (7 s): the consumer polls all
    along (its partitions paused), so it stays in the group: one assignment only, and its
    commits (refused from a member that was put out) all go through."""
    jobs, runs = 10, 5
    topic = create_topic(kafka_bootstrap, unique("slow"))
    group = unique("g")
    total = backlog(kafka_bootstrap, topic, jobs, runs)
    began = slowed(store, 10.0, 1)
    settings = kafka_settings(
        kafka_bootstrap, topic, group, client_config={**FAST_GROUP, "max.poll.interval.ms": 7000}
    )
    start = time.monotonic()
    run, report = harvest_kafka(store, settings, tmp_path, exclusive=False)
    assert began and time.monotonic() - start > 10  # the slow write did happen
    assert report.consumer.rebalances == 1
    assert report.consumer.committed == report.consumer.consumed == total
    assert committed(kafka_bootstrap, group, topic, 1) == [total]
    assert run.status == "success"
    assert_exactly_once(store, jobs, runs)
