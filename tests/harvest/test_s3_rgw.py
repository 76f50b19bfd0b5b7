"""The S3 harvester against a real S3 server: Ceph RGW (tests/services/ceph-rgw.sh).

Skipped, saying so, unless LINEAGEGRAPH_TEST_RGW names the endpoint (CI sets it). RGW checks
what moto cannot: real storage-class placement, its own pagination and key encoding, real
AccessDenied between users and real signature checks.
"""

from __future__ import annotations

from botocore.client import BaseClient
from s3_fixtures import datasets, files, new_bucket, put_many, s3_settings

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.s3.client import make_client
from lineagegraph.harvest.s3.harvester import harvest_s3
from lineagegraph.harvest.s3.listing import list_pages
from lineagegraph.harvest.s3.scan import Scope

CLASSES = (
    "STANDARD",
    "STANDARD_IA",
    "ONEZONE_IA",
    "INTELLIGENT_TIERING",
    "GLACIER",
    "DEEP_ARCHIVE",
    "GLACIER_IR",
)
ODD_KEYS = {
    "odd/a b+c%d.csv": (b"1", "STANDARD"),
    "odd/caf\u00e9/\u65e5\u672c.txt": (b"22", "STANDARD"),
    'odd/it\'s "quoted" & <tagged>.txt': (b"333", "STANDARD"),
    "odd/dt=2024-01-01/region=eu/hour=00/deep.parquet": (b"4444", "STANDARD"),
    "odd/zero.bin": (b"", "STANDARD"),
    "odd/marker/": (b"", "STANDARD"),
}


def test_storage_classes_pages_and_odd_keys_on_rgw(
    store: GraphStore, rgw: BaseClient, rgw_endpoint: str
) -> None:
    bucket = new_bucket(rgw)
    objects = {
        f"classes/{c.lower()}/{i}.dat": (b"x" * (i + 1), c) for c in CLASSES for i in range(2)
    }
    put_many(rgw, bucket, {**objects, **ODD_KEYS})
    report = harvest_s3(store, s3_settings(rgw_endpoint, page_size=3), bucket)

    assert report.status == "success" and report.errors == []
    assert report.stats.folder_markers == 1 and report.stats.objects == len(objects) + 5
    got = files(store, bucket)
    assert set(got) == (set(objects) | set(ODD_KEYS)) - {"odd/marker/"}
    for key, (body, storage_class) in objects.items():
        assert (got[key]["storage_class"], got[key]["size"]) == (storage_class, len(body))
    assert (
        got["odd/dt=2024-01-01/region=eu/hour=00/deep.parquet"]["dataset"] == f"s3://{bucket}/odd"
    )
    assert got["odd/zero.bin"]["size"] == 0
    ds = datasets(store, bucket)
    for storage_class in CLASSES:
        d = ds[f"s3://{bucket}/classes/{storage_class.lower()}"]
        assert (d["objects"], d[f"objects_{storage_class}"], d[f"bytes_{storage_class}"]) == (
            2,
            2,
            3,
        )


# Characters XML 1.0 cannot carry (\x01, \x1f) or would normalize (CR, CR LF, tabs and spaces
# at the ends of a key): RGW lists them only URL-encoded. Under a plain folder, so their dataset
# urn is one the embedded store's index finds (see tests/graph/test_unique_merge.py).
CONTROL_KEYS = [
    "ctl/\x01start", "ctl/unit\x1fsep", "ctl/del\x7f", "ctl/tab\there\t", "ctl/ lead",
    "ctl/trail ", "ctl/cr\rlf\n", "ctl/\r\n", "ctl/x/\x01ctl.txt",
]  # fmt: skip


def test_keys_with_control_characters_on_rgw(
    store: GraphStore, rgw: BaseClient, rgw_endpoint: str
) -> None:
    bucket = new_bucket(rgw)
    put_many(rgw, bucket, {key: (b"1", "STANDARD") for key in CONTROL_KEYS})
    settings = s3_settings(rgw_endpoint)
    client = make_client(settings.s3)
    urls: list[str] = []
    client.meta.events.register(
        "before-send.s3.ListObjectsV2", lambda request, **_: urls.append(request.url)
    )
    listed = [o.key for page in list_pages(client, Scope(bucket), 1000) for o in page.objects]
    assert sorted(listed) == sorted(CONTROL_KEYS)
    assert urls and all("encoding-type=url" in url for url in urls)

    report = harvest_s3(store, settings, bucket)
    assert report.status == "success" and report.stats.objects == len(CONTROL_KEYS)
    got = files(store, bucket)
    assert sorted(got) == sorted(CONTROL_KEYS)
    assert all(f["urn"] == f"s3://{bucket}/{key}" for key, f in got.items())
    assert got["ctl/x/\x01ctl.txt"]["dataset"] == f"s3://{bucket}/ctl/x"


def test_rgw_cannot_end_a_page_at_a_control_character(
    store: GraphStore, rgw: BaseClient, rgw_endpoint: str
) -> None:
    """Ceph RGW (16.2) answers 500 to a listing whose truncated page ends at a key with \x01
    (seen with CR LF too): the run is partial and says where, and deletes nothing."""
    bucket = new_bucket(rgw)
    put_many(rgw, bucket, {"ctl/\x01a": (b"1", "STANDARD"), "ctl/b": (b"1", "STANDARD")})
    assert harvest_s3(store, s3_settings(rgw_endpoint), bucket).status == "success"
    report = harvest_s3(store, s3_settings(rgw_endpoint, page_size=1), bucket)
    assert report.status == "partial"
    assert report.errors == [f"S3 error 500 listing s3://{bucket}/: Internal Server Error"]
    assert sorted(files(store, bucket)) == ["ctl/\x01a", "ctl/b"]


def test_empty_bucket_on_rgw(store: GraphStore, rgw: BaseClient, rgw_endpoint: str) -> None:
    report = harvest_s3(store, s3_settings(rgw_endpoint), new_bucket(rgw))
    assert report.status == "success" and report.stats.objects == 0


def test_real_access_denied_names_bucket_and_permission(
    store: GraphStore, rgw: BaseClient, rgw_endpoint: str
) -> None:
    bucket = new_bucket(rgw)  # owned by user "test"
    put_many(rgw, bucket, {"private/1": (b"x", "STANDARD")})
    intruder = s3_settings(rgw_endpoint, access_key_id="other", secret_access_key="other")
    report = harvest_s3(store, intruder, bucket, ["private/"])
    assert report.status == "partial"
    assert report.errors == [
        f"access denied listing s3://{bucket}/private/: the credentials need s3:ListBucket on "
        f"s3://{bucket}/private/ (AccessDenied)"
    ]


def test_wrong_secret_is_rejected_with_the_setting_to_fix(
    store: GraphStore, rgw: BaseClient, rgw_endpoint: str
) -> None:
    bucket = new_bucket(rgw)
    report = harvest_s3(store, s3_settings(rgw_endpoint, secret_access_key="wrong"), bucket)
    assert report.errors == [
        f"{rgw_endpoint} rejected the credentials (SignatureDoesNotMatch) listing s3://{bucket}/; "
        "check s3.access_key_id / s3.secret_access_key or s3.profile"
    ]


def test_unknown_bucket_on_rgw(store: GraphStore, rgw_endpoint: str) -> None:
    report = harvest_s3(store, s3_settings(rgw_endpoint), "lg-no-such-bucket")
    assert report.errors[0].startswith(
        f"bucket 'lg-no-such-bucket' does not exist at {rgw_endpoint}"
    )
