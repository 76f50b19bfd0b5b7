"""The S3 listing harvester against moto's real S3 server (and a fault proxy in front of it).

Every test writes to a real store (the `store` fixture: embedded FalkorDB, Neo4j with Docker)
with batch size 3, and lists with a page size of 2, so batches and pages are crossed.
"""

from __future__ import annotations

import io
import re

import botocore.utils
import pytest
from botocore.client import BaseClient
from click.testing import CliRunner
from s3_fixtures import (
    Fault,
    FaultProxy,
    client_for,
    datasets,
    deleted,
    files,
    free_port,
    is_listing,
    new_bucket,
    put_many,
    run_of,
    s3_settings,
)

from lineagegraph.cli import cli
from lineagegraph.cli.progress import TickLine
from lineagegraph.errors import ConfigError
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.s3 import settle
from lineagegraph.harvest.s3.client import parse_timestamp
from lineagegraph.harvest.s3.harvester import harvest_s3, human_bytes, ticks
from lineagegraph.harvest.s3.listing import distinct_scopes
from lineagegraph.harvest.s3.scan import ScanStats, Scope
from lineagegraph.settings import load_settings, with_overrides

NFC, NFD = "caf\u00e9", "cafe\u0301"
KEYS: dict[str, tuple[bytes, str]] = {
    "raw/orders/dt=2024-01-01/part 0.csv": (b"a,b\n", "STANDARD"),
    "raw/orders/dt=2024-01-02/hr=03/part+1%2B.csv": (b"abcd", "STANDARD_IA"),
    f"raw/{NFC}/na\u00efve.json": (b"{}", "GLACIER"),
    f"raw/{NFD}/na\u00efve.json": (b"{}", "STANDARD"),
    'raw/quotes/it\'s "x" & <y>.txt': (b"q", "STANDARD"),
    "raw/empty.txt": (b"", "STANDARD"),
    "raw/folder/": (b"", "STANDARD"),
    "raw//double/x.csv": (b"x", "ONEZONE_IA"),
    "top.csv": (b"1", "STANDARD"),
}


@pytest.fixture
def settings(moto_endpoint: str):  # type: ignore[no-untyped-def]
    return s3_settings(moto_endpoint, page_size=2)


# --- what a listing writes ---------------------------------------------------------------------


def test_listing_writes_the_graph_contract(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, KEYS)
    report = harvest_s3(store, settings, bucket)

    assert report.status == "success" and report.errors == []
    got = files(store, bucket)
    assert set(got) == set(KEYS) - {"raw/folder/"}  # the folder marker is not an asset
    assert report.stats.folder_markers == 1 and report.stats.objects == 8
    run = run_of(store, report.run_id)
    assert run["count_folder_markers"] == 1 and run["count_files"] == 8
    assert run["status"] == "success" and run["count_pages"] == 5  # 9 keys, 2 per page

    f = got["raw/orders/dt=2024-01-01/part 0.csv"]
    assert f["urn"] == f"s3://{bucket}/raw/orders/dt=2024-01-01/part 0.csv"
    assert set(f["labels"]) == {"Asset", "File"}
    assert (f["system"], f["name"], f["size"]) == ("s3", "part 0.csv", 4)
    assert "bucket" not in f and "key" not in f  # the urn holds them
    assert f["storage_class"] == "STANDARD"
    assert "etag" not in f  # no query reads it: ~50 B per object kept out of the store
    assert isinstance(f["last_modified"], int)
    assert abs(f["last_modified"] - run["started"]) < 120_000
    assert run["started"] <= f["first_seen"] == f["last_seen"] <= run["finished"]
    assert f.get("deleted_at") is None
    assert f["dataset"] == f"s3://{bucket}/raw/orders"

    deep = got["raw/orders/dt=2024-01-02/hr=03/part+1%2B.csv"]
    assert deep["storage_class"] == "STANDARD_IA" and deep["dataset"] == f"s3://{bucket}/raw/orders"
    # NFC and NFD spellings are two objects in two datasets; keys are kept exactly as listed.
    assert got[f"raw/{NFC}/na\u00efve.json"]["dataset"] == f"s3://{bucket}/raw/{NFC}"
    assert got[f"raw/{NFD}/na\u00efve.json"]["dataset"] == f"s3://{bucket}/raw/{NFD}"
    assert got['raw/quotes/it\'s "x" & <y>.txt']["name"] == 'it\'s "x" & <y>.txt'
    assert got["raw/empty.txt"]["size"] == 0 and got["raw/empty.txt"]["dataset"].endswith("/raw")
    double = got["raw//double/x.csv"]
    assert double["urn"] == f"s3://{bucket}/raw//double/x.csv"  # no slash collapsing for files
    assert double["dataset"] == f"s3://{bucket}/raw/double"  # but datasets collapse
    assert got["top.csv"]["dataset"] == f"s3://{bucket}"  # the bucket root

    ds = datasets(store, bucket)
    orders = ds[f"s3://{bucket}/raw/orders"]
    assert (orders["system"], orders["name"], orders["bucket"]) == ("s3", "orders", bucket)
    assert (orders["objects"], orders["bytes"]) == (2, 8)
    assert (orders["objects_STANDARD"], orders["bytes_STANDARD"]) == (1, 4)
    assert (orders["objects_STANDARD_IA"], orders["bytes_STANDARD_IA"]) == (1, 4)
    assert ds[f"s3://{bucket}/raw/{NFC}"]["bytes_GLACIER"] == 2
    assert ds[f"s3://{bucket}/raw/double"]["objects_ONEZONE_IA"] == 1
    assert sum(d["objects"] for d in ds.values()) == 8
    assert f"s3://{bucket}/raw/folder" not in ds


