"""Writing S3 server access log lines and CloudTrail files as AWS does, for the tests (and the
benchmark) of harvest/s3/access_logs.py and `harvest s3-access`."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

OWNER = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"
ROLE = "arn:aws:sts::123456789012:assumed-role/analyst/alice"

# AWS's documented example log (the "Amazon S3 server access log format" page): five records,
# all of them bucket operations or a PUT, none a read of an object.
AWS_EXAMPLE = (Path(__file__).parent / "data" / "aws_access_log_example.txt").read_text()


def log_time(at_ms: int) -> str:
    """The bracketed time of a log line, in UTC."""
    return datetime.fromtimestamp(at_ms / 1000, UTC).strftime("[%d/%b/%Y:%H:%M:%S +0000]")


def access_line(
    bucket: str,
    key: str,
    at_ms: int,
    requester: str = ROLE,
    *,
    ip: str = "192.0.2.3",
    operation: str = "REST.GET.OBJECT",
    status: str = "200",
    agent: str = "aws-cli/2.15.0 Python/3.11",
    newer_fields: bool = True,
) -> str:
    """One access log line as S3 writes it: the key URL-encoded (form encoding), the request
    URI percent-encoded, `-` for what does not apply; `newer_fields` adds the trailing fields
    that later versions of the format appended."""
    encoded = quote_plus(key, safe="/")
    method = operation.split(".")[1] if operation.count(".") >= 2 else "GET"
    uri = f"{method} /{bucket}/{quote(key, safe='/')} HTTP/1.1"
    line = (
        f"{OWNER} {bucket} {log_time(at_ms)} {ip} {requester} 3E57427F3EXAMPLE {operation} "
        f'{encoded} "{uri}" {status} - 1024 1024 12 11 "-" "{agent}" -'
    )
    if newer_fields:
        line += (
            " s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6Uk= SigV4 ECDHE-RSA-AES128-GCM-SHA256 "
            f"AuthHeader {bucket}.s3.us-east-1.amazonaws.com TLSv1.2 - - us-east-1"
        )
    return line


def cloudtrail_record(
    bucket: str,
    key: str,
    at_ms: int,
    arn: str | None = ROLE,
    *,
    event: str = "GetObject",
    ip: str = "192.0.2.3",
    error: str | None = None,
) -> dict[str, Any]:
    """One CloudTrail S3 data event as CloudTrail writes it (CopyObject names its source in
    x-amz-copy-source; the destination is another key of the same bucket)."""
    when = datetime.fromtimestamp(at_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    identity: dict[str, Any] = (
        {"type": "AssumedRole", "principalId": "AROAEXAMPLE:alice", "arn": arn,
         "accountId": "123456789012"}
        if arn
        else {"type": "AWSAccount", "principalId": "", "accountId": "anonymous"}
    )  # fmt: skip
    params: dict[str, Any] = {"bucketName": bucket, "Host": f"{bucket}.s3.amazonaws.com"}
    if event in ("CopyObject", "UploadPartCopy"):
        params |= {"key": "copies/out", "x-amz-copy-source": f"{bucket}/{quote(key, safe='/')}"}
    else:
        params["key"] = key
    record: dict[str, Any] = {
        "eventVersion": "1.09", "userIdentity": identity, "eventTime": when,
        "eventSource": "s3.amazonaws.com", "eventName": event, "awsRegion": "us-east-1",
        "sourceIPAddress": ip, "userAgent": "[aws-cli/2.15.0]", "requestParameters": params,
        "responseElements": None, "requestID": "EXAMPLE123", "eventID": "0f1e2d3c",
        "readOnly": event != "CopyObject", "eventType": "AwsApiCall", "managementEvent": False,
        "recipientAccountId": "123456789012", "eventCategory": "Data",
        "resources": [{"type": "AWS::S3::Object", "ARN": f"arn:aws:s3:::{bucket}/{key}"}],
    }  # fmt: skip
    if error:
        record |= {"errorCode": error, "errorMessage": "Access Denied"}
    return record


def cloudtrail_file(records: list[dict[str, Any]]) -> bytes:
    """A CloudTrail log file: gzip JSON with its records under `Records`."""
    return gzip.compress(json.dumps({"Records": records}).encode())
