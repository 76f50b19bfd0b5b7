"""S3 Inventory reports (CSV.gz and Parquet, written in AWS's layout to moto's S3 server)."""

from __future__ import annotations

import gzip
import hashlib
from typing import Any

import pytest
from botocore.client import BaseClient
from click.testing import CliRunner
from s3_fixtures import (
    InventoryRow,
    datasets,
    deleted,
    files,
    new_bucket,
    put_many,
    run_of,
    s3_settings,
    write_inventory,
)

import lineagegraph
from lineagegraph.cli import cli
from lineagegraph.errors import ConfigError, HarvestError
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.s3 import S3InventoryHarvester
from lineagegraph.harvest.s3.harvester import harvest_s3, harvest_s3_inventory

T0 = 1_717_200_000_000  # 2024-06-01T00:00Z
KEYS = ["sales/dt=2024-05-01/a b.csv", "sales/dt=2024-05-02/c+d%e.csv", 'raw/caf\u00e9/"q".json']


@pytest.fixture
def settings(moto_endpoint: str):  # type: ignore[no-untyped-def]
    return s3_settings(moto_endpoint, page_size=2)


def test_csv_report_with_url_encoded_keys(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    url = write_inventory(
        moto,
        source,
        [
            [InventoryRow(KEYS[0], 10), InventoryRow(KEYS[1], 20, "STANDARD_IA")],
            [InventoryRow(KEYS[2], 5, "GLACIER", etag='"abc"'), InventoryRow("raw/", 0)],
        ],
    )
    report = harvest_s3_inventory(store, settings, url)

    assert report.status == "success" and report.errors == []
    assert (report.stats.objects, report.stats.bytes, report.stats.folder_markers) == (3, 35, 1)
    got = files(store, source)
    assert set(got) == set(KEYS)  # decoded: '+' was a space, %2B a plus, %25 a percent
    f = got[KEYS[1]]
    assert (f["size"], f["storage_class"]) == (20, "STANDARD_IA")
    assert f["last_modified"] == 1_717_199_941_000  # 2024-05-31T23:59:01Z
    assert f["first_seen"] == f["last_seen"] == T0  # seen when the report was taken
    assert all("etag" not in f for f in got.values())  # the inventory has it; no query reads it
    sales = datasets(store, source)[f"s3://{source}/sales"]
    assert (sales["objects"], sales["bytes"], sales["bytes_STANDARD_IA"]) == (2, 30, 20)
    run = run_of(store, report.run_id)
    assert (run["scope"], run["count_inventory_files"], run["watermark"]) == (
        f"s3://{source}/",
        2,
        T0,
    )


def test_an_inventory_runs_as_a_source_of_the_python_api(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    url = write_inventory(moto, source, [[InventoryRow("in/a.csv", 4), InventoryRow("b.csv", 6)]])
    ticks: list[int] = []
    harvester = S3InventoryHarvester(manifest=url, prefix="in/")
    [report] = lineagegraph.harvest_source(
        harvester, store, settings, progress=lambda tick: ticks.append(tick.done)
    )

    assert (report.status, report.system, report.scope) == ("success", "s3", f"s3://{source}/in/")
    assert report.counts["files"] == 1 and report.counts["skipped_outside_prefix"] == 1
    assert report.summary.startswith(f"s3://{source}/in/: 1 objects (4 B)") and ticks[-1] == 1
    assert set(files(store, source)) == {"in/a.csv"}
    assert S3InventoryHarvester().not_configured(settings) == "no inventory manifest"
    with pytest.raises(ConfigError, match=r"manifest\.json"):
        lineagegraph.harvest_source(S3InventoryHarvester(), store, settings)


def test_parquet_report_skips_old_versions_and_delete_markers(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    url = write_inventory(moto, source, [[
        InventoryRow("p/a%2Bb c.parquet", 7, "INTELLIGENT_TIERING"),
        InventoryRow("p/old.csv", 3, latest=False),
        InventoryRow("p/gone.csv", latest=True, delete_marker=True),
    ]], file_format="Parquet", versioned=True)  # fmt: skip
    report = harvest_s3_inventory(store, settings, url)

    got = files(store, source)
    assert set(got) == {"p/a%2Bb c.parquet"}  # Parquet keys are not URL-encoded: kept as stored
    assert got["p/a%2Bb c.parquet"]["last_modified"] == 1_717_199_941_000
    run = run_of(store, report.run_id)
    assert (run["count_skipped_old_versions"], run["count_skipped_delete_markers"]) == (1, 1)
    assert datasets(store, source)[f"s3://{source}/p"]["objects_INTELLIGENT_TIERING"] == 1


def test_versioned_csv_report_and_prefix_filter(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    url = write_inventory(moto, source, [[
        InventoryRow("in/new.csv"), InventoryRow("in/old.csv", latest=False),
        InventoryRow("in/dm.csv", delete_marker=True), InventoryRow("out/x.csv"),
    ]], versioned=True)  # fmt: skip
    report = harvest_s3_inventory(store, settings, url, "in/")
    assert set(files(store, source)) == {"in/new.csv"}
    run = run_of(store, report.run_id)
    assert run["scope"] == f"s3://{source}/in/" and run["count_skipped_outside_prefix"] == 1


def test_soft_deletes_as_of_the_report_never_undoing_a_newer_listing(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    rows = [InventoryRow(f"k/{i:02}") for i in range(20)]
    harvest_s3_inventory(store, settings, write_inventory(moto, source, [rows], created=T0))
    newer = T0 + 86_400_000
    report = harvest_s3_inventory(
        store, settings, write_inventory(moto, source, [rows[1:]], created=newer)
    )
    assert report.soft_deleted == 1 and deleted(store, source)["k/00"] == newer

    put_many(moto, source, {"live/x": (b"x", "STANDARD")})
    harvest_s3(store, settings, source, ["live/"])  # a listing today, newer than any report
    stale = write_inventory(moto, source, [rows[1:]], created=newer + 1)
    report = harvest_s3_inventory(store, settings, stale)
    assert report.status == "success" and deleted(store, source)["live/x"] is None


def test_a_report_older_than_the_first_listing_moves_first_seen_back_only(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    put_many(moto, source, {"k/a.csv": (b"a", "STANDARD")})
    harvest_s3(store, settings, source)  # listed today
    listed_file, listed_dataset = files(store, source)["k/a.csv"], datasets(store, source)
    report = harvest_s3_inventory(
        store, settings, write_inventory(moto, source, [[InventoryRow("k/a.csv")]], created=T0)
    )
    assert report.status == "success"
    f, dataset = files(store, source)["k/a.csv"], datasets(store, source)[f"s3://{source}/k"]
    assert listed_file["first_seen"] > T0  # the report predates the listing
    assert (f["first_seen"], f["last_seen"]) == (T0, listed_file["last_seen"])
    listed = listed_dataset[f"s3://{source}/k"]["last_seen"]
    assert (dataset["first_seen"], dataset["last_seen"]) == (T0, listed)
    assert f.get("deleted_at") is None


# --- a report that cannot be trusted writes nothing -------------------------------------------


def _nothing_written(store: GraphStore, bucket: str) -> None:
    assert files(store, bucket) == {}


def test_manifest_not_matching_its_checksum(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    url = write_inventory(moto, source, [[InventoryRow("a")]])
    bucket, key = url[5:].split("/", 1)
    moto.put_object(Bucket=bucket, Key=key, Body=b'{"files": []}')  # replaced after checksumming
    with pytest.raises(HarvestError) as caught:
        harvest_s3_inventory(store, settings, url)
    expected = hashlib.md5(b'{"files": []}').hexdigest()
    assert str(caught.value).startswith(f"manifest {url} does not match s3://{bucket}/")
    assert f"manifest.checksum (MD5 {expected}, expected " in str(caught.value)
    assert str(caught.value).endswith(
        "the report is corrupt or still being written; nothing was read"
    )
    _nothing_written(store, source)


def test_missing_checksum_file(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    url = write_inventory(moto, new_bucket(moto), [[InventoryRow("a")]])
    bucket, key = url[5:].split("/", 1)
    checksum = key.replace("manifest.json", "manifest.checksum")
    moto.delete_object(Bucket=bucket, Key=checksum)
    with pytest.raises(HarvestError, match="does not exist") as caught:
        harvest_s3_inventory(store, settings, url)
    assert str(caught.value) == (
        f"s3://{bucket}/{checksum} does not exist (reading s3://{bucket}/{checksum})"
    )


def test_a_missing_data_file_is_skipped_and_the_others_written(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    harvest_s3_inventory(store, settings, write_inventory(moto, source, [[InventoryRow("b")]]))
    url = write_inventory(moto, source, [[InventoryRow("a")], [InventoryRow("b")]], created=T0 + 1)
    destination = url[5:].split("/", 1)[0]
    data_key = f"{source}/daily/{T0 + 1}/data/part-1.csv.gz"
    moto.delete_object(Bucket=destination, Key=data_key)

    report = harvest_s3_inventory(store, settings, url, allow_mass_delete=True)
    where = f"s3://{destination}/{data_key}"
    assert report.status == "partial"
    assert report.errors == [f"{where} does not exist (reading {where})"]
    assert deleted(store, source) == {"a": None, "b": None}  # b's file is gone, not b
    run = run_of(store, report.run_id)
    assert (run["status"], run["count_inventory_files_failed"]) == ("partial", 1)


def test_data_file_not_matching_its_md5_leaves_a_partial_run(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    good = [InventoryRow(f"g/{i:02}") for i in range(20)]
    harvest_s3_inventory(store, settings, write_inventory(moto, source, [good]))

    def wrong_md5(manifest: dict[str, Any]) -> None:
        manifest["files"][1]["MD5checksum"] = "0" * 32

    url = write_inventory(
        moto, source, [good[:10], [InventoryRow("bad/1")]], created=T0 + 1, tamper=wrong_md5
    )
    report = harvest_s3_inventory(store, settings, url, allow_mass_delete=True)
    destination = url[5:].split("/", 1)[0]
    assert report.status == "partial"
    assert len(report.errors) == 1 and report.errors[0].startswith(
        f"inventory data file s3://{destination}/{source}/daily/{T0 + 1}/data/part-1.csv.gz ("
    )
    assert report.errors[0].endswith(
        f"MD5 {'0' * 32}): corrupt or from another report; nothing from it was written"
    )
    state = deleted(store, source)
    assert "bad/1" not in state  # the unverified file wrote nothing
    assert set(state.values()) == {None}  # and the incomplete report deleted nothing


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"fileFormat": "ORC"}, "manifest {url} has fileFormat 'ORC'; lineagegraph reads CSV "
         "and Parquet inventories: configure the report in one of those"),
        ({"fileSchema": "Bucket, Key, StorageClass"}, "manifest {url} fileSchema lacks size: "
         "Bucket, Key and Size are needed (Size is an optional field of the inventory "
         "configuration)"),
        ({"sourceBucket": None}, "manifest {url} lacks sourceBucket: not an S3 Inventory manifest"),
        ({"creationTimestamp": "yesterday"}, "manifest {url} has a malformed creationTimestamp "
         "or files entry (ValueError("),
    ],
)  # fmt: skip
def test_manifests_lineagegraph_cannot_read_are_refused(
    store: GraphStore,
    moto: BaseClient,
    settings,
    change: dict[str, Any],
    message: str,  # type: ignore[no-untyped-def]
) -> None:
    def apply(manifest: dict[str, Any]) -> None:
        for key, value in change.items():
            if value is None:
                del manifest[key]
            else:
                manifest[key] = value

    source = new_bucket(moto)
    url = write_inventory(moto, source, [[InventoryRow("a")]], tamper=apply)
    with pytest.raises(HarvestError) as caught:
        harvest_s3_inventory(store, settings, url)
    assert str(caught.value).startswith(message.format(url=url))
    _nothing_written(store, source)


def test_rows_of_another_bucket_are_refused(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    url = write_inventory(moto, source, [[InventoryRow("a"), InventoryRow("b", bucket="other")]])
    report = harvest_s3_inventory(store, settings, url)
    assert report.status == "partial"
    assert report.errors[0].endswith(
        f"part-0.csv.gz: 1 rows skipped: row 2: lists bucket 'other', but manifest {url} is for "
        f"{source!r}"
    )
    assert set(files(store, source)) == {"a"}


def test_data_file_that_is_not_gzip(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)

    def plain_text(manifest: dict[str, Any]) -> None:
        entry = manifest["files"][0]
        destination = manifest["destinationBucket"].removeprefix("arn:aws:s3:::")
        body = gzip.decompress(moto.get_object(Bucket=destination, Key=entry["key"])["Body"].read())
        moto.put_object(Bucket=destination, Key=entry["key"], Body=body)
        entry.update(size=len(body), MD5checksum=hashlib.md5(body).hexdigest())

    url = write_inventory(moto, source, [[InventoryRow("a")]], tamper=plain_text)
    report = harvest_s3_inventory(store, settings, url)
    assert report.status == "partial" and "part-0.csv.gz is not a gzip CSV" in report.errors[0]
    _nothing_written(store, source)


def test_manifest_must_be_an_s3_url(store: GraphStore, settings) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HarvestError, match=r"--manifest must be an s3:// URL of a manifest.json"):
        harvest_s3_inventory(store, settings, "/tmp/manifest.json")


def test_cli_inventory(tmp_path, moto: BaseClient, moto_endpoint: str) -> None:  # type: ignore[no-untyped-def]
    source = new_bucket(moto)
    url = write_inventory(moto, source, [[InventoryRow("x/1.csv", 3)]])
    env = {
        "LINEAGEGRAPH_S3__ENDPOINT_URL": moto_endpoint,
        "LINEAGEGRAPH_S3__ACCESS_KEY_ID": "test",
        "LINEAGEGRAPH_S3__SECRET_ACCESS_KEY": "test",
    }
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "store"), "harvest", "s3-inventory"]
    ok = runner.invoke(cli, [*base, "--manifest", url], env=env)
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith(f"s3://{source}/: 1 objects (3 B), 0 folder markers, 1 datasets")
    missing = runner.invoke(cli, [*base, "-m", url.replace("manifest.json", "nope.json")], env=env)
    assert missing.exit_code == 5 and "nope.json does not exist" in missing.stderr
    usage = runner.invoke(cli, [*base, "-m", url, "--spark", "local[1]", "--allow-mass-delete"])
    assert usage.exit_code == 2 and "--allow-mass-delete has no effect with --spark" in usage.output


def replace_data_file(moto: BaseClient, manifest: dict[str, Any], index: int, body: bytes) -> None:
    """Put `body` in place of a data file, with the manifest's size and MD5 to match."""
    entry = manifest["files"][index]
    destination = manifest["destinationBucket"].removeprefix("arn:aws:s3:::")
    moto.put_object(Bucket=destination, Key=entry["key"], Body=body)
    entry.update(size=len(body), MD5checksum=hashlib.md5(body).hexdigest())


def test_bad_rows_and_files_are_skipped_and_the_rest_written(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)
    before = [InventoryRow(k) for k in ("a/1", "a/3", "a/7", "b/1", "c/1")]
    harvest_s3_inventory(store, settings, write_inventory(moto, source, [before]))
    tail = b',"2024-05-31T23:59:01.000Z","e","STANDARD"\n'
    rows = [
        b'"%s","a/1","10"' % source.encode() + tail,
        b'"%s","a/2","10"\n' % source.encode(),  # 2: too few fields
        b'"%s","a/3","ten"' % source.encode() + tail,  # 3
        b'"%s","a/4","10","yesterday","e","STANDARD"\n' % source.encode(),  # 4
        b'"%s","a/%%FF","10"' % source.encode() + tail,  # 5: %FF is no UTF-8
        b'"%s","a/\xff","10"' % source.encode() + tail,  # 6: neither is the raw byte
        b'"%s","a/7","10"' % source.encode() + tail,
    ]

    def damage(manifest: dict[str, Any]) -> None:
        replace_data_file(moto, manifest, 0, gzip.compress(b"".join(rows)))
        replace_data_file(moto, manifest, 2, b"".join(rows))  # not gzip

    url = write_inventory(
        moto,
        source,
        [[], [InventoryRow("b/1")], [InventoryRow("c/1")]],
        created=T0 + 1,
        tamper=damage,
    )
    report = harvest_s3_inventory(store, settings, url, allow_mass_delete=True)

    data = url.removesuffix("manifest.json") + "data"
    assert report.status == "partial"
    assert sorted(report.errors) == [
        f"inventory data file {data}/part-0.csv.gz: 5 rows skipped: "
        "row 2: 3 fields, the manifest's fileSchema has 6; "
        "row 3: Size 'ten' is not a number of bytes; "
        "row 4: LastModifiedDate 'yesterday' is not an ISO 8601 time; "
        "row 5: S3 Inventory key is not URL-encoded UTF-8: 'a/%FF'; "
        "row 6: not UTF-8",
        f"inventory data file {data}/part-2.csv.gz is not a gzip CSV (after row 0): "
        "Not a gzipped file (b'\"l')",
    ]
    assert report.stats.objects == 3  # a/1, a/7, b/1
    state = deleted(store, source)
    assert set(state) >= {"a/1", "a/7", "b/1"} and set(state.values()) == {None}
    run = run_of(store, report.run_id)
    assert (run["count_skipped_bad_rows"], run["count_inventory_files_failed"]) == (5, 1)


def test_a_bad_parquet_file_is_skipped_and_the_others_written(
    store: GraphStore,
    moto: BaseClient,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    source = new_bucket(moto)

    def damage(manifest: dict[str, Any]) -> None:
        replace_data_file(moto, manifest, 1, b"PAR1 this is no parquet PAR1")

    url = write_inventory(
        moto,
        source,
        [[InventoryRow("a")], [InventoryRow("b")]],
        file_format="Parquet",
        tamper=damage,
    )
    report = harvest_s3_inventory(store, settings, url)
    assert report.status == "partial" and len(report.errors) == 1
    assert "part-1.parquet is not readable Parquet (after row 0)" in report.errors[0]
    assert set(files(store, source)) == {"a"}
