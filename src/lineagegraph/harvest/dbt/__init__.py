"""dbt as a source: a project's artifacts (manifest, catalog, run results) as lineage, columns
and test results (docs/dbt.md)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lineagegraph.harvest.dbt.harvester import (
        DbtHarvester,
        DbtReport,
        harvest_dbt,
        read_project,
    )

__all__ = ["DbtHarvester", "DbtReport", "harvest_dbt", "read_project"]


def __getattr__(name: str) -> Any:
    """The harvester loads on first use: lineagegraph.settings imports this package's
    settings module, which must not bring the harvester (and lineagegraph.settings) with it."""
    if name in __all__:
        return getattr(importlib.import_module("lineagegraph.harvest.dbt.harvester"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
