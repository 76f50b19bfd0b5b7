"""Access logs too big for one machine: Spark tasks read and tally the log files
(`harvest s3-access --spark MASTER`), as the S3 Inventory roll-ups do (inventory_spark.py).

Each task opens its files itself (an S3 object through its own boto3 client, or a local path
the executors see) and tallies them with the code the one-machine harvest runs (access_tally.py),
a file whole or not at all; Spark sums the tallies per batch of files and (bucket, principal,
dataset). The driver then writes each batch with its files' marks, as without Spark: the same
counts, exactly, and memory bounded by batches x datasets x principals, never by lines.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from lineagegraph.errors import HarvestError
from lineagegraph.harvest.s3.access_logs import AccessLogParser, ReadProblems
from lineagegraph.harvest.s3.access_tally import (
    BATCH_FILES,
    UNREADABLE,
    Batch,
    DatasetFolder,
    LogFile,
    LogOpener,
    ReadTallies,
    tally_file,
    unreadable,
)
from lineagegraph.harvest.s3.inventory_spark import task_error
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.identity import FoldRules

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lineagegraph.harvest.s3.access import AccessReport
    from lineagegraph.settings import Settings


def batches_with_spark(
    spark: SparkSession,
    settings: Settings,
    pending: list[LogFile],
    scope: str,
    report: AccessReport,
) -> list[Batch]:
    """The files tallied by Spark tasks, in batches of BATCH_FILES files in delivery order;
    unreadable files and skipped lines go to `report` as without Spark."""
    if not pending:
        return []
    assigned = [(i // BATCH_FILES, file) for i, file in enumerate(pending)]
    job = partial(_tally_task, settings.s3, settings.identity.rules())
    slices = max(1, min(len(assigned), spark.sparkContext.defaultParallelism * 4))
    try:
        results = spark.sparkContext.parallelize(assigned, slices).flatMap(job)
        collected = results.reduceByKey(_combine).collect()
    except Exception as exc:  # Py4J/PythonException: the task's own message is in the text
        reason = task_error(exc)
        raise HarvestError(f"Spark could not tally the logs of {scope}: {reason}") from None
    folder = DatasetFolder(settings.identity.rules())
    batches = [Batch(ReadTallies(folder)) for _ in range(-(-len(pending) // BATCH_FILES))]
    files: dict[str, tuple[int, int]] = {}  # location -> (batch, reads)
    for key, value in collected:
        if key[0] == "pair":
            _, number, *pair = key
            batches[number].tallies.pairs[tuple(pair)] = list(value)  # type: ignore[index]
            continue
        number, reads, skipped, named, error = value
        if error is not None:
            report.failed_files.append(error)
            continue
        report.problems.extend(ReadProblems(skipped, named))
        files[key[1]] = (number, reads)
    for file in pending:  # the marks in delivery order, as without Spark
        if file.location in files:
            number, reads = files[file.location]
            batches[number].marks.append(
                {"key": file.location, "scope": scope, "delivered": file.delivered, "reads": reads}
            )
            batches[number].tallies.reads += reads
    return batches


def _tally_task(
    settings: S3Settings, rules: FoldRules, assigned: tuple[int, LogFile]
) -> list[tuple[tuple[Any, ...], Any]]:
    """Runs in a Spark task: one file as (("pair", batch, bucket, principal, dataset),
    (count, first, last)) pairs and one (("file", location), (batch, reads, lines skipped,
    problems named, unreadable or None))."""
    number, file = assigned
    problems, tallies = ReadProblems(), ReadTallies(DatasetFolder(rules))
    try:
        tally_file(file.location, LogOpener(settings), AccessLogParser(), problems, tallies)
    except UNREADABLE as exc:
        return [(("file", file.location), (number, 0, 0, [], unreadable(file.location, exc)))]
    out: list[tuple[tuple[Any, ...], Any]] = [
        (("pair", number, *pair), tuple(tally)) for pair, tally in tallies.pairs.items()
    ]
    out.append(
        (("file", file.location), (number, tallies.reads, problems.skipped, problems.named, None))
    )
    return out


def _combine(a: Any, b: Any) -> Any:
    """Two tallies of one (batch, bucket, principal, dataset): counts add up, the first and
    last reads are the earliest and latest. A file's key is never combined (one per file)."""
    return (a[0] + b[0], min(a[1], b[1]), max(a[2], b[2]))
