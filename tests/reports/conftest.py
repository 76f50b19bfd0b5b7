"""The `lake` fixture: a small S3 lake on each backend's fresh graph."""

from __future__ import annotations

import pytest
from lake import Lake

from lineagegraph.graph.store import GraphStore


@pytest.fixture
def lake(store: GraphStore) -> Lake:
    return Lake(store)
