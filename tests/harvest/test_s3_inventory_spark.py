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


def _hidden(store: GraphStore, bucket: str) -> dict[str, dict[str, int]]:
    """The hidden cost stored per dataset (when it was seen aside)."""
    found = {
        urn: {k: v for k, v in d.items() if k.startswith("hidden_") and k != "hidden_seen"}
        for urn, d in datasets(store, bucket).items()
    }
    return {urn: props for urn, props in found.items() if props}


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
                InventoryRow("t/", 0, latest=False),  # a folder marker's old version: no cost
            ],
            [
                InventoryRow("u/c d.json", 5, "GLACIER"),
                InventoryRow("top", 1),
                InventoryRow("t/dt=3/b.csv", 7, "GLACIER", latest=False),
                InventoryRow("gone/x.csv", delete_marker=True),  # only hidden cost left
                InventoryRow("gone/x.csv", 40, latest=False),
            ],
        ],
        versioned=True,
    )
    settings = s3_settings(moto_endpoint)

    report = harvest_s3_inventory_spark(store, settings, url, spark)
    assert report.status == "success" and report.datasets == 4
    assert _hidden(store, source) == {
        f"s3://{source}/t": {
            "hidden_noncurrent_objects_STANDARD": 1, "hidden_noncurrent_bytes_STANDARD": 99,
            "hidden_noncurrent_small_objects_STANDARD": 1,
            "hidden_noncurrent_small_bytes_STANDARD": 99,
            "hidden_noncurrent_objects_GLACIER": 1, "hidden_noncurrent_bytes_GLACIER": 7,
            "hidden_noncurrent_small_objects_GLACIER": 1,
            "hidden_noncurrent_small_bytes_GLACIER": 7,
        },
        f"s3://{source}/gone": {
            "hidden_delete_markers": 1, "hidden_delete_marker_bytes": len("gone/x.csv"),
            "hidden_noncurrent_objects_STANDARD": 1, "hidden_noncurrent_bytes_STANDARD": 40,
            "hidden_noncurrent_small_objects_STANDARD": 1,
            "hidden_noncurrent_small_bytes_STANDARD": 40,
        },
    }  # fmt: skip
    hidden_by_spark = _hidden(store, source)
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
    assert _hidden(store, source) == hidden_by_spark


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
