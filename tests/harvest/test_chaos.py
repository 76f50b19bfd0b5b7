"""Chaos: `kill -9` of the CLI or of the embedded server at random moments of S3 harvests.

A few thousand objects on the shared moto server are harvested again and again by the real CLI
in a subprocess while the test kills either the CLI or the store's redis-server at a random
moment (sometimes just after the CLI said success). After every kill the graph must still hold
everything a run that printed success wrote, nothing may be soft-deleted (every object stays in
the bucket), and at the end one more harvest must converge to exactly the graph of a clean run
into a fresh store, node by node and edge by edge.

The CLI runs with a 1 MiB compaction threshold instead of 64 MiB, so that most runs end by
compacting the append-only file and kills land in compactions too (one target waits for one).

The seed is printed; LINEAGEGRAPH_CHAOS_SEED and LINEAGEGRAPH_CHAOS_KILLS replay or lengthen it.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient
from s3_fixtures import put_many

from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings

OBJECTS = 3000
KILLS = int(os.environ.get("LINEAGEGRAPH_CHAOS_KILLS", "32"))
# Properties that say when a harvest saw something, not what it saw.
HOLD = """
import sys, time
from pathlib import Path
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings
with open_store(GraphSettings(data_dir=Path(sys.argv[1]))):
    print("holding", flush=True)
    time.sleep(600)
"""
# The real CLI, compacting at 1 MiB of growth (a setting of the store's, not of the user's).
CLI = """
import sys
from lineagegraph.graph import embedded
embedded.COMPACT_MIN_BYTES = 1 << 20
from lineagegraph.cli import main
main()
"""
TARGETS = (
    "cli",
    "server",
    "server at the success line",
    "server while compacting",
    "server after success",
)
WHEN = {
    "first_seen",
    "last_seen",
    "changed_at",
    "last_run_at",
    "last_run_id",
    "runs",
    "harvested_at",
}


def harvest_cmd(data_dir: Path, bucket: str, endpoint: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        CLI,
        "--data-dir",
        str(data_dir),
        "harvest",
        "s3",
        "--bucket",
        bucket,
        "--endpoint-url",
        endpoint,
    ]


def cli_env() -> dict[str, str]:
    return {
        **os.environ,
        "LINEAGEGRAPH_S3__ACCESS_KEY_ID": "test",
        "LINEAGEGRAPH_S3__SECRET_ACCESS_KEY": "test",
        "LINEAGEGRAPH_S3__REGION": "us-east-1",
        "LINEAGEGRAPH_S3__RETRY_ATTEMPTS": "2",
    }


def server_pids(data_dir: Path) -> list[int]:
    """redis-server processes serving `data_dir` (they run with it as their working directory)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if b"redis-server" in cmdline and Path(cwd) == data_dir.resolve():
            pids.append(int(proc.name))
    return pids


def snapshot(data_dir: Path) -> tuple[dict[str, Any], set[tuple[str, str, str]]]:
    """Every asset node by urn (labels and what-it-is properties) and every edge among them."""
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        nodes = store.execute(
            "MATCH (n) WHERE NOT n:HarvestRun RETURN n AS n, labels(n) AS labels", write=False
        ).records()
        edges = store.execute(
            "MATCH (a)-[r]->(b) WHERE NOT a:HarvestRun AND NOT b:HarvestRun "
            "RETURN type(r) AS t, a.urn AS a, b.urn AS b",
            write=False,
        ).records()
    by_urn: dict[str, Any] = {}
    for row in nodes:
        props = {k: v for k, v in row["n"].items() if k not in WHEN and k != "_labels"}
        urn = props["urn"]
        assert urn not in by_urn, f"duplicate node for {urn!r}"
        by_urn[urn] = (sorted(row["labels"]), props)
    edge_set = {(e["t"], e["a"], e["b"]) for e in edges}
    assert len(edge_set) == len(edges), "duplicate edges"
    return by_urn, edge_set


