"""S3 server access logs and CloudTrail data events, read as the object reads they record.

S3 keeps no "last accessed" time; what it does keep, when asked, are server access logs (one
line per request, space-separated: a bracketed time, quoted request, referrer and user agent,
`-` for an empty field, the key URL-encoded, newer fields appended at the end) and CloudTrail
data events (gzip JSON files of `Records`). Only reads count: a GET or HEAD of an object, the
source of a copy, an S3 Select. The principal is the requester's ARN, or the remote IP address
of an anonymous request. A line or record that is not one of these is skipped and counted, with
its file and line (or record) number: one bad line never costs the rest of its file.
"""

from __future__ import annotations

import calendar
import gzip
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from itertools import chain
from typing import Any, BinaryIO, NamedTuple
from urllib.parse import unquote, unquote_plus

# The operations of an access log that read an object's data or metadata: GET and HEAD of an
# object (by REST or the website endpoint), the source side of CopyObject and UploadPartCopy
# (logged in the source bucket), and S3 Select (SelectObjectContent is a POST).
ACCESS_LOG_READS = frozenset(
    {
        "REST.GET.OBJECT",
        "REST.HEAD.OBJECT",
        "WEBSITE.GET.OBJECT",
        "WEBSITE.HEAD.OBJECT",
        "REST.COPY.OBJECT_GET",
        "REST.COPY.PART_GET",
        "REST.POST.SELECT",
        "REST.SELECT.OBJECT_CONTENT",
    }
)
# The CloudTrail data events that read an object; CopyObject and UploadPartCopy read their
# source (x-amz-copy-source), the others the object they name.
CLOUDTRAIL_READS = frozenset({"GetObject", "HeadObject", "SelectObjectContent"})
CLOUDTRAIL_COPIES = frozenset({"CopyObject", "UploadPartCopy"})
PROBLEMS_KEPT = 100  # problems named one by one; the rest are counted
CHUNK_BYTES = 1 << 20

# bucket_owner bucket [time] remote_ip requester request_id operation key "request_uri"
# http_status error_code bytes_sent object_size total_time turnaround_time "referrer"
# "user_agent", then the newer fields (version id, host id, ...), which are not needed. Every
# field before the request URI is one token, the time two: splitting on spaces is several
# times faster than a regular expression over the whole line.
_TIME = re.compile(r"\[(\d\d)/([A-Z][a-z]{2})/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)\]")
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}
# The HTTP statuses of a read that happened, with the space after them: success (206 is a
# range) and 304, not modified, which still tells that the reader looked.
_READ_STATUSES = frozenset({f"{status} " for status in [*range(200, 300), 304]})
_TIMES_KEPT = 100_000  # distinct seconds (minutes, directories) remembered: a log names few
CUT_SHORT = "cut short or malformed: a line has at least 18 fields, up to the user agent"


class BadRecord(ValueError):
    """A line or record that is not a well-formed access log entry or data event."""


class Read(NamedTuple):
    """One read of an object: who read `key` of `bucket`, when (epoch ms). A tuple: one is
    made per line, and a frozen dataclass costs several times more to make."""

    bucket: str
    key: str
    principal: str
    at: int


SplitRead = tuple[str, str, str, str, int]
"""A read as the harvest tallies it: (bucket, directory, name, principal, epoch ms), its key
split after its last `/` (the directory ends with it, or is empty), since the directory says
which dataset was read. A plain tuple, made per line: a NamedTuple's constructor costs several
times more."""


def split_read(read: Read) -> SplitRead:
    cut = read.key.rfind("/") + 1
    return read.bucket, read.key[:cut], read.key[cut:], read.principal, read.at


@dataclass
class ReadProblems:
    """Lines and records skipped, counted, and the first PROBLEMS_KEPT named by file and line."""

    skipped: int = 0
    named: list[str] = field(default_factory=list)

    def skip(self, where: str, reason: str) -> None:
        self.skipped += 1
        if len(self.named) < PROBLEMS_KEPT:
            self.named.append(f"{where}: {reason}")

    def extend(self, later: ReadProblems) -> None:
        """Add the problems of later lines, found apart (by another process)."""
        self.skipped += later.skipped
        self.named += later.named[: max(0, PROBLEMS_KEPT - len(self.named))]


# --- server access logs -----------------------------------------------------------------------


