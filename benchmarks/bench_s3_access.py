"""S3 server access logs parsed and tallied per (dataset, principal): lines per second, against
reading the same files alone, and the peak memory.

Writes `--lines` access-log lines (AWS's format, newer trailing fields included) into
`--files` files: GETs, HEADs, copies and PUTs, listings and failed requests, by `--principals`
principals (a tenth anonymous) over `--datasets` datasets of Hive-partitioned keys, some keys
URL-encoded. Then, in this process:

1. the baseline: the files read and split into lines, nothing more;
2. what `harvest s3-access` does to them before writing: each line parsed
   (harvest/s3/access_logs.py), its key folded into its dataset, its read tallied per
   (bucket, principal, dataset) into one batch (harvest/s3/access_tally.py).

3. the same with `--workers` processes (harvest/s3/access_workers.py, `harvest s3-access
   --workers N`), whose tallies must equal those of step 2 exactly.

Prints lines/s of each (wall clock, and per CPU second of this process and its workers) and
their ratio to reading alone, the tallies' size, and the peak RSS (this process; the largest
worker), which must follow datasets x principals, not lines (the lines are never held). The
goal: at least 100,000 lines/s on 10,000,000 lines, without Spark.

    python benchmarks/bench_s3_access.py                     # 10,000,000 lines (~3 GB on disk)
    python benchmarks/bench_s3_access.py --lines 1000000 --workers 2 4
    python benchmarks/bench_s3_access.py --keep /data/logs10m   # the logs kept for the next run
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import tempfile
import time
from pathlib import Path
from urllib.parse import quote_plus

from small import parse_args

from lineagegraph.harvest.s3 import access_workers
from lineagegraph.harvest.s3.access import AccessReport
from lineagegraph.harvest.s3.access_logs import (
    AccessLogParser,
    ReadProblems,
    chunks_of,
    line_blocks,
)
from lineagegraph.harvest.s3.access_tally import (
    Batch,
    DatasetFolder,
    LogFile,
    LogOpener,
    ReadTallies,
    tally_file,
)
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.identity import NO_FOLD_RULES
from lineagegraph.settings import Settings

GOAL_LINES_S = 100_000
OWNER = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
# (operation, HTTP status, share of the lines): mostly object reads, as a data lake's logs are.
MIX = [
    ("REST.GET.OBJECT", "200", 60), ("REST.GET.OBJECT", "206", 5),
    ("REST.HEAD.OBJECT", "200", 10), ("REST.GET.OBJECT", "403", 2),
    ("REST.COPY.OBJECT_GET", "200", 2), ("REST.PUT.OBJECT", "200", 15),
    ("REST.GET.BUCKET", "200", 5), ("REST.HEAD.OBJECT", "404", 1),
]  # fmt: skip


def write_logs(root: Path, lines: int, files: int, datasets: int, principals: int) -> int:
    """The log files; returns their total bytes. Times advance a second every few lines."""
    rng = random.Random(7)
    who = [
        f"arn:aws:sts::123456789012:assumed-role/role-{i}/session-{i}"
        if i % 10
        else f"-\t198.51.100.{i % 250}"
        for i in range(principals)
    ]
    names = [
        f"zone-{i % 7}/table {i}" if i % 5 == 0 else f"zone-{i % 7}/table_{i}"
        for i in range(datasets)
    ]
    weighted = [m for m in MIX for _ in range(m[2])]
    per_file = -(-lines // files)
    written, total, second = 0, 0, 1_717_200_000
    for number in range(files):
        rows = []
        for _ in range(min(per_file, lines - written)):
            if rng.random() < 0.2:
                second += 1
            t = time.gmtime(second)
            stamp = (
                f"[{t.tm_mday:02}/{MONTHS[t.tm_mon - 1]}/{t.tm_year}:{t.tm_hour:02}:"
                f"{t.tm_min:02}:{t.tm_sec:02} +0000]"
            )
            operation, status, _ = rng.choice(weighted)
            requester, _, ip = rng.choice(who).partition("\t")
            day, part = rng.randint(1, 30), rng.randint(0, 99)
            key = f"{rng.choice(names)}/dt=2024-06-{day:02}/part-{part:05}.parquet"
            encoded = quote_plus(key, safe="/")
            rows.append(
                f"{OWNER} lake {stamp} {ip or '192.0.2.3'} {requester} 3E57427F3EXAMPLE "
                f'{operation} {encoded} "GET /lake/{encoded} HTTP/1.1" {status} - 1024 4096 '
                '12 11 "-" '
                f'"aws-sdk-java/1.12.500 Linux/5.10 OpenJDK_64-Bit_Server_VM/17" - '
                "s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/VLi31234= "
                "SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader lake.s3.us-east-1.amazonaws.com "
                "TLSv1.2 - - us-east-1\n"
            )
        data = "".join(rows).encode()
        (root / f"2024-06-01-00-00-{number:06}-EXAMPLE").write_bytes(data)
        written += len(rows)
        total += len(data)
    return total


def read_alone(paths: list[Path]) -> int:
    """The baseline: every file read, decoded and split into lines, as the harvest reads it."""
    count = 0
    for path in paths:
        with path.open("rb") as stream:
            for lines in line_blocks(chunks_of(stream)):
                count += len(lines)
    return count


def parse_and_tally(paths: list[Path]) -> tuple[ReadTallies, ReadProblems]:
    """What the harvest does before it writes (access.py's batches): each file parsed, its
    keys folded, its reads tallied into one batch (access_tally.tally_file)."""
    folder, parser, problems = DatasetFolder(NO_FOLD_RULES), AccessLogParser(), ReadProblems()
    tallies, opener = ReadTallies(folder), LogOpener(S3Settings())
    for path in paths:
        tally_file(str(path), opener, parser, problems, tallies)
    return tallies, problems


def in_workers(paths: list[Path], workers: int) -> tuple[ReadTallies, AccessReport]:
    """The same files tallied by worker processes (access_workers.py), every batch added up."""
    report = AccessReport()
    access_workers.START_METHOD = "spawn"  # workers that are children: their CPU time counts
    files = [LogFile(str(path), 0) for path in paths]
    whole = Batch(ReadTallies(DatasetFolder(NO_FOLD_RULES)))
    for batch in access_workers.batches_in_workers(files, Settings(), "bench", report, workers):
        whole.absorb(batch.tallies.pairs, batch.marks, batch.tallies.reads)
    return whole.tallies, report


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the workers)."""
    mine, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000, help="access-log lines")
    parser.add_argument("--files", type=int, default=2_000, help="log files they are in")
    parser.add_argument("--datasets", type=int, default=500, help="datasets the keys fall in")
    parser.add_argument("--principals", type=int, default=100, help="who reads")
    parser.add_argument(
        "--workers", type=int, nargs="*", default=[2], help="worker processes to compare (0: none)"
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="keep the logs in DIR, or reuse them from there"
    )
    args = parse_args(parser, lines=20_000, files=20, datasets=50, principals=10)
    with tempfile.TemporaryDirectory(prefix="bench-s3-access-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        if any(root.iterdir()):  # kept from an earlier run, of the sizes asked then
            size, what = sum(path.stat().st_size for path in root.iterdir()), "reused"
        else:
            size = write_logs(root, args.lines, args.files, args.datasets, args.principals)
            what = "wrote"
        paths = sorted(root.iterdir())
        print(
            f"{what} {args.lines:,} lines in {len(paths):,} files ({size / 2**20:,.0f} MiB) in "
            f"{time.perf_counter() - started:.1f} s; load {os.getloadavg()[0]:.1f}"
        )
        rss_before = peak_rss_mib()
        started, cpu = time.perf_counter(), time.process_time()
        counted = read_alone(paths)
        alone_s, alone_cpu = time.perf_counter() - started, time.process_time() - cpu
        started, cpu = time.perf_counter(), time.process_time()
        tallies, problems = parse_and_tally(paths)
        parse_s, parse_cpu = time.perf_counter() - started, time.process_time() - cpu
        load = os.getloadavg()[0]
        if counted != args.lines or problems.skipped:
            raise SystemExit(
                f"read {counted:,} lines of {args.lines:,}; {problems.skipped} skipped"
            )
        print(
            f"read alone: {alone_s:.2f} s ({alone_cpu:.2f} s CPU), {args.lines / alone_s:,.0f} "
            f"lines/s ({args.lines / alone_cpu:,.0f} per CPU second)"
        )
        report("1 process", args.lines, parse_s, parse_cpu, alone_s, alone_cpu, load)
        print(
            f"  {tallies.reads:,} reads into {len(tallies.pairs):,} (dataset, principal) "
            f"tallies; peak RSS {peak_rss_mib():,.0f} MiB ({rss_before:,.0f} MiB before the "
            "reading)"
        )
        for workers in (n for n in args.workers if n > 0):
            started, cpu = time.perf_counter(), cpu_seconds()
            split, split_report = in_workers(paths, workers)
            took, took_cpu = time.perf_counter() - started, cpu_seconds() - cpu
            if split.pairs != tallies.pairs or split_report.problems.skipped:
                raise SystemExit(f"{workers} workers: not the tallies of one process")
            label = f"{workers} workers"
            report(label, args.lines, took, took_cpu, alone_s, alone_cpu, os.getloadavg()[0])
            print(
                f"  the same {len(split.pairs):,} tallies; peak RSS {peak_rss_mib():,.0f} MiB "
                f"here, {peak_rss_mib(resource.RUSAGE_CHILDREN):,.0f} MiB the largest worker"
            )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def report(
    label: str, lines: int, took: float, cpu: float, alone_s: float, alone_cpu: float, load: float
) -> None:
    """One way of parsing and tallying: lines/s by the wall clock and per CPU second, and both
    ratios to reading the files alone. On a shared machine the wall clock also measures the
    others' work; the CPU seconds do not (though a busy machine slows each CPU second too)."""
    rate, cpu_rate = lines / took, lines / cpu
    print(
        f"{label}: parsed and tallied in {took:.2f} s ({cpu:.2f} s CPU), {rate:,.0f} lines/s "
        f"({cpu_rate:,.0f} per CPU second); {took / alone_s:.2f}x reading alone "
        f"({cpu / alone_cpu:.2f}x by CPU); load {load:.1f}; goal {GOAL_LINES_S:,} lines/s: "
        f"wall clock {'met' if rate >= GOAL_LINES_S else 'NOT met'}, per CPU second "
        f"{'met' if cpu_rate >= GOAL_LINES_S else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
