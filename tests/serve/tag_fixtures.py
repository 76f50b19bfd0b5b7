"""A running `serve` over the tag tests' graph with `pii=email` stated on its raw EMAIL column."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from serve_fixtures import Server

from lineagegraph.graph.store import open_store
from lineagegraph.model import TagFact
from lineagegraph.settings import GraphSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "questions"))
from test_tags import EMAIL, graph, write  # the graph of the tag tests

T0 = 1_700_000_000_000


@contextmanager
def tagged_server(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp(name) / "store"
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.init_schema()
        write(store, [*graph(), TagFact(EMAIL, "pii", "email", "manual", "ana", T0, "e-mail")])
    running = Server(data_dir)
    running.start()
    try:
        yield running
    finally:
        running.kill(signal.SIGTERM)
