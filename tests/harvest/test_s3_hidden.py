"""Hidden cost: noncurrent versions, delete markers and incomplete multipart uploads, harvested
from a real S3 server over HTTP (moto; Ceph RGW when LINEAGEGRAPH_TEST_RGW names one), stored on
their datasets and priced by the cost report as rows of their own, exactly."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from botocore.client import BaseClient
from s3_fixtures import (
    Fault,
    FaultProxy,
    InventoryRow,
    datasets,
    files,
    new_bucket,
    run_of,
    s3_settings,
    write_inventory,
)

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.s3.harvester import harvest_s3, harvest_s3_inventory
from lineagegraph.reports.options import build_options
from lineagegraph.reports.orphans import run_report
from lineagegraph.settings import ReportSettings

GIB = 2**30
STANDARD = Fraction("0.023")  # config/prices.toml, first tier: these rows are far below 50 TB
STANDARD_IA = Fraction("0.0125")
PART_1, PART_2 = 5 * 2**20, 2**20
A_V1, B_V1 = 300_000, 200_000


def make_hidden_cost(client: BaseClient, bucket: str) -> dict[str, str]:
    """A versioned bucket: v/a.csv overwritten (one noncurrent version), v/b.csv deleted (a
    noncurrent version and a delete marker), v/c.csv in Standard-IA overwritten (a noncurrent
    10-byte version billed at 128 KiB), and an upload to up/big.bin never completed."""
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    old = client.put_object(Bucket=bucket, Key="v/a.csv", Body=b"a" * A_V1)["VersionId"]
    client.put_object(Bucket=bucket, Key="v/a.csv", Body=b"a" * 1000)
    client.put_object(Bucket=bucket, Key="v/b.csv", Body=b"b" * B_V1)
    client.delete_object(Bucket=bucket, Key="v/b.csv")
    for size in (10, 20):
        client.put_object(
            Bucket=bucket, Key="v/c.csv", Body=b"c" * size, StorageClass="STANDARD_IA"
        )
    upload = client.create_multipart_upload(Bucket=bucket, Key="up/big.bin")["UploadId"]
    for number, size in ((1, PART_1), (2, PART_2)):
        client.upload_part(
            Bucket=bucket, Key="up/big.bin", UploadId=upload, PartNumber=number, Body=b"u" * size
        )
    return {"old_a": old, "upload": upload}


def cost_rows(store: GraphStore) -> dict[tuple[str, str], dict[str, Any]]:
    options = build_options(ReportSettings(), "cost", by="dataset-class")
    report = run_report(store, options)
    rows = [dict(zip(report.columns, row, strict=True)) for row in report.rows]
    return {(r["dataset"], r["storage_class"]): r for r in rows}


def exact(amount: Decimal, expected: Fraction) -> bool:
    return abs(Fraction(amount) - expected) <= Fraction(1, 10**9)


def check_hidden_cost(store: GraphStore, client: BaseClient, endpoint: str) -> None:
    bucket = new_bucket(client)
    made = make_hidden_cost(client, bucket)
    report = harvest_s3(store, s3_settings(endpoint, page_size=2), bucket)
    assert report.status == "success", report.errors

    v, up = f"s3://{bucket}/v", f"s3://{bucket}/up"
    got = datasets(store, bucket)
    assert got[v]["hidden_noncurrent_objects_STANDARD"] == 2
    assert got[v]["hidden_noncurrent_bytes_STANDARD"] == A_V1 + B_V1
    assert got[v]["hidden_noncurrent_small_objects_STANDARD_IA"] == 1
    assert (got[v]["hidden_delete_markers"], got[v]["hidden_delete_marker_bytes"]) == (1, 7)
    assert got[up]["hidden_upload_parts_STANDARD"] == 2
    assert got[up]["hidden_upload_bytes_STANDARD"] == PART_1 + PART_2
    run = run_of(store, report.run_id)
    assert (run["count_noncurrent_versions"], run["count_delete_markers"]) == (3, 1)
    assert run["count_incomplete_uploads"] == 1

    # The cost report's rows, by hand: USD per GB-month x bytes / 2^30 (IA: 128 KiB minimum).
    rows = cost_rows(store)
    expected = {
        (v, "STANDARD"): (1, 1000 * STANDARD),
        (v, "STANDARD_IA"): (1, 131_072 * STANDARD_IA),
        (v, "STANDARD (noncurrent versions)"): (2, (A_V1 + B_V1) * STANDARD),
        (v, "STANDARD_IA (noncurrent versions)"): (1, 131_072 * STANDARD_IA),
        (v, "STANDARD (delete markers)"): (1, len(b"v/b.csv") * STANDARD),
        (up, "STANDARD (incomplete uploads)"): (1, (PART_1 + PART_2) * STANDARD),
    }
    assert set(rows) == set(expected)
    for key, (objects, usd_times_gib) in expected.items():
        assert rows[key]["objects"] == objects, key
        assert exact(rows[key]["monthly_usd"], usd_times_gib / GIB), key
        assert rows[key]["orphaned_usd"] == 0 or "(" not in key[1]
    upload_row = rows[up, "STANDARD (incomplete uploads)"]
    assert upload_row["last_read"] is None and upload_row["gib"] == Decimal(6) / 1024

    # Rerun after the old version of v/a.csv is deleted and the upload aborted: they disappear.
    client.delete_object(Bucket=bucket, Key="v/a.csv", VersionId=made["old_a"])
    client.abort_multipart_upload(Bucket=bucket, Key="up/big.bin", UploadId=made["upload"])
    assert harvest_s3(store, s3_settings(endpoint), bucket).status == "success"
    again = harvest_s3(store, s3_settings(endpoint), bucket)  # a second rerun changes nothing
    assert again.status == "success"
    rows = cost_rows(store)
    assert (up, "STANDARD (incomplete uploads)") not in rows
    assert rows[v, "STANDARD (noncurrent versions)"]["objects"] == 1
    assert exact(rows[v, "STANDARD (noncurrent versions)"]["monthly_usd"], B_V1 * STANDARD / GIB)
    got = datasets(store, bucket)
    assert not any(k.startswith("hidden_upload") for k in got[up])
    assert got[v]["hidden_noncurrent_bytes_STANDARD"] == B_V1


def test_hidden_cost_on_moto(store: GraphStore, moto: BaseClient, moto_endpoint: str) -> None:
    check_hidden_cost(store, moto, moto_endpoint)


def test_hidden_cost_on_rgw(store: GraphStore, rgw: BaseClient, rgw_endpoint: str) -> None:
    check_hidden_cost(store, rgw, rgw_endpoint)


def test_an_unversioned_bucket_is_listed_as_before(
    store: GraphStore, moto: BaseClient, moto_endpoint: str
) -> None:
    bucket = new_bucket(moto)
    moto.put_object(Bucket=bucket, Key="x/a.csv", Body=b"1")
    report = harvest_s3(store, s3_settings(moto_endpoint), bucket)
    assert report.status == "success"
    assert not any(k.startswith("hidden_") for k in datasets(store, bucket)[f"s3://{bucket}/x"])
    assert "count_noncurrent_versions" not in run_of(store, report.run_id)


def test_versioning_unreadable_lists_as_before_and_keeps_earlier_hidden_cost(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, fault_proxy: FaultProxy
) -> None:
    bucket = new_bucket(moto)
    make_hidden_cost(moto, bucket)
    assert harvest_s3(store, s3_settings(moto_endpoint), bucket).status == "success"
    fault_proxy.add(Fault(lambda r: "versioning" in r.query, 403, "AccessDenied", "Access Denied"))
    report = harvest_s3(store, s3_settings(fault_proxy.endpoint), bucket)

    assert report.status == "success"
    assert "GetBucketVersioning" in report.warnings[0]
    assert not any("versions" in r.query for r in fault_proxy.requests)  # ListObjectsV2 only
    got = datasets(store, bucket)[f"s3://{bucket}/v"]
    assert got["hidden_noncurrent_bytes_STANDARD"] == A_V1 + B_V1  # the earlier run's stands


@pytest.mark.parametrize("file_format", ["CSV", "Parquet"])
def test_inventory_rows_that_are_not_current_objects_are_hidden_cost(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, file_format: str
) -> None:
    source = new_bucket(moto)
    rows = [
        InventoryRow("d/now.csv", 500),
        InventoryRow("d/now.csv", 700_000, "GLACIER", latest=False),
        InventoryRow("d/gone.csv", 0, latest=True, delete_marker=True),
        InventoryRow("d/gone.csv", 40, latest=False),
    ]
    url = write_inventory(moto, source, [rows], versioned=True, file_format=file_format)
    settings = s3_settings(moto_endpoint)
    report = harvest_s3_inventory(store, settings, url)
    assert report.status == "success"

    d = f"s3://{source}/d"
    assert set(files(store, source)) == {"d/now.csv"}
    got = datasets(store, source)[d]
    assert (got["hidden_noncurrent_bytes_GLACIER"], got["hidden_noncurrent_bytes_STANDARD"]) == (
        700_000,
        40,
    )
    assert got["hidden_delete_markers"] == 1
    rows_of = cost_rows(store)
    # Glacier: 32 KiB per object at its rate and 8 KiB at Standard's, beside the bytes.
    glacier = (700_000 + 32_768) * Fraction("0.0036") + 8_192 * STANDARD
    assert exact(rows_of[d, "GLACIER (noncurrent versions)"]["monthly_usd"], glacier / GIB)
    assert exact(rows_of[d, "STANDARD (delete markers)"]["monthly_usd"], 10 * STANDARD / GIB)

    # The next inventory no longer has them: they disappear.
    url = write_inventory(moto, source, [[InventoryRow("d/now.csv", 500)]], versioned=True,
                          file_format=file_format, created=1_717_300_000_000)  # fmt: skip
    assert harvest_s3_inventory(store, settings, url).status == "success"
    assert {k[1] for k in cost_rows(store) if k[0] == d} == {"STANDARD"}
