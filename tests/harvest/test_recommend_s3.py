"""`lineagegraph recommend --apply` against real S3 servers over HTTP (moto; Ceph RGW when
LINEAGEGRAPH_TEST_RGW names one): the rules it puts are read back with
GetBucketLifecycleConfiguration, the bucket's existing rule kept, and a rerun converges."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest
from botocore.client import BaseClient
from click.testing import CliRunner, Result
from s3_fixtures import Fault, FaultProxy, new_bucket, s3_settings

from lineagegraph.cli import cli
from lineagegraph.graph.store import open_store
from lineagegraph.harvest.s3.harvester import harvest_s3
from lineagegraph.reports.recommend import rule_id
from lineagegraph.settings import GraphSettings

MIB, KIB, GIB = 2**20, 2**10, 2**30
KEEP = {
    "ID": "keep-me",
    "Filter": {"Prefix": "tmp/"},
    "Status": "Enabled",
    "Expiration": {"Days": 3},
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("LINEAGEGRAPH_") and name != "LINEAGEGRAPH_TEST_RGW":
            monkeypatch.delenv(name)
    return tmp_path


def recommend(home: Path, endpoint: str, *args: str) -> Result:
    env = {
        "LINEAGEGRAPH_S3__ENDPOINT_URL": endpoint,
        "LINEAGEGRAPH_S3__REGION": "us-east-1",
        "LINEAGEGRAPH_S3__ACCESS_KEY_ID": "test",
        "LINEAGEGRAPH_S3__SECRET_ACCESS_KEY": "test",
    }
    return CliRunner().invoke(cli, ["--data-dir", str(home / "store"), "recommend", *args], env=env)


def check_apply(home: Path, client: BaseClient, endpoint: str) -> None:
    bucket = new_bucket(client)
    client.put_bucket_lifecycle_configuration(
        Bucket=bucket, LifecycleConfiguration={"Rules": [KEEP]}
    )
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    for i in range(3):
        client.put_object(Bucket=bucket, Key=f"cold/part-{i}.bin", Body=b"x" * MIB)
    client.put_object(Bucket=bucket, Key="cold/part-0.bin", Body=b"y" * MIB)  # 1 noncurrent
    client.create_multipart_upload(Bucket=bucket, Key="cold/never.bin")
    with open_store(GraphSettings(data_dir=home / "store")) as store:
        assert harvest_s3(store, s3_settings(endpoint), bucket).status == "success"

    result = recommend(home, endpoint, "--bucket", bucket, "--format", "json", "--apply")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    [item] = found["recommendations"]
    assert (item["bucket"], item["prefix"], item["datasets"]) == (
        bucket,
        "cold/",
        [f"s3://{bucket}/cold"],
    )
    chosen = item["objects_rule"]
    assert (chosen["action"], chosen["target"], chosen["objects"]) == (
        "transition",
        "DEEP_ARCHIVE",
        3,
    )
    # By hand: 3 MiB at Standard now; after, each object's 32 KiB at Deep Archive's price and
    # 8 KiB at Standard's; 3 transitions at $0.05 per 1,000.
    before = 3 * MIB * Fraction("0.023") / GIB
    after = (3 * MIB + 3 * 32 * KIB) * Fraction("0.00099") / GIB + 3 * 8 * KIB * Fraction(
        "0.023"
    ) / GIB
    assert abs(Fraction(chosen["monthly_saving_usd"]) - (before - after)) <= Fraction(1, 10**9)
    assert Fraction(chosen["transition_requests_usd"]) == Fraction(3 * 5, 100_000)
    hidden = {a["action"]: a for a in item["hidden_rules"]}
    assert (
        hidden["expire-noncurrent"]["objects"] == 1 and hidden["expire-noncurrent"]["recommended"]
    )
    assert hidden["abort-uploads"]["objects"] == 1 and hidden["abort-uploads"]["bytes"] == 0
    assert not hidden["abort-uploads"]["recommended"]  # an upload of no parts costs nothing

    rules = client.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    by_id = {rule["ID"]: rule for rule in rules}
    assert set(by_id) == {"keep-me", rule_id("objects", "cold/"), rule_id("hidden", "cold/")}
    assert by_id["keep-me"]["Expiration"]["Days"] == 3  # the existing rule is kept
    assert by_id[rule_id("objects", "cold/")]["Transitions"] == [
        {"Days": 30, "StorageClass": "DEEP_ARCHIVE"}
    ]
    objects_filter = by_id[rule_id("objects", "cold/")]["Filter"]
    assert objects_filter.get("Prefix", objects_filter.get("And", {}).get("Prefix")) == "cold/"
    assert by_id[rule_id("hidden", "cold/")]["NoncurrentVersionExpiration"]["NoncurrentDays"] == 30
    assert found["lifecycle_configurations"][bucket]["Rules"][0]["ID"] == "keep-me"

    # A rerun replaces its own rules: the bucket holds the same three.
    again = recommend(home, endpoint, "--bucket", bucket, "--apply")
    assert again.exit_code == 0, again.output
    assert "aws s3api put-bucket-lifecycle-configuration --bucket " + bucket in again.stdout
    assert "transition to DEEP_ARCHIVE" in again.stdout
    rules = client.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert sorted(rule["ID"] for rule in rules) == sorted(by_id)


def test_recommend_apply_on_moto(home: Path, moto: BaseClient, moto_endpoint: str) -> None:
    check_apply(home, moto, moto_endpoint)


def test_recommend_apply_on_rgw(home: Path, rgw: BaseClient, rgw_endpoint: str) -> None:
    check_apply(home, rgw, rgw_endpoint)


def test_without_apply_nothing_changes(home: Path, moto: BaseClient, moto_endpoint: str) -> None:
    bucket = new_bucket(moto)
    moto.put_object(Bucket=bucket, Key="cold/a.bin", Body=b"x" * MIB)
    with open_store(GraphSettings(data_dir=home / "store")) as store:
        harvest_s3(store, s3_settings(moto_endpoint), bucket)
    result = recommend(home, moto_endpoint, "--bucket", bucket, "--to", "STANDARD_IA")
    assert result.exit_code == 0, result.output
    assert "transition to STANDARD_IA" in result.stdout
    error = moto.exceptions.ClientError
    with pytest.raises(error, match="NoSuchLifecycleConfiguration"):
        moto.get_bucket_lifecycle_configuration(Bucket=bucket)


def test_unreadable_lifecycle_rules_stop_before_anything_is_put(
    home: Path, moto: BaseClient, moto_endpoint: str, fault_proxy: FaultProxy
) -> None:
    bucket = new_bucket(moto)
    moto.put_object(Bucket=bucket, Key="cold/a.bin", Body=b"x" * MIB)
    with open_store(GraphSettings(data_dir=home / "store")) as store:
        harvest_s3(store, s3_settings(moto_endpoint), bucket)
    fault_proxy.add(Fault(lambda r: "lifecycle" in r.query, 403, "AccessDenied", "Denied"))

    result = recommend(home, fault_proxy.endpoint, "--bucket", bucket, "--apply")
    assert result.exit_code == 5
    assert f"reading the lifecycle rules of s3://{bucket}" in result.output
    assert not any(r.method == "PUT" for r in fault_proxy.requests)
