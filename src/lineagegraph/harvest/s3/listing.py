"""Listings as pages of a scope (a bucket and a key prefix), streamed one page at a time:
ListObjectsV2, or ListObjectVersions when the bucket keeps versions (its noncurrent versions
and delete markers are hidden cost), and ListMultipartUploads with ListParts (incomplete
uploads, hidden cost too)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from typing import Any

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph.errors import HarvestError
from lineagegraph.harvest.s3.client import describe_error, endpoint_of
from lineagegraph.harvest.s3.scan import (
    DELETE_MARKER,
    NONCURRENT,
    STANDARD,
    UPLOAD,
    Hidden,
    Page,
    S3Object,
    Scope,
)
from lineagegraph.pipeline import now_ms


def listed_object(entry: dict[str, Any]) -> S3Object:
    """An S3Object from a ListObjectsV2 `Contents` entry."""
    return S3Object(
        key=entry["Key"],
        size=int(entry["Size"]),
        last_modified=int(entry["LastModified"].timestamp() * 1000),
        storage_class=entry.get("StorageClass") or STANDARD,
    )


def list_pages(client: BaseClient, scope: Scope, page_size: int) -> Generator[Page, None, None]:
    """ListObjectsV2 pages of a scope, streamed: nothing beyond one page is held.

    A page that fails after the retries ends the scope's listing: the pages before it are
    written, the scope is incomplete (nothing in it is soft-deleted) and the error says where
    the listing stopped. The next run lists the scope from its start again.
    """
    paginator = client.get_paginator("list_objects_v2")
    pages = paginator.paginate(
        Bucket=scope.bucket, Prefix=scope.prefix, PaginationConfig={"PageSize": page_size}
    )

    def page_of(response: dict[str, Any]) -> Page:
        return Page([listed_object(e) for e in response.get("Contents", ())], now_ms())

    return _pages(client, scope, pages, page_of)


def list_version_pages(
    client: BaseClient, scope: Scope, page_size: int
) -> Generator[Page, None, None]:
    """ListObjectVersions pages of a scope of a bucket that keeps versions: the latest version
    of each key is its object (as ListObjectsV2 would list it), the others and every delete
    marker are the page's hidden cost. Fails and resumes as `list_pages`."""
    paginator = client.get_paginator("list_object_versions")
    pages = paginator.paginate(
        Bucket=scope.bucket, Prefix=scope.prefix, PaginationConfig={"PageSize": page_size}
    )

    def page_of(response: dict[str, Any]) -> Page:
        objects, hidden = [], []
        for entry in response.get("Versions", ()):
            if entry.get("IsLatest"):
                objects.append(listed_object(entry))
            else:
                storage_class = entry.get("StorageClass") or STANDARD
                hidden.append(Hidden(NONCURRENT, entry["Key"], int(entry["Size"]), storage_class))
        hidden += [Hidden(DELETE_MARKER, e["Key"]) for e in response.get("DeleteMarkers", ())]
        return Page(objects, now_ms(), hidden=hidden)

    return _pages(client, scope, pages, page_of)


def list_upload_pages(
    client: BaseClient, scope: Scope, page_size: int
) -> Generator[Page, None, None]:
    """The scope's incomplete multipart uploads (ListMultipartUploads), each with its parts'
    count and bytes (ListParts), as pages of hidden cost. An upload that completes or is
    aborted while it is read (NoSuchUpload) is gone: it is left out."""
    uploads = client.get_paginator("list_multipart_uploads").paginate(
        Bucket=scope.bucket, Prefix=scope.prefix, PaginationConfig={"PageSize": page_size}
    )
    parts = client.get_paginator("list_parts")

    def page_of(response: dict[str, Any]) -> Page:
        hidden = []
        for upload in response.get("Uploads", ()):
            count = size = 0
            try:
                for listed in parts.paginate(
                    Bucket=scope.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                ):
                    for part in listed.get("Parts", ()):
                        count, size = count + 1, size + int(part["Size"])
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") == "NoSuchUpload":
                    continue
                raise
            initiated = upload.get("Initiated")
            hidden.append(
                Hidden(
                    UPLOAD,
                    upload["Key"],
                    size,
                    upload.get("StorageClass") or STANDARD,
                    count,
                    None if initiated is None else int(initiated.timestamp() * 1000),
                )
            )
        return Page([], now_ms(), hidden=hidden)

    # Pages without uploads (most buckets' only page) count as no page read.
    return (page for page in _pages(client, scope, uploads, page_of) if page.hidden)


def scope_pages(
    client: BaseClient, scope: Scope, page_size: int, versioned: bool
) -> Generator[Page, None, None]:
    """Everything a listing of the scope reads: its objects (with their versions when the bucket
    keeps them), then its incomplete multipart uploads; the first failure ends it."""
    yield from (list_version_pages if versioned else list_pages)(client, scope, page_size)
    yield from list_upload_pages(client, scope, page_size)


def versioning(client: BaseClient, bucket: str) -> tuple[bool | None, str | None]:
    """Whether the bucket keeps (or kept: versioning Suspended) object versions, so the listing
    needs ListObjectVersions (GetBucketVersioning), and else why that is unknown: then the
    bucket is listed as unversioned and its hidden cost left as an earlier run stored it. A
    missing bucket is not answered here: the listing reports it as it always did."""
    try:
        status = client.get_bucket_versioning(Bucket=bucket).get("Status")
    except (ClientError, BotoCoreError) as exc:
        code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else ""
        if code == "NoSuchBucket":
            return False, None
        what = f"reading the versioning of s3://{bucket}"
        reason = describe_error(exc, what, bucket, "", endpoint_of(client))
        return None, (
            f"{reason}; listed without versions: noncurrent versions and delete markers were "
            "not counted (grant s3:GetBucketVersioning and s3:ListBucketVersions)"
        )
    return status in ("Enabled", "Suspended"), None


def _pages(
    client: BaseClient,
    scope: Scope,
    responses: Iterable[dict[str, Any]],
    page_of: Callable[[dict[str, Any]], Page],
) -> Generator[Page, None, None]:
    """Each response as a page; a failure after the first page names where it stopped."""
    listed, last = 0, ""
    try:
        for response in responses:
            page = page_of(response)
            yield page
            listed += len(page.objects) + len(page.hidden)
            if page.objects or page.hidden:
                last = (page.objects or page.hidden)[-1].key
    except (ClientError, BotoCoreError) as exc:
        if not listed:
            raise
        what = f"listing {scope.url}"
        reason = describe_error(exc, what, scope.bucket, scope.prefix, endpoint_of(client))
        raise HarvestError(
            f"{reason}; stopped after {listed:,} objects, the last {last!r}: nothing under "
            f"{scope.url} was soft-deleted"
        ) from exc


def distinct_scopes(bucket: str, prefixes: Iterable[str]) -> list[Scope]:
    """The scopes to list, without one that another contains (listing it twice gains nothing)."""
    wanted = sorted(set(prefixes) or {""})
    kept: list[str] = []
    for prefix in wanted:  # sorted: a containing prefix comes before what it contains
        if not any(prefix.startswith(k) for k in kept):
            kept.append(prefix)
    return [Scope(bucket, p) for p in kept]
