"""A full disk under serve and the CLI (issue 21, item 7): the answer says "disk full", serve
logs one line per refused request (no traceback), and once space is freed it recovers by itself.

The disk is a real one: a 24 MiB tmpfs mounted for the test (root only; skipped otherwise)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_fixtures import SRC, Server
from test_serve_recovery import event, in_graph, metric, wait_for


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m,mode=0700", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk has no byte left."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_reads_disk_full_and_serve_recovers_when_freed(small_disk: Path) -> None:
    server = Server(small_disk / "store")
    server.start()
    try:
        assert server.post(event("before")).status_code == 201
        assert wait_for(lambda: in_graph(server, "before"))
        filler = fill(small_disk)

        refused = [server.post(event(f"full{n}")) for n in range(3)]
        assert [r.status_code for r in refused] == [503] * 3
        assert all(r.json()["reason"].startswith("disk full: ") for r in refused), refused[0].text

        # The CLI writing to the same store (through serve's server) on the full disk.
        events = small_disk.parent / "events.jsonl"
        events.write_text(event("from-cli") + "\n")
        env = {
            **os.environ,
            "PYTHONPATH": str(SRC),
            "LINEAGEGRAPH_GRAPH__DATA_DIR": str(server.data_dir),
        }
        cli = subprocess.run(
            [sys.executable, "-m", "lineagegraph.cli", "harvest", "openlineage", str(events)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=small_disk.parent,
        )
        assert cli.returncode == 3, cli.stderr
        assert "error: disk full: " in cli.stderr, cli.stderr
        # A write the store's own server must log to its append-only file: it cannot, and
        # (appendfsync always) exits; the CLI reads why in its log instead of "Connection closed".
        write = subprocess.run(
            [
                sys.executable,
                "-m",
                "lineagegraph.cli",
                "query",
                "--write",
                "CREATE (:Filler {pad: $pad})",
                "-p",
                "pad=" + "x" * 4096,
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=small_disk.parent,
        )
        assert write.returncode == 3, write.stderr
        assert "\nerror: disk full: " in "\n" + write.stderr, write.stderr

        filler.unlink()  # space again: serve takes events and the store comes back by itself
        assert server.post(event("after")).status_code == 201
        assert wait_for(lambda: in_graph(server, "after"), 90), server.log()[-3000:]
        assert server.get("/healthz").json()["status"] == "ok"
        assert metric(server, "lineagegraph_store_up") == 1
        log = server.log()
        assert "Traceback" not in log
        assert log.count("POST /api/v1/lineage: disk full") == 3
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill(signal.SIGTERM)
        with contextlib.suppress(OSError, ValueError):  # never leave a server on the tmpfs
            os.kill(int((small_disk / "store" / "server.pid").read_text()), signal.SIGKILL)
