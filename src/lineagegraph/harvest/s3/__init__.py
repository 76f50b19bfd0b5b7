"""The S3 harvesters: bucket listings and S3 Inventory reports to :File nodes PART_OF their
folded :Dataset. client.py makes the client and words its errors, listing.py and inventory.py
turn a listing or a report into pages, scan.py writes pages as lister threads bring them,
settle.py soft-deletes and rolls up, inventory_spark.py tallies a report in Spark, and
harvester.py runs it all (`S3Harvester`, `S3InventoryHarvester`). access_logs.py reads server
access logs and CloudTrail files as object reads, which access.py (`S3AccessHarvester`) counts
as consumption by principals."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lineagegraph.harvest.s3.harvester import S3Harvester, S3InventoryHarvester

__all__ = ["S3Harvester", "S3InventoryHarvester"]


def __getattr__(name: str) -> Any:
    """The harvester loads on first use: lineagegraph.settings imports this package's
    settings module, which must not bring the harvester (and lineagegraph.settings) with it."""
    if name in __all__:
        return getattr(importlib.import_module("lineagegraph.harvest.s3.harvester"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
