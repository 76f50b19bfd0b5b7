"""What `harvest s3-access` does to each log file, in this process or in a Spark task: open it
(an S3 object or a local file), read its reads (access_logs.py), fold each key into its dataset
and tally the reads per (bucket, principal, dataset)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph import identity
from lineagegraph.harvest.s3.access_logs import (
    AccessLogParser,
    ReadProblems,
    SplitRead,
    file_reads,
)
from lineagegraph.harvest.s3.client import make_client
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.identity import FoldRules

BATCH_FILES = 5_000  # log files written (and marked) in one statement at most
BATCH_PAIRS = 20_000  # (reader, dataset) pairs in a batch: it is written once it holds as many
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
    """Reads summed per (bucket, principal, dataset urn) in `pairs`: [count, first, last] (a
    list: one is updated per read).

    Each list is reached, read by read, through the key's directory: `_routes` takes a
    bucket's directories to the principals' tallies of the dataset they fold into, so that a
    read costs two lookups by plain strings, and no tuple is made for the lookup."""

    def __init__(self, folder: DatasetFolder) -> None:
        self.folder = folder
        self.pairs: dict[tuple[str, str, str], list[int]] = {}
        self.reads = 0
        self._routes: dict[str, dict[str, dict[str, list[int]]]] = {}  # bucket -> directory ->
        self._datasets: dict[tuple[str, str], dict[str, list[int]]] = {}  # principal -> tally

    def add(self, reads: Iterable[SplitRead]) -> None:
        """Tally reads."""
        routes, count = self._routes, 0
        bucket_of: str | None = None
        directories: dict[str, dict[str, list[int]]] = {}
        for bucket, directory, name, principal, at in reads:
            count += 1
            if bucket != bucket_of:
                directories = routes.get(bucket) or self._bucket(bucket)
                bucket_of = bucket
            principals = directories.get(directory)
            if principals is None:
                principals = self._route(bucket, directory, name)
            tally = principals.get(principal)
            if tally is None:
                principals[principal] = tally = self._pair(bucket, principal, directory + name, at)
            tally[0] += 1
            if at < tally[1]:
                tally[1] = at
            elif at > tally[2]:
                tally[2] = at
        self.reads += count

    def _bucket(self, bucket: str) -> dict[str, dict[str, list[int]]]:
        directories: dict[str, dict[str, list[int]]] = {}
        self._routes[bucket] = directories
        return directories

    def _route(self, bucket: str, directory: str, name: str) -> dict[str, list[int]]:
        """The principals' tallies of the dataset a directory folds into, remembered (up to
        DIRECTORIES_KEPT directories in all)."""
        directories = self._routes[bucket]
        if len(directories) >= DIRECTORIES_KEPT:
            directories.clear()
        dataset = (bucket, self.folder.dataset_of(bucket, directory + name))
        principals = self._datasets.get(dataset)
        if principals is None:
            self._datasets[dataset] = principals = {}
        directories[directory] = principals
        return principals

    def _pair(self, bucket: str, principal: str, key: str, at: int) -> list[int]:
        """A new tally, of no reads yet."""
        tally = [0, at, at]
        self.pairs[bucket, principal, self.folder.dataset_of(bucket, key)] = tally
        return tally


@dataclass
class Batch:
    """Files whose reads are written together: their tallies, and a mark per file."""

    tallies: ReadTallies
    marks: list[dict[str, Any]] = field(default_factory=list)

    def mark(self, file: LogFile, scope: str, reads: int) -> None:
        self.marks.append({"key": file.location, "scope": scope, "delivered": file.delivered,
                           "reads": reads})  # fmt: skip

    def full(self) -> bool:
        """Whether the batch is to be written now: its statement would grow too big."""
        return len(self.tallies.pairs) >= BATCH_PAIRS or len(self.marks) >= BATCH_FILES

    def absorb(self, pairs: Mapping[tuple[str, str, str], list[int]], marks: list[dict[str, Any]],
               reads: int) -> None:  # fmt: skip
        """Add another process's tallies and marks of other files: counts add up, the first
        and last reads are the earliest and the latest."""
        mine = self.tallies.pairs
        for pair, (count, first, last) in pairs.items():
            tally = mine.get(pair)
            if tally is None:
                mine[pair] = [count, first, last]
            else:
                tally[0] += count
                tally[1] = min(tally[1], first)
                tally[2] = max(tally[2], last)
        self.marks += marks
        self.tallies.reads += reads


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
    with opener(location) as stream:
        into.add(file_reads(stream, location, problems, parser))
    return into.reads - before


class Readers(NamedTuple):
    """What reads log files, and remembers what it worked out (an S3 client, each second's
    time, each directory's dataset): made once per process and harvest."""

    opener: LogOpener
    parser: AccessLogParser
    folder: DatasetFolder

    @classmethod
    def of(cls, settings: S3Settings, rules: FoldRules) -> Readers:
        return cls(LogOpener(settings), AccessLogParser(), DatasetFolder(rules))


def tally_batches(
    files: Sequence[LogFile],
    readers: Readers,
    scope: str,
    problems: ReadProblems,
    failed: list[str],
) -> Iterator[Batch]:
    """Files read and tallied in this process, in order, in batches that are full() or hold
    the last files. Reads go straight into their batch's tallies; a file that cannot be read
    whole is named in `failed`, and its batch is tallied again without it (rare, and cheaper
    than a tally per file merged into the batch, the cost of every file)."""
    opener, parser, folder = readers
    batch, members = Batch(ReadTallies(folder)), []
    for file in files:
        try:
            reads = tally_file(file.location, opener, parser, problems, batch.tallies)
        except UNREADABLE as exc:
            failed.append(unreadable(file.location, exc))
            batch, members = _again(members, folder, parser, opener, scope, failed)
            continue
        batch.mark(file, scope, reads)
        members.append(file)
        if batch.full():
            yield batch
            batch, members = Batch(ReadTallies(folder)), []
    yield batch


def _again(
    members: list[LogFile],
    folder: DatasetFolder,
    parser: AccessLogParser,
    opener: LogOpener,
    scope: str,
    failed: list[str],
) -> tuple[Batch, list[LogFile]]:
    """A batch of these files tallied anew (their bad lines were reported the first time);
    one that now fails is named in `failed` and left out too."""
    batch, kept = Batch(ReadTallies(folder)), []
    for file in members:
        try:
            reads = tally_file(file.location, opener, parser, ReadProblems(), batch.tallies)
        except UNREADABLE as exc:
            failed.append(unreadable(file.location, exc))
            return _again([f for f in members if f is not file], folder, parser, opener, scope,
                          failed)  # fmt: skip
        batch.mark(file, scope, reads)
        kept.append(file)
    return batch, kept


def unreadable(location: str, exc: BaseException) -> str:
    """The problem of a file that could not be read whole."""
    return f"{location}: unreadable, none of it counted: {exc}"
