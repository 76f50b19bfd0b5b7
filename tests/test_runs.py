"""Harvest runs as a scheduler meets them: signals, dead processes, and the per-store lock."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lineagegraph.cli import cli
from lineagegraph.errors import StoreError
from lineagegraph.graph.store import open_store
from lineagegraph.pipeline import (
    harvest_lock,
    harvest_run,
    last_watermark,
    lock_file,
)
from lineagegraph.processes import now_ms, process_start
from lineagegraph.settings import GraphSettings

TEMPLATE = {
    "eventTime": "2024-01-02T03:00:00Z", "eventType": "COMPLETE",
    "producer": "https://example.com/test", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json",
}  # fmt: skip


def write_events(directory: Path, files: int, per_file: int) -> None:
    """Many small jobs reading one dataset and writing another, one JSON line each."""
    directory.mkdir()
    for f in range(files):
        lines = []
        for e in range(per_file):
            n = f * per_file + e
            lines.append(json.dumps({
                **TEMPLATE,
                "run": {"runId": f"00000000-0000-4000-8000-{n:012d}"},
                "job": {"namespace": "test", "name": f"job_{n}"},
                "inputs": [{"namespace": "s3://lake", "name": f"raw/in_{n}"}],
                "outputs": [{"namespace": "s3://lake", "name": f"out/out_{n}"}],
            }))  # fmt: skip
        (directory / f"events_{f:05d}.jsonl").write_text("\n".join(lines) + "\n")


def cli_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    return {
        **env,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "LINEAGEGRAPH_GRAPH__DATA_DIR": str(data_dir),
    }


def redis_servers_of(data_dir: Path) -> list[int]:
    """Pids of redis-server processes serving `data_dir` (by command line or working dir)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if "redis-server" in cmdline and (str(data_dir) in cmdline or cwd == str(data_dir)):
            found.append(int(proc.name))
    return found


def wait_for(check: Any, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def assets(data_dir: Path) -> int:
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        return int(store.execute("MATCH (a:Asset) RETURN count(a)", write=False).rows[0][0])


def runs_of(data_dir: Path) -> list[dict[str, Any]]:
    """Every HarvestRun in the store, oldest first, as property maps."""
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        query = "MATCH (h:HarvestRun) RETURN properties(h) AS run ORDER BY h.started"
        return [row["run"] for row in store.execute(query, write=False).records()]


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ol") / "events"
    write_events(path, files=800, per_file=100)
    return path


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)],
)
def test_a_signal_records_the_run_interrupted_and_releases_the_store(
    tmp_path: Path, events: Path, signum: int, code: int
) -> None:
    data_dir = tmp_path / "store"
    proc = subprocess.Popen(
        [sys.executable, "-m", "lineagegraph.cli", "harvest", "openlineage", str(events)],
        env=cli_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = data_dir / "harvest.lock"
    # The lock names its holder only while a run is open: the harvest is under way.
    assert wait_for(lambda: lock.is_file() and lock.read_text().startswith("pid "))
    assert wait_for(lambda: assets(data_dir) > 0)  # a first window of events is written
    assert redis_servers_of(data_dir.resolve())  # the harvest's server, found while it runs
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    name = signal.Signals(signum).name
    assert proc.returncode == code, err
    assert err.strip().splitlines()[-1].startswith(f"interrupted by {name}"), err
    assert "Traceback" not in err
    assert wait_for(lambda: not redis_servers_of(data_dir.resolve()), 10)
    runs = runs_of(data_dir)
    assert [(r["status"], r["error"]) for r in runs] == [("interrupted", f"interrupted by {name}")]
    assert runs[0].get("watermark") is None and runs[0]["pid"] == proc.pid
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        assert last_watermark(store, "openlineage", str(events.resolve())) is None
    assert assets(data_dir) > 0  # what was written before the signal stays
    assert lock.read_text() == ""  # released


def test_a_killed_harvest_is_abandoned_and_blocks_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "store"
    with (
        open_store(GraphSettings(data_dir=data_dir)) as store,
        harvest_run(store, "openlineage", "/x") as (run, _),
    ):
        run.watermark = 1000
    victim = subprocess.Popen(["sleep", "60"])  # a harvest process that will die mid-run
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.run("harvest_run_start", {
            "id": "dead", "system": "openlineage", "scope": "/x", "started": now_ms(),
            "host": socket.gethostname(), "pid": victim.pid, "pid_start": process_start(victim.pid),
        })  # fmt: skip
    status = CliRunner().invoke(cli, ["--data-dir", str(data_dir), "status", "--format", "json"])
    assert [r["status"] for r in json.loads(status.stdout)["runs"]] == ["running", "success"]
    victim.kill()
    victim.wait()
    status = CliRunner().invoke(cli, ["--data-dir", str(data_dir), "status", "--format", "json"])
    assert [r["status"] for r in json.loads(status.stdout)["runs"]] == ["abandoned", "success"]
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        assert last_watermark(store, "openlineage", "/x") == 1000
        with harvest_run(store, "openlineage", "/x") as (run, _):
            run.watermark = 3000
        assert last_watermark(store, "openlineage", "/x") == 3000
    dead = next(r for r in runs_of(data_dir) if r["id"] == "dead")
    assert dead["status"] == "abandoned"
    assert (
        dead["error"] == f"abandoned: process {victim.pid} on {socket.gethostname()} ended "
        "without finishing the run"
    )


def test_a_reused_pid_does_not_keep_a_dead_run_alive(tmp_path: Path) -> None:
    data_dir = tmp_path / "store"
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.run("harvest_run_start", {
            "id": "old", "system": "s3", "scope": "s3://b/", "started": 1,
            "host": socket.gethostname(), "pid": os.getpid(), "pid_start": 1,  # not our start
        })  # fmt: skip
    status = CliRunner().invoke(cli, ["--data-dir", str(data_dir), "status", "--format", "json"])
    assert json.loads(status.stdout)["runs"][0]["status"] == "abandoned"


def test_a_second_harvest_fails_fast_and_changes_nothing(tmp_path: Path, events: Path) -> None:
    data_dir = tmp_path / "store"
    with harvest_lock(lock_file(str(data_dir))):  # re-entrant: harvest_run takes it again
        with open_store(GraphSettings(data_dir=data_dir)) as store, harvest_run(store, "s3", "/b"):
            pass
        other = subprocess.run(
            [sys.executable, "-m", "lineagegraph.cli", "harvest", "openlineage", str(events)],
            env=cli_env(data_dir),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert other.returncode == 5, other.stderr
    assert f"another harvest is running on this store (pid {os.getpid()} on " in other.stderr
    assert [r["system"] for r in runs_of(data_dir)] == ["s3"]
    assert assets(data_dir) == 0


def test_an_unusable_data_dir_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"  # a file where a directory should be: fails even for root
    blocker.write_text("x")
    data_dir = blocker / "store"
    with pytest.raises(StoreError, match=str(data_dir)), harvest_lock(lock_file(str(data_dir))):
        pass
    result = CliRunner().invoke(
        cli,
        ["--data-dir", str(data_dir), "harvest", "all", "--only", "spark"],
        env={"LINEAGEGRAPH_SPARK__SPOOL_DIR": str(tmp_path)},
    )
    assert result.exit_code == 3, result.output
    assert str(data_dir) in result.output and "unexpected" not in result.output