class AccessLogParser:
    """Turns access-log lines into reads. Remembers what it has worked out: the time of each
    second and minute seen (a log's lines share few), and each directory decoded."""

    def __init__(self) -> None:
        self._times: dict[str, int] = {}  # `[06/Feb/2019:00:00:38 +0000]` -> epoch ms
        self._minutes: dict[str, int] = {}  # the same without its seconds -> epoch ms
        self._directories: dict[str, str] = {}  # encoded directory -> decoded

    def reads(
        self, lines: Iterable[str], where: str, problems: ReadProblems
    ) -> Iterator[SplitRead]:
        """The reads that lines record, as SplitReads. A request that reads nothing (a PUT, a
        listing, a failed GET) yields nothing; a line that is no access log entry is skipped
        and named in `problems` by `where` and its number.

        One loop for every line, its checks ordered so that a well-formed line takes the
        fewest steps: no call, no object but the tuple it yields, its time and directory
        looked up in what is remembered (the same directory yields the same string, whose
        hash is kept: the tally looks it up cheaply)."""
        times, directories = self._times, self._directories
        statuses, operations = _READ_STATUSES, ACCESS_LOG_READS
        for number, line in enumerate(lines, 1):
            try:
                try:  # one unpacking: cheaper than indexing the fields one by one
                    _, bucket, day, zone, ip, requester, _, operation, key, rest = line.split(
                        " ", 9
                    )
                except ValueError:  # fewer than ten fields
                    if not line or line.isspace():
                        continue
                    raise BadRecord(_shape_problem(line)) from None
                if day[:1] != "[" or zone[-1:] != "]":
                    if line.isspace():
                        continue
                    raise BadRecord(_shape_problem(line))
                # The request URI, the referrer and the user agent are the first three quoted
                # fields, so a line cut short before the user agent's end holds fewer than six
                # quotes (a quote inside a user agent only adds some).
                end = rest.find('" ', 1) if rest[:1] == '"' else -1
                if end < 0 or rest.count('"') < 6:
                    raise BadRecord(CUT_SHORT)
                if rest[end + 2 : end + 6] not in statuses:
                    _check_status(rest[end + 2 :])
                    continue
                if operation not in operations:
                    continue
                if not key or (key == "-" and not _names_dash(rest[1:end], bucket)):
                    raise BadRecord(f"{operation} with no key")
                stamp = day + " " + zone
                at = times.get(stamp)
                if at is None:
                    at = self._time(stamp)
                # an escape never spans a `/`: directory and name decode apart as they would
                # together
                cut = key.rfind("/") + 1
                if cut:
                    logged = key[:cut]
                    directory = directories.get(logged)
                    if directory is None:
                        directory = self._directory(logged)
                    name = key[cut:]
                else:  # a key at the bucket's top
                    directory, name = "", key
                if "%" in name or "+" in name:
                    name = decode_log_key(name)
                if requester == "-":
                    requester = principal_of(requester, ip)
            except BadRecord as exc:
                problems.skip(f"{where}:{number}", str(exc))
                continue
            yield bucket, directory, name, requester, at

    def _time(self, stamp: str) -> int:
        """`[06/Feb/2019:00:00:38 +0000]` in epoch ms, remembered; each minute is worked out
        once, its seconds added."""
        seconds = stamp[19:21]
        if len(stamp) == 28 and stamp[18] == ":" and seconds.isascii() and seconds.isdigit():
            minute = stamp[:19] + "00" + stamp[21:]
            at = self._minutes.get(minute)
            if at is None:
                at = _access_time(stamp)
                _remember(self._minutes, minute, at - int(seconds) * 1000)
            elif seconds > "60":
                raise BadRecord(f"bad time {stamp!r}: no such time of day")
            else:
                at += int(seconds) * 1000
        else:
            at = _access_time(stamp)  # says what is wrong with it
        _remember(self._times, stamp, at)
        return at

    def _directory(self, directory: str) -> str:
        """A directory as logged (up to its last `/`), decoded: a log names few directories
        and many files (`dt%3D2024-06-01/` on every line); remembered."""
        decoded = decode_log_key(directory)
        _remember(self._directories, directory, decoded)
        return decoded