def test_last_modified_is_what_botocore_itself_parses(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    # The harvester's client reads listing times without dateutil; the values must not change.
    put_many(moto, bucket, KEYS)
    harvest_s3(store, settings, bucket)
    listed = moto.list_objects_v2(Bucket=bucket)["Contents"]  # a default boto3 client
    want = {o["Key"]: int(o["LastModified"].timestamp() * 1000) for o in listed}
    got = {key: f["last_modified"] for key, f in files(store, bucket).items()}
    assert got == {key: ms for key, ms in want.items() if key in got} and len(got) == 8


@pytest.mark.parametrize(
    "value",
    [
        "2024-05-01T12:00:00.000Z",  # ListObjectsV2
        "2024-05-01T12:00:00Z",
        "2024-05-01T12:00:00.123456Z",
        "2024-05-01T14:00:00+02:00",  # not UTC-marked: botocore's parser
        "Wed, 01 May 2024 12:00:00 GMT",  # HTTP headers (HeadObject, GetObject)
        "1714564800",
        1714564800,
    ],
)
def test_parse_timestamp_agrees_with_botocore(value: object) -> None:
    ours, theirs = parse_timestamp(value), botocore.utils.parse_timestamp(value)
    assert ours == theirs and ours.utcoffset() == theirs.utcoffset()


def test_fold_patterns_from_settings_shape_datasets(
    store: GraphStore, moto: BaseClient, bucket: str, moto_endpoint: str
) -> None:
    put_many(moto, bucket, {"logs/2024/01/31/a.log": (b"a", "STANDARD")})
    settings = s3_settings(moto_endpoint)
    settings.identity.fold_patterns.append(r"\d{4}/\d{2}/\d{2}")
    harvest_s3(store, settings, bucket)
    assert files(store, bucket)["logs/2024/01/31/a.log"]["dataset"] == f"s3://{bucket}/logs"


def test_rollups_are_summed_a_page_of_datasets_at_a_time(
    store: GraphStore, moto: BaseClient, bucket: str, settings, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(settle, "ROLLUP_PAGE", 2)
    keys = {f"t{t}/part-{i}.csv": (b"x" * (t + 1), "STANDARD") for t in range(5) for i in range(3)}
    put_many(moto, bucket, keys)
    harvest_s3(store, settings, bucket)
    ds = datasets(store, bucket)
    assert {urn: (d["objects"], d["bytes"]) for urn, d in ds.items()} == {
        f"s3://{bucket}/t{t}": (3, 3 * (t + 1)) for t in range(5)
    }


def test_rerun_changes_only_last_seen(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, KEYS)
    harvest_s3(store, settings, bucket)
    before = files(store, bucket)
    second = harvest_s3(store, settings, bucket)
    after = files(store, bucket)
    assert second.status == "success" and set(after) == set(before)
    for key, f in after.items():
        assert f["first_seen"] == before[key]["first_seen"]
        assert f["last_seen"] > before[key]["last_seen"]
        assert {k: v for k, v in f.items() if k != "last_seen"} == {
            k: v for k, v in before[key].items() if k != "last_seen"
        }
    count = store.execute(
        "MATCH (f:File)-[r:PART_OF]->() WHERE f.urn STARTS WITH $root RETURN count(r) AS n",
        {"root": f"s3://{bucket}/"},
        write=False,
    ).records()[0]["n"]
    assert count == len(after)  # one PART_OF each, not one per run


def test_a_listing_drops_what_older_versions_stored_on_each_object(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    """Older versions stored bucket, key and etag on every :File (~150 B per object that no
    query reads); the next listing of the scope removes them and keeps the rest."""
    put_many(moto, bucket, KEYS)
    harvest_s3(store, settings, bucket)
    store.execute(
        "MATCH (f:File) WHERE f.urn STARTS WITH $root "
        "SET f.bucket = $bucket, f.key = substring(f.urn, size($root)), f.etag = 'e'",
        {"root": f"s3://{bucket}/", "bucket": bucket},
        write=True,
    )
    assert all(f["etag"] == "e" for f in files(store, bucket).values())
    harvest_s3(store, settings, bucket)
    after = files(store, bucket)
    assert after and all({"bucket", "key", "etag"}.isdisjoint(f) for f in after.values())
    assert {key: f["size"] for key, f in after.items()} == {
        key: len(body) for key, (body, _) in KEYS.items() if not key.endswith("/")
    }


def test_an_object_named_like_a_directory_is_skipped_not_fatal(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    # Keys `a` and `a/x`: the file urn s3://b/a is also the dataset urn of a/x.
    put_many(moto, bucket, {"a": (b"1", "STANDARD"), "a/x": (b"22", "STANDARD")})
    report = harvest_s3(store, settings, bucket)
    assert report.status == "success" and report.stats.urn_clashes == 1
    assert set(files(store, bucket)) == {"a/x"}
    assert report.warnings == [
        "1 objects were not recorded because their urn, or their dataset's, is already another "
        "asset's (an object `a` beside objects under `a/`); the run counts them as "
        "skipped_urn_clashes"
    ]
    assert run_of(store, report.run_id)["count_skipped_urn_clashes"] == 1


def test_empty_bucket_is_a_complete_scan_of_nothing(
    store: GraphStore, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    report = harvest_s3(store, settings, bucket)
    assert report.status == "success" and report.stats.objects == 0 and report.errors == []
    assert files(store, bucket) == {}


# --- deletion ----------------------------------------------------------------------------------


def test_complete_scan_soft_deletes_what_it_no_longer_sees(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, {f"d/{i:02}.csv": (b"xy", "STANDARD") for i in range(20)})
    harvest_s3(store, settings, bucket)
    moto.delete_object(Bucket=bucket, Key="d/07.csv")  # 1 of 20: 5 %, under the 10 % limit
    report = harvest_s3(store, settings, bucket)

    run = run_of(store, report.run_id)
    assert report.status == "success" and report.soft_deleted == 1
    assert run["count_soft_deleted"] == 1
    state = deleted(store, bucket)
    assert state.pop("d/07.csv") == run["watermark"]  # deleted_at = the scan's start
    assert set(state.values()) == {None}
    assert datasets(store, bucket)[f"s3://{bucket}/d"]["objects"] == 19

    moto.put_object(Bucket=bucket, Key="d/07.csv", Body=b"back")
    harvest_s3(store, settings, bucket)
    assert deleted(store, bucket)["d/07.csv"] is None  # seen again: present again
    assert datasets(store, bucket)[f"s3://{bucket}/d"]["bytes"] == 19 * 2 + 4


def test_mass_delete_stops_unless_allowed(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, {f"m/{i}.csv": (b"x", "STANDARD") for i in range(10)})
    harvest_s3(store, settings, bucket)
    for i in range(3):
        moto.delete_object(Bucket=bucket, Key=f"m/{i}.csv")

    refused = harvest_s3(store, settings, bucket)
    assert refused.status == "partial" and refused.soft_deleted == 0
    assert refused.errors == [
        f"stopped before soft-deleting 3 of 10 objects under s3://{bucket}/: the scan sees 7 "
        "live objects where the scope had 10 (30% fewer), more than s3.max_delete_share (10%); "
        "check the bucket, prefix and credentials, and if the objects really are gone rerun "
        "with --allow-mass-delete"
    ]
    assert run_of(store, refused.run_id)["error"] == refused.errors[0]
    assert set(deleted(store, bucket).values()) == {None}

    allowed = harvest_s3(store, settings, bucket, allow_mass_delete=True)
    assert allowed.status == "success" and allowed.soft_deleted == 3
    assert sum(v is not None for v in deleted(store, bucket).values()) == 3


def _parts(prefix: str, run: str, n: int) -> dict[str, tuple[bytes, str]]:
    """Part files as a Spark overwrite writes them: new names every run."""
    return {
        f"{prefix}part-{i:05d}-{run}.c000.snappy.parquet": (b"pq", "STANDARD") for i in range(n)
    }


def test_an_overwrite_that_replaces_every_part_file_is_not_a_mass_delete(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    first = {**_parts("daily/dt=1/", "aaa", 3), **_parts("daily/dt=2/", "aaa", 3)}
    put_many(moto, bucket, first)
    harvest_s3(store, settings, bucket)
    for key in first:
        moto.delete_object(Bucket=bucket, Key=key)
    put_many(moto, bucket, {**_parts("daily/dt=1/", "bbb", 3), **_parts("daily/dt=2/", "bbb", 3)})

    report = harvest_s3(store, settings, bucket)  # all 6 replaced: 50 % of the graph's objects
    assert report.status == "success" and report.errors == [] and report.soft_deleted == 6
    state = deleted(store, bucket)
    assert {k for k, v in state.items() if v is not None} == set(first)
    assert datasets(store, bucket)[f"s3://{bucket}/daily"]["objects"] == 6


def test_a_scan_that_sees_nothing_is_refused(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    keys = _parts("daily/dt=1/", "aaa", 4)
    put_many(moto, bucket, keys)
    harvest_s3(store, settings, bucket)
    for key in keys:
        moto.delete_object(Bucket=bucket, Key=key)

    report = harvest_s3(store, settings, bucket)
    assert report.status == "partial" and report.soft_deleted == 0
    assert report.errors == [
        f"stopped before soft-deleting 4 of 4 objects under s3://{bucket}/: the scan sees 0 "
        "live objects where the scope had 4 (100% fewer), more than s3.max_delete_share (10%); "
        "check the bucket, prefix and credentials, and if the objects really are gone rerun "
        "with --allow-mass-delete"
    ]
    assert set(deleted(store, bucket).values()) == {None}


def test_a_listing_of_other_datasets_is_refused_though_the_count_holds(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    # What a mis-scoped listing looks like: as many objects as before, none of the datasets.
    before = {
        f"sales/{d}/{i}.csv": (b"x", "STANDARD") for d in ("orders", "refunds") for i in range(4)
    }
    put_many(moto, bucket, before)
    harvest_s3(store, settings, bucket)
    for key in before:
        moto.delete_object(Bucket=bucket, Key=key)
    put_many(moto, bucket, {f"elsewhere/{i}.csv": (b"x", "STANDARD") for i in range(8)})

    report = harvest_s3(store, settings, bucket)
    assert report.status == "partial" and report.soft_deleted == 0
    assert report.errors == [
        f"stopped before soft-deleting 8 of 8 objects under s3://{bucket}/: 2 datasets would "
        f"vanish entirely (s3://{bucket}/sales/orders, s3://{bucket}/sales/refunds) with 8 "
        "objects (100% of the scope), more than s3.max_delete_share (10%); check the bucket, "
        "prefix and credentials, and if the objects really are gone rerun with "
        "--allow-mass-delete"
    ]
    assert {deleted(store, bucket)[k] for k in before} == {None}


@pytest.mark.parametrize(("gone", "refused"), [(3, True), (1, False)])
def test_a_vanished_dataset_counts_against_the_share(
    store: GraphStore, moto: BaseClient, bucket: str, settings, gone: int, refused: bool
) -> None:  # type: ignore[no-untyped-def]
    stays = {f"big/{i:02}.csv": (b"x", "STANDARD") for i in range(20)}
    lost = {f"small/{i}.csv": (b"x", "STANDARD") for i in range(gone)}
    put_many(moto, bucket, {**stays, **lost})
    harvest_s3(store, settings, bucket)
    for key in lost:
        moto.delete_object(Bucket=bucket, Key=key)
    put_many(moto, bucket, {f"big/new-{i}.csv": (b"x", "STANDARD") for i in range(gone)})

    # The live count holds (20 + gone); `small` vanishes: 3 of 23 (13 %) or 1 of 21 (5 %).
    report = harvest_s3(store, settings, bucket)
    assert (report.status == "partial") is refused
    assert report.soft_deleted == (0 if refused else gone)
    if refused:
        assert (
            f"1 datasets would vanish entirely (s3://{bucket}/small) with 3 objects (13% "
            in (report.errors[0])
        )


def test_scan_of_a_prefix_deletes_only_inside_it(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, {k: (b"x", "STANDARD") for k in ("a/1", "a/2", "ab/1", "b/1")})
    harvest_s3(store, settings, bucket)
    for key in ("a/2", "ab/1", "b/1"):
        moto.delete_object(Bucket=bucket, Key=key)
    report = harvest_s3(store, settings, bucket, ["a/"], allow_mass_delete=True)
    assert report.scope == f"s3://{bucket}/a/" and report.soft_deleted == 1
    state = deleted(store, bucket)
    assert state["a/2"] is not None
    assert state["ab/1"] is None and state["b/1"] is None  # outside the scanned scope


def test_prefixes_list_in_parallel_and_overlaps_list_once(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, {f"{p}/{i}": (b"x", "STANDARD") for p in "pqr" for i in range(3)})
    report = harvest_s3(store, settings, bucket, ["p/", "q/", "p/sub", "p/"])
    assert report.scope == f"s3://{bucket}/p/ s3://{bucket}/q/"
    assert report.stats.objects == 6 and set(files(store, bucket)) == {
        f"{p}/{i}" for p in "pq" for i in range(3)
    }


def test_distinct_scopes_drop_contained_prefixes() -> None:
    assert distinct_scopes("b", ["x/", "x/y/", "xy", "", "z"]) == [Scope("b", "")]
    assert distinct_scopes("b", ["x/y/", "x/", "xz/"]) == [Scope("b", "x/"), Scope("b", "xz/")]
    assert distinct_scopes("b", []) == [Scope("b", "")]


# --- failures ----------------------------------------------------------------------------------


def test_unknown_bucket_fails_clearly_and_deletes_nothing(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, settings
) -> None:  # type: ignore[no-untyped-def]
    gone = new_bucket(moto)
    put_many(moto, gone, {"k": (b"x", "STANDARD")})
    harvest_s3(store, settings, gone)
    moto.delete_object(Bucket=gone, Key="k")
    moto.delete_bucket(Bucket=gone)

    report = harvest_s3(store, settings, gone)
    assert report.status == "partial"
    assert report.errors == [
        f"bucket {gone!r} does not exist at {moto_endpoint} (listing s3://{gone}/); check the "
        "bucket name and s3.endpoint_url / s3.region"
    ]
    assert deleted(store, gone) == {"k": None}  # an incomplete scan deletes nothing
    assert run_of(store, report.run_id)["status"] == "partial"


def test_access_denied_on_one_prefix_settles_the_others(
    store: GraphStore, moto: BaseClient, bucket: str, fault_proxy: FaultProxy
) -> None:
    put_many(moto, bucket, {k: (b"x", "STANDARD") for k in ("ok/1", "ok/2", "secret/1")})
    settings = s3_settings(fault_proxy.endpoint, page_size=2)
    harvest_s3(store, settings, bucket, ["ok/", "secret/"])
    moto.delete_object(Bucket=bucket, Key="ok/2")
    moto.delete_object(Bucket=bucket, Key="secret/1")
    fault_proxy.add(Fault(is_listing(prefix="secret/"), 403, "AccessDenied", "Access Denied"))

    report = harvest_s3(store, settings, bucket, ["ok/", "secret/"], allow_mass_delete=True)
    assert report.status == "partial"
    assert report.errors == [
        f"access denied listing s3://{bucket}/secret/: the credentials need s3:ListBucket on "
        f"s3://{bucket}/secret/ (Access Denied)"
    ]
    state = deleted(store, bucket)
    assert state["ok/2"] is not None  # its scope completed
    assert state["secret/1"] is None  # denied: nothing deleted there


def test_throttling_is_retried_with_backoff(
    store: GraphStore, moto: BaseClient, bucket: str, fault_proxy: FaultProxy
) -> None:
    put_many(moto, bucket, {"t/1": (b"x", "STANDARD")})
    fault = fault_proxy.add(Fault(is_listing(), 503, "SlowDown", "Reduce your rate", times=2))
    report = harvest_s3(store, s3_settings(fault_proxy.endpoint, retry_attempts=4), bucket)
    assert fault.hits == 2 and report.status == "success" and report.stats.objects == 1


def test_throttling_that_outlasts_the_retries_names_the_fix(
    store: GraphStore, bucket: str, fault_proxy: FaultProxy
) -> None:
    fault_proxy.add(Fault(is_listing(), 503, "SlowDown", "Reduce your rate"))
    settings = s3_settings(fault_proxy.endpoint, retry_attempts=2, retry_mode="standard")
    report = harvest_s3(store, settings, bucket)
    assert report.status == "partial"
    assert report.errors == [
        f"S3 kept throttling (SlowDown) listing s3://{bucket}/ after 2 attempts; lower "
        "s3.parallelism or raise s3.retry_attempts"
    ]


def test_error_mid_listing_keeps_pages_and_deletes_nothing(
    store: GraphStore, moto: BaseClient, bucket: str, fault_proxy: FaultProxy
) -> None:
    put_many(moto, bucket, {f"e/{i}": (b"x", "STANDARD") for i in range(5)})
    settings = s3_settings(fault_proxy.endpoint, page_size=2, retry_attempts=1)
    harvest_s3(store, settings, bucket)
    for i in range(3, 5):
        moto.delete_object(Bucket=bucket, Key=f"e/{i}")  # would be deleted by a complete scan
    fault_proxy.add(Fault(is_listing(continued=True), 500, "InternalError", "We broke"))

    report = harvest_s3(store, settings, bucket, allow_mass_delete=True)
    assert report.status == "partial" and report.stats.objects == 2  # the first page
    assert report.errors == [
        f"S3 error InternalError listing s3://{bucket}/: We broke; stopped after 2 objects, the "
        f"last 'e/1': nothing under s3://{bucket}/ was soft-deleted"
    ]
    assert set(deleted(store, bucket).values()) == {None}


def test_bucket_deleted_mid_listing_says_where_the_listing_stopped(
    store: GraphStore, moto: BaseClient, bucket: str, fault_proxy: FaultProxy
) -> None:
    put_many(moto, bucket, {f"raw/{i}": (b"x", "STANDARD") for i in range(5)})
    settings = s3_settings(fault_proxy.endpoint, page_size=2, retry_attempts=1)
    harvest_s3(store, settings, bucket, ["raw/"])
    fault_proxy.add(
        Fault(is_listing(continued=True), 404, "NoSuchBucket", "The bucket does not exist")
    )

    report = harvest_s3(store, settings, bucket, ["raw/"], allow_mass_delete=True)
    assert report.status == "partial" and report.stats.objects == 2
    assert report.errors == [
        f"bucket {bucket!r} does not exist at {fault_proxy.endpoint} (listing s3://{bucket}/raw/)"
        "; check the bucket name and s3.endpoint_url / s3.region; stopped after 2 objects, the "
        f"last 'raw/1': nothing under s3://{bucket}/raw/ was soft-deleted"
    ]
    assert set(deleted(store, bucket).values()) == {None}
    assert run_of(store, report.run_id)["status"] == "partial"


def test_bad_endpoint_names_it(store: GraphStore) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    report = harvest_s3(store, s3_settings(endpoint, retry_attempts=1), "lake")
    assert report.status == "partial" and len(report.errors) == 1
    assert report.errors[0].startswith(f"cannot reach S3 at {endpoint} (listing s3://lake/): ")
    assert report.errors[0].endswith("; check s3.endpoint_url")


def test_interrupted_scan_is_partial_and_deletes_nothing(
    store: GraphStore, moto: BaseClient, bucket: str, settings
) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, {f"i/{i}": (b"x", "STANDARD") for i in range(6)})
    harvest_s3(store, settings, bucket)
    moto.delete_object(Bucket=bucket, Key="i/5")

    def ctrl_c(stats: ScanStats) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        harvest_s3(store, settings, bucket, allow_mass_delete=True, progress=ctrl_c)
    runs = store.execute(
        "MATCH (h:HarvestRun {scope: $s}) RETURN h.status AS status, h.error AS error "
        "ORDER BY h.started",
        {"s": f"s3://{bucket}/"},
        write=False,
    ).records()
    assert runs[-1] == {
        "status": "partial",
        "error": "interrupted: nothing was soft-deleted; the next run lists again",
    }
    assert set(deleted(store, bucket).values()) == {None}


@pytest.fixture
def no_aws_config(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """No credentials anywhere boto3 looks: empty config files, no variables, no IMDS."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "empty").write_text("")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "empty"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "empty"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.mark.usefixtures("no_aws_config")
def test_unknown_profile_is_a_settings_error(store: GraphStore, moto_endpoint: str) -> None:
    settings = s3_settings(
        moto_endpoint, access_key_id=None, secret_access_key=None, profile="nightly"
    )
    with pytest.raises(ConfigError) as caught:
        harvest_s3(store, settings, "lake")
    assert str(caught.value) == (
        "s3.profile 'nightly' is not in the AWS config files (~/.aws/config, "
        "~/.aws/credentials); fix LINEAGEGRAPH_S3__PROFILE or [s3] profile"
    )


@pytest.mark.usefixtures("no_aws_config")
def test_missing_credentials_say_where_to_set_them(store: GraphStore, moto_endpoint: str) -> None:
    settings = s3_settings(moto_endpoint, access_key_id=None, secret_access_key=None)
    report = harvest_s3(store, settings, "lake")
    assert report.errors == [
        "no AWS credentials found (listing s3://lake/); set s3.profile or s3.access_key_id and "
        "s3.secret_access_key (or the AWS_* environment variables)"
    ]


def test_credentials_must_come_in_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGEGRAPH_S3__ACCESS_KEY_ID", "AKIAEXAMPLE")
    settings = load_settings()  # checked when a command uses [s3], not before
    with pytest.raises(ConfigError, match="access_key_id and secret_access_key are set together"):
        with_overrides(settings, "s3")


def test_endpoint_must_be_an_http_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGEGRAPH_S3__ENDPOINT_URL", "127.0.0.1:7480")
    with pytest.raises(ConfigError, match=r"s3.endpoint_url .*must be an http:// or https:// URL"):
        load_settings()


# --- the command -------------------------------------------------------------------------------


@pytest.fixture
def run_cli(tmp_path, monkeypatch: pytest.MonkeyPatch, moto_endpoint: str):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    for name in list(__import__("os").environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    env = {
        "LINEAGEGRAPH_S3__ENDPOINT_URL": moto_endpoint,
        "LINEAGEGRAPH_S3__REGION": "us-east-1",
        "LINEAGEGRAPH_S3__ACCESS_KEY_ID": "test",
        "LINEAGEGRAPH_S3__SECRET_ACCESS_KEY": "super-secret-key",
        "LINEAGEGRAPH_S3__RETRY_ATTEMPTS": "2",
    }

    def invoke(*args: str, **extra: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(
            cli, ["--data-dir", str(tmp_path / "store"), *args], env={**env, **extra}
        )

    return invoke


def test_cli_harvests_a_bucket_and_logs_progress(run_cli, moto: BaseClient, bucket: str) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, {"c/1.csv": (b"abc", "STANDARD"), "c/": (b"", "STANDARD")})
    result = run_cli("harvest", "s3", "--bucket", bucket, "--prefix", "c/", "--page-size", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        f"s3://{bucket}/c/: 1 objects (3 B), 1 folder marker, 1 datasets, 0 soft-deleted, in "
    )
    assert result.stdout.rstrip().endswith(": success")
    # Not a terminal: plain log lines (the first page at once, then one every 10 s).
    assert re.match(rf"s3://{bucket}: \d+ objects, \d+ B, \d+ objects/s\n", result.stderr)
    assert "\r" not in result.stderr
    status = run_cli("status")
    assert "s3" in status.output


def test_cli_failure_exits_non_zero_without_leaking_secrets(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("harvest", "s3", "--bucket", "no-such-bucket-here")
    assert result.exit_code == 5
    assert (
        "error: bucket 'no-such-bucket-here' does not exist at http://127.0.0.1:" in result.stderr
    )
    assert "super-secret-key" not in result.output


def test_cli_uses_buckets_and_prefixes_from_settings(run_cli, moto: BaseClient) -> None:  # type: ignore[no-untyped-def]
    one, two = new_bucket(moto), new_bucket(moto)
    put_many(moto, one, {"in/x": (b"1", "STANDARD"), "out/x": (b"1", "STANDARD")})
    put_many(moto, two, {"in/y": (b"22", "STANDARD")})
    result = run_cli(
        "harvest",
        "s3",
        LINEAGEGRAPH_S3__BUCKETS=f'["{one}", "{two}"]',
        LINEAGEGRAPH_S3__PREFIXES='["in/"]',
    )
    assert result.exit_code == 0, result.output
    assert f"s3://{one}/in/: 1 objects (1 B)" in result.stdout
    assert f"s3://{two}/in/: 1 objects (2 B)" in result.stdout


def test_cli_without_a_bucket_says_how_to_give_one(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("harvest", "s3")
    assert result.exit_code == 2
    assert "give --bucket, or list buckets in the s3.buckets setting" in result.output


def test_cli_rejects_a_bad_endpoint_override(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("harvest", "s3", "-b", "x", "--endpoint-url", "localhost:9000")
    assert result.exit_code == 2
    assert "error: --endpoint-url: Value error, must be an http:// or https:// URL" in result.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_rewrites_one_line_on_a_terminal() -> None:
    stream = _Terminal()
    line = TickLine(stream)
    progress = ticks("s3://b", line)
    progress(ScanStats(objects=1234, bytes=5 * 1024**2))
    line.done()
    text = stream.getvalue()
    assert text.startswith("\rs3://b: 1,234 objects, 5.0 MiB, ") and text.endswith("\n")


def test_progress_logs_plain_lines_at_intervals_elsewhere() -> None:
    stream = io.StringIO()
    line = TickLine(stream, log_every=3600)
    progress = ticks("s3://b", line)
    progress(ScanStats(objects=1))
    progress(ScanStats(objects=2))  # within the interval: not logged
    line.done()
    assert stream.getvalue().count("\n") == 1 and "\r" not in stream.getvalue()
    assert stream.getvalue().startswith("s3://b: 1 objects, 0 B, ")


def test_human_bytes() -> None:
    assert [human_bytes(n) for n in (0, 1023, 1024, 3 * 1024**4 * 1024)] == [
        "0 B", "1,023 B", "1.0 KiB", "3,072.0 TiB",
    ]  # fmt: skip


def test_a_listing_stores_the_bucket_region_on_its_datasets(
    store: GraphStore, moto: BaseClient, moto_endpoint: str, settings
) -> None:  # type: ignore[no-untyped-def]
    eu = client_for(moto_endpoint)
    name = new_bucket(moto).replace("lg-", "lg-eu-")
    eu.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    put_many(eu, name, {"raw/a.csv": (b"x", "STANDARD")})
    report = harvest_s3(store, settings, name)
    assert report.status == "success" and report.warnings == []
    assert {d["region"] for d in datasets(store, name).values()} == {"eu-west-1"}


def test_a_region_that_cannot_be_read_is_a_warning_and_keeps_the_stored_one(
    store: GraphStore, moto: BaseClient, bucket: str, fault_proxy, moto_endpoint: str
) -> None:  # type: ignore[no-untyped-def]
    put_many(moto, bucket, {"raw/a.csv": (b"x", "STANDARD")})
    harvest_s3(store, s3_settings(moto_endpoint), bucket)
    assert {d["region"] for d in datasets(store, bucket).values()} == {"us-east-1"}
    fault_proxy.add(Fault(lambda r: "location" in r.query, 403, "AccessDenied", "Access Denied"))
    report = harvest_s3(store, s3_settings(fault_proxy.endpoint), bucket)
    assert report.status == "success"
    assert report.warnings == [
        f"the region of bucket {bucket!r} was not read (AccessDenied; the credentials need "
        "s3:GetBucketLocation): classification policies cannot check its region"
    ]
    assert {d["region"] for d in datasets(store, bucket).values()} == {"us-east-1"}