def kill_during_harvest(
    cmd: list[str], data_dir: Path, target: str, delay: float
) -> tuple[str, bool]:
    """Run one harvest and kill -9 `target` on the way; returns what the CLI printed and
    whether the kill landed in a compaction of the append-only file."""
    proc = subprocess.Popen(
        cmd, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    if target == "server after success":
        out = proc.communicate(timeout=300)[0]
        return (out if proc.returncode == 0 else ""), False
    if target in ("server at the success line", "server while compacting"):
        # The moment the CLI says success, before it releases the store (and compacts).
        out, compacting = "", False
        for line in proc.stdout:
            out += line
            if ": success" in line:
                compacting = target == "server while compacting" and compaction_began(data_dir)
                kill_servers(data_dir)
        proc.wait(timeout=300)
        return out, compacting
    time.sleep(delay)
    if target == "cli":
        proc.kill()
    else:
        kill_servers(data_dir)
    out = proc.communicate(timeout=300)[0]
    return (out if proc.returncode == 0 else ""), False


def compaction_began(data_dir: Path, seconds: float = 5.0) -> bool:
    """Wait until the server writes a compacted append-only file (the rewrite's temp file)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(data_dir.glob("temp-rewriteaof-*.aof")):
            return True
        time.sleep(0.002)
    return False


def kill_servers(data_dir: Path) -> None:
    for pid in server_pids(data_dir):
        os.kill(pid, signal.SIGKILL)


def live_files(nodes: dict[str, Any]) -> set[str]:
    return {
        urn
        for urn, (labels, props) in nodes.items()
        if "File" in labels and props.get("deleted_at") is None
    }


@pytest.fixture(scope="module")
def lake(moto_endpoint: str) -> str:
    from s3_fixtures import client_for, new_bucket

    client: BaseClient = client_for(moto_endpoint)
    bucket = new_bucket(client, "chaos")
    objects = {
        f"{area}/{table}/dt=2024-06-{day:02d}/part-{i:05d}.parquet": (b"x" * (i % 7), "STANDARD")
        for area in ("raw", "curated")
        for table in ("orders", "clicks", "users")
        for day in range(1, 6)
        for i in range(OBJECTS // 30)
    }
    put_many(client, bucket, objects)
    return bucket


def test_kill_9_at_random_moments_converges_and_loses_nothing(
    tmp_path: Path, moto_endpoint: str, lake: str
) -> None:
    seed = int(os.environ.get("LINEAGEGRAPH_CHAOS_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    print(f"chaos seed {seed} ({KILLS} kills)")

    reference = tmp_path / "reference"
    started = time.monotonic()
    clean = subprocess.run(
        harvest_cmd(reference, lake, moto_endpoint),
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    took = time.monotonic() - started
    assert clean.returncode == 0, clean.stderr
    print(f"a clean harvest of {OBJECTS:,} objects took {took:.1f} s")
    want_nodes, want_edges = snapshot(reference)
    assert len(live_files(want_nodes)) == OBJECTS

    chaos = tmp_path / "chaos"
    kills = dict.fromkeys(TARGETS, 0)
    successes = in_compaction = 0
    for round_no in range(KILLS):
        target = rng.choice(TARGETS)
        if target == "server after success":
            # Another process holds the store, so the server outlives the harvest (the case
            # where an unsaved success used to be lost).
            holder = subprocess.Popen(
                [sys.executable, "-c", HOLD, str(chaos)], stdout=subprocess.PIPE
            )
            assert holder.stdout and holder.stdout.readline().strip() == b"holding"
        out, compacting = kill_during_harvest(
            harvest_cmd(chaos, lake, moto_endpoint), chaos, target, rng.uniform(0.0, took * 1.1)
        )
        in_compaction += compacting
        said_success = ": success" in out
        if said_success:
            successes += 1
        if target == "server after success":
            kill_servers(chaos)
            holder.kill()
            holder.wait()
        kills[target] += 1
        nodes, _ = snapshot(chaos)
        deleted = [u for u, (_, p) in nodes.items() if p.get("deleted_at") is not None]
        assert not deleted, f"round {round_no} (seed {seed}): wrongly soft-deleted {deleted[:3]}"
        if successes:
            missing = live_files(want_nodes) - live_files(nodes)
            assert not missing, (
                f"round {round_no} (seed {seed}, {target}): a run printed success, yet "
                f"{len(missing)} objects are gone after kill -9, e.g. {sorted(missing)[:3]}"
            )
    print(
        f"kills: {kills} ({in_compaction} in a compaction); runs that said success: "
        f"{successes}; {time.monotonic() - started:.0f} s"
    )

    final = subprocess.run(
        harvest_cmd(chaos, lake, moto_endpoint),
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert final.returncode == 0, final.stderr
    got_nodes, got_edges = snapshot(chaos)
    assert got_nodes.keys() == want_nodes.keys()
    assert got_nodes == want_nodes
    assert got_edges == want_edges
    assert not server_pids(chaos) and not server_pids(reference), "a server was left behind"
    assert not list(chaos.glob("temp-rewriteaof-*")), "a killed compaction's file was left"
