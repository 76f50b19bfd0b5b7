"""The S3 client every S3 harvest uses, and one-line messages for its errors.

Any S3-compatible endpoint (AWS, Ceph RGW, MinIO, moto) is reached the same way; throttling is
retried by botocore. `describe_error` turns a client error into what failed where and which
setting or permission fixes it, so a run's `errors` can be read without a traceback.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import boto3
import botocore.session
import botocore.utils
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
)

from lineagegraph.errors import ConfigError, LineageGraphError
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.identity import IdentityError

_THROTTLED = frozenset({
    "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
    "TooManyRequestsException", "RequestThrottled", "ServiceUnavailable", "503",
})  # fmt: skip
_DENIED = frozenset({"AccessDenied", "AllAccessDisabled", "Forbidden", "403"})
_BAD_CREDENTIALS = frozenset({
    "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
    "TokenRefreshRequired", "InvalidSecurity",
})  # fmt: skip
_WRONG_REGION = frozenset({"PermanentRedirect", "AuthorizationHeaderMalformed", "301"})
_UNREACHABLE = (
    EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, ConnectionClosedError,
)  # fmt: skip


def parse_timestamp(value: Any) -> datetime:
    """botocore's timestamp parser, with a fast path for the ISO 8601 UTC times that listings
    carry (`2024-05-01T12:00:00.000Z`): botocore reads every one with dateutil, most of the CPU
    time of a ListObjectsV2 page (docs/s3.md, "Performance and memory"). Anything else goes to
    botocore's own parser, so values are the same either way (aware datetimes in UTC)."""
    if isinstance(value, str) and value.endswith("Z") and "T" in value:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    return botocore.utils.parse_timestamp(value)


def make_client(settings: S3Settings) -> BaseClient:
    """An S3 client for any S3-compatible endpoint, retrying throttling with backoff."""
    secret = settings.secret_access_key
    token = settings.session_token
    core = botocore.session.get_session()
    core.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=parse_timestamp
    )
    try:
        session = boto3.session.Session(
            botocore_session=core,
            profile_name=settings.profile,
            aws_access_key_id=settings.access_key_id,
            aws_secret_access_key=secret.get_secret_value() if secret else None,
            aws_session_token=token.get_secret_value() if token else None,
            region_name=settings.region,
        )
    except ProfileNotFound:
        raise ConfigError(
            f"s3.profile {settings.profile!r} is not in the AWS config files "
            "(~/.aws/config, ~/.aws/credentials); fix LINEAGEGRAPH_S3__PROFILE or [s3] profile"
        ) from None
    config = Config(
        retries={"mode": settings.retry_mode, "total_max_attempts": settings.retry_attempts},
        connect_timeout=settings.connect_timeout,
        read_timeout=settings.read_timeout,
        max_pool_connections=max(10, 2 * settings.parallelism),
        s3={"addressing_style": settings.addressing_style},
    )
    try:
        return session.client("s3", endpoint_url=settings.endpoint_url, config=config)
    except ValueError as exc:  # botocore rejects malformed endpoints and regions here
        raise ConfigError(
            f"cannot make an S3 client (check s3.endpoint_url and s3.region): {exc}"
        ) from None


def bucket_region(client: BaseClient, bucket: str) -> tuple[str | None, str | None]:
    """The bucket's region (GetBucketLocation), which classification policies check, and a
    warning instead when it cannot be read (no s3:GetBucketLocation): the listing goes on and
    its datasets keep the region a previous run read. An empty location is us-east-1, and the
    legacy `EU` is eu-west-1, as AWS documents."""
    try:
        found = client.get_bucket_location(Bucket=bucket).get("LocationConstraint")
    except (ClientError, BotoCoreError) as exc:  # an unreachable endpoint: the listing says
        code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
        code = code or type(exc).__name__
        return None, (
            f"the region of bucket {bucket!r} was not read ({code}; the credentials need "
            "s3:GetBucketLocation): classification policies cannot check its region"
        )
    return {None: "us-east-1", "": "us-east-1", "EU": "eu-west-1"}.get(found, found), None


def endpoint_of(client: BaseClient) -> str:
    return str(client.meta.endpoint_url)


def describe_error(exc: BaseException, what: str, bucket: str, key: str, endpoint: str) -> str:
    """One line saying what failed where and how to fix it, for an S3 client error."""
    where = f"s3://{bucket}/{key}"
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        detail = error.get("Message") or code or status
        if code == "NoSuchBucket":
            return (
                f"bucket {bucket!r} does not exist at {endpoint} ({what}); "
                "check the bucket name and s3.endpoint_url / s3.region"
            )
        if code in ("NoSuchKey", "404"):
            return f"{where} does not exist ({what})"
        if code in _DENIED:
            need = "s3:ListBucket" if what.startswith("listing") else "s3:GetObject"
            return f"access denied {what}: the credentials need {need} on {where} ({detail})"
        if code in _BAD_CREDENTIALS:
            return (
                f"{endpoint} rejected the credentials ({code}) {what}; check s3.access_key_id / "
                "s3.secret_access_key or s3.profile"
            )
        if code in _THROTTLED:
            attempts = exc.response.get("ResponseMetadata", {}).get("RetryAttempts", 0) + 1
            return (
                f"S3 kept throttling ({code}) {what} after {attempts} attempts; "
                "lower s3.parallelism or raise s3.retry_attempts"
            )
        if code in _WRONG_REGION:
            return f"bucket {bucket!r} is in another region ({detail}); set s3.region ({what})"
        return f"S3 error {code or status} {what}: {detail}"
    if isinstance(exc, _UNREACHABLE):
        return f"cannot reach S3 at {endpoint} ({what}): {exc}; check s3.endpoint_url"
    if isinstance(exc, NoCredentialsError):
        return (
            f"no AWS credentials found ({what}); set s3.profile or s3.access_key_id and "
            "s3.secret_access_key (or the AWS_* environment variables)"
        )
    if isinstance(exc, BotoCoreError):
        return f"S3 client error {what}: {exc}"
    if isinstance(exc, LineageGraphError | IdentityError):
        return str(exc)
    return f"unexpected {type(exc).__name__} {what}: {exc}"
