"""ListObjectsV2 as pages of a scope (a bucket and a key prefix), streamed one page at a time."""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph.errors import HarvestError
from lineagegraph.harvest.s3.client import describe_error, endpoint_of
from lineagegraph.harvest.s3.scan import STANDARD, Page, S3Object, Scope
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
    listed, last = 0, ""
    try:
        for response in pages:
            objects = [listed_object(e) for e in response.get("Contents", ())]
            yield Page(objects, now_ms())
            listed, last = listed + len(objects), objects[-1].key if objects else last
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
