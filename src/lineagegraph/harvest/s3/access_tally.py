"""What `harvest s3-access` does to each log file, in this process or in a Spark task: open it
(an S3 object or a local file), read its reads (access_logs.py), fold each key into its dataset
and tally the reads per (bucket, principal, dataset)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph import identity
from lineagegraph.harvest.s3.access_logs import AccessLogParser, Read, ReadProblems, file_reads
from lineagegraph.harvest.s3.client import make_client
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.identity import FoldRules

BATCH_FILES = 5_000  # log files written (and marked) in one statement at most
DIRECTORIES_KEPT = 100_000  # (bucket, directory) -> dataset urns remembered
UNREADABLE = (OSError, EOFError, ClientError, BotoCoreError)
"""How reading a log file fails (a broken gzip, a vanished file, an S3 error): it then counts
for nothing."""


class LogFile(NamedTuple):
    """A log file to read: where (an s3:// url or a local path), when it was delivered."""

    location: str
    delivered: int  # epoch ms: LastModified, or a local file's mtime


class LogOpener:
    """Opens log files by location; the S3 client is made on first use (a Spark task makes
    its own: a client does not travel to executors)."""

    def __init__(self, settings: S3Settings) -> None:
        self.settings = settings
        self._client: BaseClient | None = None

    def __call__(self, location: str) -> BinaryIO:
        if not location.startswith("s3://"):
            return open(location, "rb")  # the caller closes it
        if self._client is None:
            self._client = make_client(self.settings)
        bucket, _, key = location[len("s3://") :].partition("/")
        body: Any = self._client.get_object(Bucket=bucket, Key=key)["Body"]
        return body  # type: ignore[no-any-return]


class DatasetFolder:
    """Keys to the datasets they fold into, as an S3 listing folds them
    (identity.s3_dataset_urn_for_key), each directory worked out once."""

    def __init__(self, rules: FoldRules) -> None:
        self.rules = rules
        self.known: dict[tuple[str, str], str] = {}  # (bucket, directory) -> dataset urn

    def dataset_of(self, bucket: str, key: str) -> str:
        directory = key[: key.rfind("/") + 1]
        urn = self.known.get((bucket, directory))
        if urn is None:
            urn = identity.s3_dataset_urn_for_key(bucket, key, self.rules)
            if len(self.known) >= DIRECTORIES_KEPT:
                self.known.clear()
            self.known[bucket, directory] = urn
        return urn


class ReadTallies:
    """Reads summed per (bucket, principal, dataset urn): [count, first, last] (a list: one is
    updated per line)."""

    def __init__(self, folder: DatasetFolder) -> None:
        self.folder = folder
        self.pairs: dict[tuple[str, str, str], list[int]] = {}
        self.reads = 0

    def add(self, read: Read) -> None:
        bucket, key, principal, at = read
        dataset = self.folder.known.get((bucket, key[: key.rfind("/") + 1]))
        if dataset is None:
            dataset = self.folder.dataset_of(bucket, key)
        pair = (bucket, principal, dataset)
        tally = self.pairs.get(pair)
        if tally is None:
            self.pairs[pair] = [1, at, at]
        else:
            tally[0] += 1
            if at < tally[1]:
                tally[1] = at
            elif at > tally[2]:
                tally[2] = at
        self.reads += 1

    def merge(self, other: ReadTallies) -> None:
        for pair, (count, first, last) in other.pairs.items():
            tally = self.pairs.get(pair)
            if tally is None:
                self.pairs[pair] = [count, first, last]
            else:
                tally[0] += count
                tally[1] = min(tally[1], first)
                tally[2] = max(tally[2], last)
        self.reads += other.reads


@dataclass
class Batch:
    """Files whose reads are written together: their tallies, and a mark per file."""

    tallies: ReadTallies
    marks: list[dict[str, Any]] = field(default_factory=list)

    def mark(self, file: LogFile, scope: str, reads: int) -> None:
        self.marks.append({"key": file.location, "scope": scope, "delivered": file.delivered,
                           "reads": reads})  # fmt: skip


def tally_file(
    location: str,
    opener: LogOpener,
    parser: AccessLogParser,
    problems: ReadProblems,
    into: ReadTallies,
) -> int:
    """Tally the reads of one log file into `into`; returns how many. Raises one of
    UNREADABLE when the file cannot be read whole: `into` then holds part of it, and the
    caller starts it again without the file."""
    before = into.reads
    add = into.add
    with opener(location) as stream:
        for read in file_reads(stream, location, problems, parser):
            add(read)
    return into.reads - before


def unreadable(location: str, exc: BaseException) -> str:
    """The problem of a file that could not be read whole."""
    return f"{location}: unreadable, none of it counted: {exc}"