def _shape_problem(line: str) -> str:
    """Why a line that is not blank has not the shape of an access log entry: cut short once
    it has started as one (an owner, a bucket, a time), else none at all."""
    parts = line.split(" ", 3)
    started = len(parts) > 2 and parts[2][:1] == "["
    return CUT_SHORT if started else "not an S3 server access log line"


def _remember(memo: dict[str, Any], key: str, value: Any) -> None:
    """Into a memo that is emptied when full, so that it never grows with the lines."""
    if len(memo) >= _TIMES_KEPT:
        memo.clear()
    memo[key] = value


def _check_status(field: str) -> None:
    """Raises unless a line's fields from its HTTP status on start with a number or `-`."""
    if not (field[:3].isdigit() and field[3:4] == " ") and field[:2] != "- ":
        raise BadRecord(f"HTTP status {field[:10]!r} is not a number")


def _access_time(stamp: str) -> int:
    """`[06/Feb/2019:00:00:38 +0000]` in epoch ms; each date is worked out once (`_day`)."""
    match = _TIME.fullmatch(stamp)
    if match is None:
        raise BadRecord(f"time {stamp!r:.40} is not [dd/Mon/yyyy:hh:mm:ss +hhmm]")
    _, _, _, hh, mm, ss, sign, oh, om = match.groups()
    if int(hh) > 23 or int(mm) > 59 or int(ss) > 60:
        raise BadRecord(f"bad time {stamp!r}: no such time of day")
    offset = (int(oh) * 60 + int(om)) * 60
    seconds = _day(stamp[1:12]) + int(hh) * 3600 + int(mm) * 60 + int(ss)
    return (seconds - offset if sign == "+" else seconds + offset) * 1000


@lru_cache(maxsize=4096)
def _day(date: str) -> int:
    """`06/Feb/2019` as epoch seconds at midnight UTC."""
    day, month, year = date.split("/")
    number = _MONTHS.get(month)
    if number is None:
        raise BadRecord(f"unknown month {month!r} in the time")
    try:
        return calendar.timegm(datetime(int(year), number, int(day)).timetuple())
    except ValueError as exc:
        raise BadRecord(f"bad date {date!r}: {exc}") from None


def _names_dash(request: str, bucket: str) -> bool:
    """Whether a line whose key field is `-` reads the object named `-`, which the log writes
    as it writes no key: its request URI (`GET /bucket/- HTTP/1.1`, or `GET /- ...` addressed
    to the bucket's own host name) tells."""
    parts = request.split(" ")
    path = unquote(parts[1].split("?", 1)[0]) if len(parts) > 1 else ""
    return path in ("/-", f"/{bucket}/-")


def decode_log_key(key: str) -> str:
    """A key as an access log writes it, URL-encoded, decoded as S3 Inventory keys are: form
    encoding, where `+` is a space and `%2B` a plus. An escape that is not UTF-8 is refused:
    a guessed key would name an object that does not exist."""
    if "%" not in key:
        return key.replace("+", " ")
    try:
        return unquote_plus(key, errors="strict")
    except UnicodeDecodeError:
        raise BadRecord(f"key {key!r} is not URL-encoded UTF-8") from None


def principal_of(requester: str, remote_ip: str) -> str:
    """Who read: the requester (an IAM ARN or a canonical user id), or for an anonymous
    request the remote IP address; `anonymous` when neither is known."""
    if requester and requester != "-":
        return requester
    if remote_ip and remote_ip != "-":
        return remote_ip
    return "anonymous"


# --- CloudTrail -------------------------------------------------------------------------------


def cloudtrail_reads(document: bytes, where: str, problems: ReadProblems) -> Iterator[Read]:
    """The reads of one CloudTrail log file (its JSON, uncompressed). A record that is not a
    well-formed S3 data event is skipped and named by its index in `Records`."""
    try:
        records = json.loads(document)["Records"]
        if not isinstance(records, list):
            raise TypeError("Records is not a list")
    except (ValueError, KeyError, TypeError) as exc:
        problems.skip(where, f"not a CloudTrail log file: {exc}")
        return
    for index, record in enumerate(records):
        try:
            read = cloudtrail_read(record)
        except BadRecord as exc:
            problems.skip(f"{where}: Records[{index}]", str(exc))
            continue
        if read is not None:
            yield read


