"""A real `lineagegraph serve` process on a free port, and the real openlineage-python client
(imported by conftest.py and the tests)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests

SRC = Path(__file__).resolve().parents[2] / "src"
TOKEN = "t0ken-for-tests-only"


def wait_for(check: Callable[[], Any], seconds: float = 60) -> Any:
    """Poll `check()` until its value is truthy (serve ingests about twice a second) or time
    runs out; that last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """One `lineagegraph serve` subprocess over a data directory (restartable)."""

    data_dir: Path
    token: str | None = TOKEN
    port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(SRC), **self.extra_env,
               "LINEAGEGRAPH_GRAPH__DATA_DIR": str(self.data_dir),
               "LINEAGEGRAPH_SERVE__PORT": str(self.port)}  # fmt: skip
        if self.token:
            env["LINEAGEGRAPH_SERVE__TOKEN"] = self.token
        log = (self.data_dir.parent / f"serve-{self.port}.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "lineagegraph.cli", "serve"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.data_dir.parent,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited {self.process.returncode}: {self.log()}")
            try:
                requests.get(f"{self.url}/healthz", timeout=1).raise_for_status()
                return
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError(f"serve did not answer within 60 s: {self.log()}")

    @contextlib.contextmanager
    def running(self) -> Iterator[Server]:
        """The server started, and stopped cleanly on leaving (unless a test killed it)."""
        self.start()
        try:
            yield self
        finally:
            if self.process is not None and self.process.poll() is None:
                self.kill(signal.SIGTERM)

    def log(self) -> str:
        return (self.data_dir.parent / f"serve-{self.port}.log").read_text(errors="replace")

    def kill(self, signum: int = signal.SIGKILL) -> None:
        assert self.process is not None
        self.process.send_signal(signum)
        self.process.wait(timeout=60)

    def get(self, path: str, **params: Any) -> requests.Response:
        return requests.get(f"{self.url}{path}", params=params, headers=self.headers, timeout=30)

    def post(self, body: bytes | str, **headers: str) -> requests.Response:
        sent = {"Content-Type": "application/json", **self.headers, **headers}
        return requests.post(f"{self.url}/api/v1/lineage", data=body, headers=sent, timeout=30)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with Server(tmp_path / "store").running() as s:
        yield s


def client(server: Server, *, gzip: bool = True) -> Any:
    """openlineage-python's own client with its HttpTransport, an api key and gzip; no retries,
    so a refused event shows at once."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.http import HttpConfig, HttpTransport

    config: dict[str, Any] = {"url": server.url, "retry": {"total": 0, "connect": 0, "read": 0}}
    if server.token:
        config["auth"] = {"type": "api_key", "apiKey": server.token}
    if gzip:
        config["compression"] = "gzip"
    return OpenLineageClient(transport=HttpTransport(HttpConfig.from_dict(config)))


def run_event(job: str, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]]) -> Any:
    """A COMPLETE RunEvent built with the client's own classes."""
    from openlineage.client.event_v2 import (
        InputDataset,
        Job,
        OutputDataset,
        Run,
        RunEvent,
        RunState,
    )

    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=datetime.now(UTC).isoformat(),
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="airflow", name=job),
        producer="https://example.com/lineagegraph-tests",
        inputs=[InputDataset(namespace=ns, name=name) for ns, name in inputs],
        outputs=[OutputDataset(namespace=ns, name=name) for ns, name in outputs],
    )
