"""docker-compose.yml's `lineagegraph` service, checked as far as this machine allows (no
Docker engine here): the file parses, its command is one `lineagegraph serve` accepts, its
environment makes valid settings, and that command serves when run directly."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from serve_fixtures import SRC, free_port

from lineagegraph.cli import cli
from lineagegraph.settings import load_settings, with_overrides

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICE = COMPOSE["services"]["lineagegraph"]
TOKEN = "compose-test-token"


def environment(**given: str) -> dict[str, str]:
    """The service's environment as Compose interpolates it (`${X:-default}`, `${X:?error}`)."""

    def value(match: re.Match[str]) -> str:
        name, op, rest = match.group(1), match.group(2), match.group(3)
        if name in given:
            return given[name]
        if op == ":?":
            raise KeyError(f"compose would refuse to start: {rest}")
        return rest

    pattern = re.compile(r"\$\{(\w+)(:-|:\?)([^}]*)\}")
    return {k: pattern.sub(value, str(v)) for k, v in SERVICE["environment"].items()}


def dockerfile(instruction: str) -> Any:
    [line] = [
        x for x in (ROOT / "Dockerfile").read_text().splitlines() if x.startswith(instruction + " ")
    ]
    return yaml.safe_load(line.partition(" ")[2])  # a JSON-form instruction is a YAML list


def test_the_service_runs_lineagegraph_serve_with_options_it_accepts() -> None:
    assert SERVICE["build"] == "." and set(COMPOSE["services"]) == {"neo4j", "lineagegraph"}
    assert dockerfile("ENTRYPOINT") == ["lineagegraph"]
    assert dockerfile("CMD") == SERVICE["command"]
    command = SERVICE["command"]
    assert command[0] == "serve"
    context = cli.commands["serve"].make_context("serve", list(command[1:]))
    assert (context.params["host"], context.params["port"]) == ("0.0.0.0", 5000)
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
    assert SERVICE["depends_on"]["neo4j"]["condition"] == "service_healthy"


def test_its_environment_makes_valid_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(KeyError, match="set LINEAGEGRAPH_TOKEN"):
        environment()
    for name in list(os.environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    for name, value in environment(LINEAGEGRAPH_TOKEN=TOKEN).items():
        monkeypatch.setenv(name, value)
    settings = with_overrides(load_settings(None), "serve", host="0.0.0.0")
    assert settings.graph.uri == "bolt://neo4j:7687"
    assert settings.graph.password is not None
    assert settings.graph.password.get_secret_value() == "lineagegraph"
    assert settings.serve.token is not None and str(settings.graph.data_dir) == "/data"


def test_the_command_serves_when_run_directly(tmp_path: Path) -> None:
    """The service's command on the embedded store (no Neo4j here) on all interfaces."""
    port = free_port()
    command = [*SERVICE["command"][:-1], str(port)]
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "LINEAGEGRAPH_SERVE__TOKEN": TOKEN,
        "LINEAGEGRAPH_GRAPH__DATA_DIR": str(tmp_path / "store"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "lineagegraph.cli", *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline, answer = time.monotonic() + 60, None
        while answer is None and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                answer = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            except requests.ConnectionError:
                time.sleep(0.1)
        assert answer is not None and answer.json()["status"] == "ok"
        refused = requests.get(f"http://127.0.0.1:{port}/api/v1/namespaces", timeout=5)
        assert refused.status_code == 401
    finally:
        process.terminate()
        process.wait(timeout=60)
