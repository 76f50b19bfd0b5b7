"""One local Spark session for the whole run (it takes ~15 s to start), and a lineage listener
per test writing to a fresh graph of the embedded store."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.settings import GraphSettings, Settings, SparkSettings
from lineagegraph.spark import SparkLineage, install

pytest.importorskip("pyspark", reason="the Spark listener needs pyspark (the spark extra)")
if shutil.which("java") is None:
    pytest.skip("no Java runtime: pyspark cannot start a JVM", allow_module_level=True)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Reuse a session another test module left active (Spark allows one per process), when
    it is ours (the tests name their urns by its app name); else start one. Tables go to a
    database of our own, so the warehouse setting does not matter."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.appName != "lineagegraph-tests":
        active.stop()  # e.g. the S3 inventory harvest's own session, left by a module before
        active = None
    session = active or (
        SparkSession.builder.master("local[1]")
        .appName("lineagegraph-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    session.conf.set("spark.sql.shuffle.partitions", "1")  # also on a session reused
    location = tmp_path_factory.mktemp("lgdb")
    session.sql(f"CREATE DATABASE IF NOT EXISTS lg LOCATION '{location}'")
    yield session
    if active is None:
        session.stop()


def make_settings(root: Path, data_dir: Path, **spark: Any) -> Settings:
    graph = GraphSettings(data_dir=data_dir, graph_name=f"spark_{uuid.uuid4().hex[:10]}")
    spark.setdefault("spool_dir", root / "spool")
    spark.setdefault("openlineage_dir", root / "openlineage")
    return Settings(graph=graph, spark=SparkSettings(**spark))


@pytest.fixture
def settings_for() -> Any:
    """make_settings, for tests that need settings of their own."""
    return make_settings


@pytest.fixture
def settings(tmp_path: Path, embedded_dir: Path) -> Settings:
    return make_settings(tmp_path, embedded_dir)


@pytest.fixture
def lineage(spark: Any, settings: Settings) -> Iterator[SparkLineage]:
    handle = install(spark, settings=settings)
    yield handle
    handle.stop()


@pytest.fixture
def graph(settings: Settings) -> Iterator[GraphStore]:
    """The graph the listener writes to (opened again: the embedded server is shared)."""
    store = open_store(settings.graph)
    yield store
    store.close()


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (bound, read, released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
