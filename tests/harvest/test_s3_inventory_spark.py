"""The Spark path of S3 Inventory: one local[1] session (slow to start, ~15 s) for the module.

Spark tasks read the data files from moto's S3 server with their own boto3 client, like
executors of a real cluster would; the driver writes only the merged tallies (roll-ups).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.client import BaseClient
from s3_fixtures import InventoryRow, datasets, files, new_bucket, s3_settings, write_inventory

from lineagegraph.errors import HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.s3.harvester import (
    harvest_s3_inventory,
    harvest_s3_inventory_spark,
)

pytest.importorskip("pyspark", reason="the Spark path needs pyspark (the spark extra)")

ROLLUP_KEYS = ("objects", "bytes")


def _rollups(store: GraphStore, bucket: str) -> dict[str, dict[str, int]]:
    return {
        urn: {k: v for k, v in d.items() if k.startswith(ROLLUP_KEYS)}
        for urn, d in datasets(store, bucket).items()
    }


def test_spark_rollups_equal_the_file_level_ones(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, spark: Any
) -> None:
    source = new_bucket(moto)
    url = write_inventory(
        moto,
        source,
        [
            [
                InventoryRow("t/dt=1/a.csv", 10),
                InventoryRow("t/dt=2/b.csv", 20, "STANDARD_IA"),
                InventoryRow("t/", 0),
                InventoryRow("t/dt=1/old.csv", 99, latest=False),
            ],
            [InventoryRow("u/c d.json", 5, "GLACIER"), InventoryRow("top", 1)],
        ],
        versioned=True,
    )
    settings = s3_settings(moto_endpoint)

    report = harvest_s3_inventory_spark(store, settings, url, spark)
    assert report.status == "success" and report.datasets == 3
    assert (report.stats.objects, report.stats.bytes, report.stats.folder_markers) == (4, 36, 1)
    assert files(store, source) == {}  # dataset level only
    by_spark = _rollups(store, source)
    assert by_spark[f"s3://{source}/t"] == {
        "objects": 2, "bytes": 30, "objects_STANDARD": 1, "bytes_STANDARD": 10,
        "objects_STANDARD_IA": 1, "bytes_STANDARD_IA": 20,
    }  # fmt: skip
    assert by_spark[f"s3://{source}/u"]["bytes_GLACIER"] == 5

    harvest_s3_inventory(store, settings, url)  # the single-machine path, from :File nodes
    assert _rollups(store, source) == by_spark


def test_spark_failure_names_the_file_and_writes_nothing(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, spark: Any
) -> None:
    source = new_bucket(moto)

    def wrong_md5(manifest: dict[str, Any]) -> None:
        manifest["files"][0]["MD5checksum"] = "f" * 32

    url = write_inventory(moto, source, [[InventoryRow("a/1")]], tamper=wrong_md5)
    with pytest.raises(HarvestError) as caught:
        harvest_s3_inventory_spark(store, s3_settings(moto_endpoint), url, spark)
    message = str(caught.value)
    assert message.startswith(f"Spark could not aggregate {url}: inventory data file s3://")
    assert message.endswith("corrupt or from another report; nothing from it was written")
    assert datasets(store, source) == {}