def cloudtrail_read(record: Any) -> Read | None:
    """The read one CloudTrail record describes; None for any other event (a write, a
    management event, a failed request)."""
    if not isinstance(record, dict):
        raise BadRecord("not a JSON object")
    name = record.get("eventName")
    if record.get("eventSource") != "s3.amazonaws.com" or (
        name not in CLOUDTRAIL_READS and name not in CLOUDTRAIL_COPIES
    ):
        return None
    if record.get("errorCode"):
        return None
    params = record.get("requestParameters")
    if not isinstance(params, dict):
        raise BadRecord(f"{name} has no requestParameters")
    if name in CLOUDTRAIL_COPIES:
        bucket, key = _copy_source(params.get("x-amz-copy-source"), name)
    else:
        bucket, key = params.get("bucketName"), params.get("key")
    if not isinstance(bucket, str) or not bucket or not isinstance(key, str) or not key:
        raise BadRecord(f"{name} names no bucketName and key")
    return Read(bucket, key, _cloudtrail_principal(record), _event_time(record.get("eventTime")))


def _copy_source(source: Any, name: str) -> tuple[str, str]:
    """`bucket/key` of a copy's x-amz-copy-source (URL-encoded, maybe with a leading slash and
    a `?versionId=`)."""
    if not isinstance(source, str) or not source:
        raise BadRecord(f"{name} has no x-amz-copy-source")
    path = source.lstrip("/").split("?versionId=", 1)[0]
    bucket, _, key = unquote(path).partition("/")
    return bucket, key


def _cloudtrail_principal(record: dict[str, Any]) -> str:
    who = record.get("userIdentity")
    arn = who.get("arn") if isinstance(who, dict) else None
    ip = record.get("sourceIPAddress")
    return principal_of(arn if isinstance(arn, str) else "-", ip if isinstance(ip, str) else "-")


def _event_time(text: Any) -> int:
    if not isinstance(text, str):
        raise BadRecord("no eventTime")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadRecord(f"eventTime {text!r:.40} is not ISO 8601") from None
    if moment.tzinfo is None:
        raise BadRecord(f"eventTime {text!r:.40} has no time zone")
    return int(moment.timestamp() * 1000)


# --- a log file, whichever it is ---------------------------------------------------------------


def line_blocks(chunks: Iterable[bytes]) -> Iterator[list[str]]:
    """The lines (ending at `\\n`) of a stream read in chunks, a chunk's worth at a time, so
    a file is never held whole: each block decoded in one call rather than line by line
    (alike, since no UTF-8 sequence holds a `\\n`), bytes that are not UTF-8 kept as
    surrogates."""
    rest = b""
    for chunk in chunks:
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            lines = data[:cut].decode("utf-8", "surrogateescape").split("\n")
            lines.pop()  # the empty text after the last `\n`
            yield lines
    if rest:
        yield [rest.decode("utf-8", "surrogateescape")]


def chunks_of(stream: BinaryIO) -> Iterator[bytes]:
    """A binary stream in CHUNK_BYTES pieces, gunzipped when it starts with gzip's magic."""
    head = stream.read(2)
    if head == b"\x1f\x8b":
        stream = gzip.GzipFile(fileobj=_Rejoined(head, stream))  # type: ignore[assignment]
        head = b""
    yield head
    while chunk := stream.read(CHUNK_BYTES):
        yield chunk


def file_reads(
    stream: BinaryIO, where: str, problems: ReadProblems, parser: AccessLogParser
) -> Iterator[SplitRead]:
    """The reads of one log file, an access log or a CloudTrail file (JSON, `{` first),
    gzipped or not. A stream that fails (OSError, a broken gzip) raises: the caller counts
    nothing of the file, so that a later run reads it whole."""
    chunks = chunks_of(stream)
    first = b""
    for chunk in chunks:  # the first bytes say which kind of log it is
        first += chunk
        if first.strip():
            break
    if first.lstrip().startswith(b"{"):
        document = first + b"".join(chunks)
        yield from map(split_read, cloudtrail_reads(document, where, problems))
    else:
        lines = chain.from_iterable(line_blocks(_prepend(first, chunks)))
        yield from parser.reads(lines, where, problems)


def _prepend(first: bytes, chunks: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from chunks


class _Rejoined(io.RawIOBase):
    """A stream whose first bytes were already read, put back in front of the rest."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
