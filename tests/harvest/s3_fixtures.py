"""S3 test servers: moto's real HTTP server on loopback (session-wide), Ceph RGW when CI started
it, and a fault-injecting HTTP proxy in front of moto.

The proxy forwards every request to moto unchanged and, for requests a test's rule picks,
answers with a real S3 error document instead (503 SlowDown, 403 AccessDenied, 500). boto3
still talks HTTP to a server and parses real responses: nothing of boto3 is mocked.
"""

from __future__ import annotations

import http.client
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from botocore.client import BaseClient

from lineagegraph.demo.run import local_s3_server
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.s3.inventory import snake_case
from lineagegraph.settings import Settings

RGW_ENV = "LINEAGEGRAPH_TEST_RGW"
KEYS = {"access_key_id": "test", "secret_access_key": "test"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def s3_settings(endpoint: str, **s3: Any) -> Settings:
    """Settings pointing the harvester at a test endpoint; few retries keep failures quick."""
    section = {"endpoint_url": endpoint, "region": "us-east-1", **KEYS, "retry_attempts": 3}
    section.update(s3)
    return Settings(s3=section)


def client_for(endpoint: str, **keys: str) -> BaseClient:
    creds = keys or {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **creds)


def new_bucket(client: BaseClient, prefix: str = "lg") -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return name


def put_many(client: BaseClient, bucket: str, objects: dict[str, tuple[bytes, str]]) -> None:
    """Upload key -> (body, storage class)."""
    for key, (body, storage_class) in objects.items():
        client.put_object(Bucket=bucket, Key=key, Body=body, StorageClass=storage_class)


# --- reading the graph back ------------------------------------------------------------------


def files(store: GraphStore, bucket: str) -> dict[str, dict[str, Any]]:
    """The bucket's :File nodes by key (the urn after `s3://bucket/`: keys are not stored twice)."""
    root = f"s3://{bucket}/"
    rows = store.execute(
        "MATCH (f:File)-[:PART_OF]->(d:Dataset) WHERE f.urn STARTS WITH $root "
        "RETURN f AS f, labels(f) AS labels, d.urn AS dataset",
        {"root": root},
        write=False,
    ).records()
    return {
        r["f"]["urn"][len(root) :]: {**r["f"], "dataset": r["dataset"], "labels": r["labels"]}
        for r in rows
    }


def datasets(store: GraphStore, bucket: str) -> dict[str, dict[str, Any]]:
    rows = store.execute(
        "MATCH (d:Dataset) WHERE d.bucket = $b RETURN d AS d", {"b": bucket}, write=False
    ).records()
    return {r["d"]["urn"]: r["d"] for r in rows}


def run_of(store: GraphStore, run_id: str) -> dict[str, Any]:
    rows = store.execute(
        "MATCH (h:HarvestRun {id: $id}) RETURN h AS h", {"id": run_id}, write=False
    ).records()
    return rows[0]["h"]  # type: ignore[no-any-return]


def deleted(store: GraphStore, bucket: str) -> dict[str, int | None]:
    return {k: f.get("deleted_at") for k, f in files(store, bucket).items()}


# --- moto --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto's S3 server on a free loopback port, for the whole session."""
    with local_s3_server() as endpoint:
        yield endpoint


@pytest.fixture
def moto(moto_endpoint: str) -> BaseClient:
    return client_for(moto_endpoint)


@pytest.fixture
def bucket(moto: BaseClient) -> str:
    """A fresh bucket on the shared moto server."""
    return new_bucket(moto)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local[1] Spark session (slow to start, ~15 s), one for every harvester test module
    that needs it (tests/spark reuses it too): reuse one left active; else start (and, at the
    end of the run, stop) our own."""
    pytest.importorskip("pyspark", reason="the Spark path needs pyspark (the spark extra)")
    from pyspark.sql import SparkSession

    from lineagegraph.harvest.s3.inventory_spark import spark_session

    active = SparkSession.getActiveSession()
    session = active or spark_session("local[1]", app="lineagegraph-tests")  # tests/spark urns
    yield session
    if active is None:
        session.stop()


# --- Ceph RGW ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def rgw_endpoint() -> str:
    endpoint = os.environ.get(RGW_ENV)
    if not endpoint:
        pytest.skip(
            f"{RGW_ENV} is not set: start Ceph RGW with tests/services/ceph-rgw.sh and export "
            f"{RGW_ENV}=http://127.0.0.1:7480"
        )
    return endpoint


@pytest.fixture
def rgw(rgw_endpoint: str) -> BaseClient:
    return client_for(rgw_endpoint)


# --- fault-injecting proxy ---------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    method: str
    bucket: str
    key: str
    query: dict[str, str]


@dataclass
class Fault:
    """Answer requests that `matches` with an S3 error, `times` times (None: always)."""

    matches: Callable[[Request], bool]
    status: int
    code: str
    message: str
    times: int | None = None
    hits: int = 0


@dataclass
class FaultProxy:
    endpoint: str
    upstream_port: int
    faults: list[Fault] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, fault: Fault) -> Fault:
        with self.lock:
            self.faults.append(fault)
        return fault

    def pick(self, request: Request) -> Fault | None:
        with self.lock:
            self.requests.append(request)
            for fault in self.faults:
                if fault.matches(request) and (fault.times is None or fault.hits < fault.times):
                    fault.hits += 1
                    return fault
        return None


def _handler(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            bucket, _, key = parts.path.lstrip("/").partition("/")
            query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            fault = proxy.pick(Request(self.command, bucket, key, query))
            if fault is not None:
                payload = (
                    '<?xml version="1.0" encoding="UTF-8"?>\n'
                    f"<Error><Code>{fault.code}</Code><Message>{fault.message}</Message>"
                    f"<BucketName>{bucket}</BucketName><RequestId>fault</RequestId></Error>"
                ).encode()
                self.send_response(fault.status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
                self.send_response(response.status)
                for name, value in response.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
            finally:
                upstream.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _serve

    return Handler


@pytest.fixture
def fault_proxy(moto_endpoint: str) -> Iterator[FaultProxy]:
    """An S3 endpoint in front of moto whose faults a test sets up with `add`."""
    upstream_port = int(moto_endpoint.rsplit(":", 1)[1])
    port = free_port()
    proxy = FaultProxy(f"http://127.0.0.1:{port}", upstream_port)
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(proxy))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="fault-proxy", daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()


def is_listing(
    prefix: str | None = None, continued: bool | None = None
) -> Callable[[Request], bool]:
    """Matches ListObjectsV2 requests, optionally of one prefix or only continuation pages."""

    def matches(request: Request) -> bool:
        if request.method != "GET" or request.query.get("list-type") != "2":
            return False
        if prefix is not None and request.query.get("prefix", "") != prefix:
            return False
        return continued is None or ("continuation-token" in request.query) == continued

    return matches


# --- S3 Inventory reports (moto has none: written here in AWS's layout) ------------------------

OPTIONAL_FIELDS = ("LastModifiedDate", "ETag", "StorageClass")
"""The optional inventory fields a report has unless a test picks others."""
VERSION_FIELDS = ("VersionId", "IsLatest", "IsDeleteMarker")


@dataclass
class InventoryRow:
    key: str
    size: int = 1
    storage_class: str = "STANDARD"
    modified: str = "2024-05-31T23:59:01.000Z"
    etag: str = "0cc175b9c0f1b6a831c399e269772661"
    latest: bool = True
    delete_marker: bool = False
    bucket: str | None = None  # default: the report's source bucket
    access_tier: str | None = None  # IntelligentTieringAccessTier

    def value(self, name: str, source: str) -> Any:
        """The row's value of an inventory field, as Parquet types it."""
        from datetime import datetime

        return {
            "Bucket": self.bucket or source, "Key": self.key, "VersionId": "v1",
            "IsLatest": self.latest, "IsDeleteMarker": self.delete_marker,
            "Size": None if self.delete_marker else self.size,
            "LastModifiedDate": datetime.fromisoformat(self.modified), "ETag": self.etag,
            "StorageClass": self.storage_class, "IntelligentTieringAccessTier": self.access_tier,
        }[name]  # fmt: skip


def _schema(fields: Sequence[str], versioned: bool) -> list[str]:
    return ["Bucket", "Key", *(VERSION_FIELDS if versioned else ()), "Size", *fields]


def _csv_gz(rows: list[InventoryRow], source: str, schema: list[str]) -> bytes:
    import csv
    import gzip
    import io
    from urllib.parse import quote_plus

    def text(row: InventoryRow, name: str) -> str:
        if name == "Key":
            return quote_plus(row.key, safe="/")
        if name == "LastModifiedDate":
            return row.modified
        value = row.value(name, source)
        if isinstance(value, bool):
            return str(value).lower()
        return "" if value is None else str(value)

    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for r in rows:
        writer.writerow([text(r, name) for name in schema])
    return gzip.compress(out.getvalue().encode("utf-8"))


def _parquet(rows: list[InventoryRow], source: str, schema: list[str]) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {
        "Size": pa.int64(),
        "LastModifiedDate": pa.timestamp("ms", tz="UTC"),
        "IntelligentTieringAccessTier": pa.string(),
    }
    table = pa.table(
        {
            snake_case(name): pa.array([r.value(name, source) for r in rows], types.get(name))
            for name in schema
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def write_inventory(
    client: BaseClient,
    source: str,
    data_files: list[list[InventoryRow]],
    *,
    created: int = 1_717_200_000_000,
    file_format: str = "CSV",
    versioned: bool = False,
    fields: Sequence[str] = OPTIONAL_FIELDS,
    tamper: Callable[[dict[str, Any]], None] | None = None,
) -> str:
    """Upload an inventory report of `source` (one data file per row list, with the optional
    `fields`; Parquet ones always versioned) to a new destination bucket; returns the
    manifest's s3:// URL. `tamper` may edit the manifest before it is checksummed, as a broken
    report would be."""
    import hashlib
    import json

    destination = new_bucket(client, "inv")
    base = f"{source}/daily/{created}"
    entries = []
    for n, rows in enumerate(data_files):
        if file_format == "Parquet":
            body = _parquet(rows, source, _schema(fields, True))
            key = f"{base}/data/part-{n}.parquet"
        else:
            body = _csv_gz(rows, source, _schema(fields, versioned))
            key = f"{base}/data/part-{n}.csv.gz"
        client.put_object(Bucket=destination, Key=key, Body=body)
        entries.append(
            {"key": key, "size": len(body), "MD5checksum": hashlib.md5(body).hexdigest()}
        )
    manifest: dict[str, Any] = {
        "sourceBucket": source,
        "destinationBucket": f"arn:aws:s3:::{destination}",
        "version": "2016-11-30",
        "creationTimestamp": str(created),
        "fileFormat": file_format,
        "fileSchema": ", ".join(_schema(fields, versioned)),
        "files": entries,
    }
    if tamper:
        tamper(manifest)
    body = json.dumps(manifest, indent=2).encode()
    client.put_object(Bucket=destination, Key=f"{base}/manifest.json", Body=body)
    checksum = hashlib.md5(body).hexdigest().encode()
    client.put_object(Bucket=destination, Key=f"{base}/manifest.checksum", Body=checksum)
    return f"s3://{destination}/{base}/manifest.json"
