"""Access logs read by several processes of this machine (`harvest s3-access --workers N`):
parsing is Python's work, one core per process, and the lines of one machine's logs outrun one
core.

The pending files are cut, in delivery order, into runs of consecutive files; each worker
process tallies a run with the code the one-process harvest runs (access_tally.tally_batches:
a file whole or not at all) and sends back its tallies per (bucket, principal, dataset), the
reads of each file, its bad lines by file and line and its unreadable files. This process takes
the runs back in order and adds them up into batches: the same counts, the same problems in the
same order, the same marks as one process; memory bounded by workers x datasets x principals.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from lineagegraph.harvest.s3.access_logs import ReadProblems
from lineagegraph.harvest.s3.access_tally import (
    Batch,
    DatasetFolder,
    LogFile,
    Readers,
    ReadTallies,
    tally_batches,
)
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.identity import FoldRules

if TYPE_CHECKING:
    from lineagegraph.harvest.s3.access import AccessReport
    from lineagegraph.settings import Settings

RUN_FILES = 500  # files a worker tallies at once at most: what it sends back is one tally of them
RUNS_PER_WORKER = 4  # runs at least, so that a worker that finishes early takes another
AHEAD = 2  # runs waiting per worker: results this process has not added up yet stay few
# Not fork: this process holds threads (the graph store's) that a forked child would copy in
# whatever state they are in. (A benchmark takes spawn, whose workers are its own children, to
# count their CPU time.)
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


class RunTally(NamedTuple):
    """What a worker found in a run of files, sent back whole."""

    pairs: dict[tuple[str, str, str], list[int]]  # (bucket, principal, dataset) -> tally
    marks: list[dict[str, Any]]  # one per file read whole, in order
    reads: int
    problems: ReadProblems
    failed: list[str]


def batches_in_workers(
    pending: Sequence[LogFile],
    settings: Settings,
    scope: str,
    report: AccessReport,
    workers: int,
) -> Iterator[Batch]:
    """The files tallied by `workers` processes, in batches as one process makes them (each
    full() or the last); unreadable files and bad lines go to `report` in file order."""
    size = max(1, min(RUN_FILES, -(-len(pending) // (workers * RUNS_PER_WORKER))))
    runs = [pending[start : start + size] for start in range(0, len(pending), size)]
    job = partial(_tally_run, scope)
    start = (settings.s3, settings.identity.rules())
    folder = DatasetFolder(settings.identity.rules())
    batch = Batch(ReadTallies(folder))
    for run in _in_order(job, start, runs, min(workers, len(runs))):
        report.problems.extend(run.problems)
        report.failed_files += run.failed
        batch.absorb(run.pairs, run.marks, run.reads)
        if batch.full():
            yield batch
            batch = Batch(ReadTallies(folder))
    yield batch


_readers: Readers | None = None  # a worker's, for the harvest its pool serves


def _start_worker(settings: S3Settings, rules: FoldRules) -> None:
    """In a new worker: its readers, kept from one run to the next (folding a directory into
    its dataset, once per worker rather than once per run); Ctrl-C is for the harvest to
    handle (it stops the pool), not each worker."""
    global _readers
    _readers = Readers.of(settings, rules)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _tally_run(scope: str, files: list[LogFile]) -> RunTally:
    """Runs in a worker: a run of files tallied as one process tallies them, its batches added
    up into one."""
    assert _readers is not None, "a worker starts with _start_worker"
    problems, failed = ReadProblems(), []
    batches = tally_batches(files, _readers, scope, problems, failed)
    whole = next(batches)
    for batch in batches:
        whole.absorb(batch.tallies.pairs, batch.marks, batch.tallies.reads)
    return RunTally(whole.tallies.pairs, whole.marks, whole.tallies.reads, problems, failed)


def _in_order(
    job: Callable[[list[LogFile]], RunTally],
    start: tuple[S3Settings, FoldRules],
    runs: list[list[LogFile]],
    workers: int,
) -> Iterator[RunTally]:
    """The job's results for each run, in the runs' order, from `workers` processes, with at
    most AHEAD runs per worker asked for and not yet taken back."""
    context = multiprocessing.get_context(START_METHOD)
    waiting: deque[Future[RunTally]] = deque()
    todo = iter(runs)
    pool = ProcessPoolExecutor(workers, context, _start_worker, start)
    with pool:
        try:
            for run in todo:
                waiting.append(pool.submit(job, run))
                if len(waiting) >= workers * AHEAD:
                    break
            while waiting:
                result = waiting.popleft().result()
                run = next(todo, None)
                if run is not None:
                    waiting.append(pool.submit(job, run))
                yield result
        finally:
            for future in waiting:
                future.cancel()
