"""The orphan report over 1,000,000 S3 objects in the embedded store, against a per-object baseline.

Builds ten buckets of Hive-partitioned datasets (200 objects each, a _SUCCESS marker per
partition, mixed storage classes) through the store's batch writer. Spark jobs read some
datasets within the 90-day window and some before it, COPY INTO loads some into Snowflake, one
job reads a whole zone (100 datasets) and one a whole bucket (long ago), and a few thousand
objects are read or loaded on their own. Then it times the orphan report (cold: the first run
includes FalkorDB compiling the statement; then warm), the cost report, and on one bucket
(a tenth of the objects) the report against the same question asked once per object
(benchmarks/orphans_per_file.cypher), measured in this run. Every count is checked against the
orphans the generator knows it made. Prints figures, ratios and peak memory.

    python benchmarks/bench_orphans.py                   # 1,000,000 objects: a few minutes
    python benchmarks/bench_orphans.py --files 100000    # a quicker look
    python benchmarks/bench_orphans.py --files 10000000 --keep /data/lake10m   # build once,
        # then the same command again times the reports on that graph without building it

Measured at 3,000,000 objects (`nice -n 10`, load 3-9): built in 461 s (6,507 objects/s);
server memory 588 B/object as the S3 harvester writes them, datasets and lineage included
(goal 300 B: NOT met); orphan report 22.5 s cold, 24.9 s warm (server CPU 17.9 / 19.8 s), cost
report 28.9 s; 18.4x faster than the per-object baseline scaled from one bucket. At
10,000,000 objects (load 2-5): built in 1,342.9 s (7,447 objects/s), server memory 584
B/object (goal 300 B: NOT met), about 6.2 GiB of server RSS; orphan report 82.3 s cold,
78.2 s warm (server CPU 69.1 / 61.3 s), totals exact (goal 30 s: NOT met). The session ended
before the cost report and the one-bucket baseline.

With consumption settled in Python and the objects walked in chunks of datasets read two at a
time, at 1,000,000 objects (load 2.9-5, other sessions running): orphan report 9.65 s cold,
8.59 s warm (server CPU 6.7 s), cost report 10.9 s, against 9.81 s (7.0 s) for the graph reads
as they were, run in between: 1.14x, same rows, totals exact (goal 10 s: met in that run). On
objects the ancestor look-ups were a small part; the walk of every object (its status, then the
sums) is most of the server's time. In separate processes on a graph reopened from disk (load
2.2-2.9): 4.7-5.8 s with two chunks at a time, 5.5-6.2 s one at a time, 4.7-6.6 s before.

At 10,000,000 objects again, with the client's faster decoding and pricing as well, on a graph
kept with --keep (built without the ETag at 4,293 objects/s, load 4-6: 560 B/object, peak
server RSS 7.5 GiB): orphan report 28.3 s warm, 29.4 s cold (server CPU 40.9 / 42.2 s; goal
30 s: met), against 61.5 s for the graph reads as they were, same run, same rows, totals exact
(load 1.5-2.7). Before those changes the same graph took 133.5 s warm (load 4.5-6).
With the objects' statement rid of roll-ups (cypher/orphans_rollup_usage.cypher has them) and
its rows read as plain values, the same graph at load 1.0-1.2: orphan report 23.6 s warm,
26.0 s cold, 21.9 s run again (server CPU 33.5 s), against 58.2 s for the graph reads as they
were (2.66x); cost report 33.7 s; same rows, totals exact.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_file_node import GOAL_BYTES, used_memory
from bench_ingest import server_peak_rss_mb
from report_baseline import baseline, without_readers
from small import parse_args, server_pid

from lineagegraph.graph.store import GraphStore, chunks, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import name_of, s3_dataset_urn_for_key, s3_file_urn
from lineagegraph.model import Asset, Flow, Item, Transformation
from lineagegraph.reports.options import DAY_MS, Kind, build_options
from lineagegraph.reports.orphans import run_report
from lineagegraph.reports.presentation import Report
from lineagegraph.settings import GraphSettings, ReportSettings

AS_OF = 1_719_792_000_000  # 2024-07-01T00:00:00Z
BUCKETS = 10
PER_DATASET = 200  # 4 partitions of 49 objects and a _SUCCESS marker
CLASSES = ["STANDARD"] * 14 + [
    "STANDARD_IA",
    "STANDARD_IA",
    "INTELLIGENT_TIERING",
    "INTELLIGENT_TIERING",
    "GLACIER",
    "DEEP_ARCHIVE",
]
GOAL_S = {1_000_000: 10.0, 10_000_000: 30.0}
"""The orphan report's goals: under 10 s up to 1,000,000 objects, under 30 s up to 10,000,000."""
T = TypeVar("T")
SEEN = AS_OF - 2 * DAY_MS  # when the buckets were listed


@dataclass
class Expected:
    """The orphans the generator made, per bucket (objects, bytes): the benchmark's oracle."""

    objects: dict[str, int] = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)

    def add(self, bucket: str, size: int) -> None:
        self.objects[bucket] = self.objects.get(bucket, 0) + 1
        self.bytes[bucket] = self.bytes.get(bucket, 0) + size


@dataclass
class Lake:
    """Ten buckets of datasets, their objects and the lineage that reads some of them."""

    files: int
    expected: Expected = field(default_factory=Expected)
    single_reads: list[str] = field(default_factory=list)
    single_flows: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        per_bucket = max(1, self.files // BUCKETS // PER_DATASET)
        self.datasets = [
            (f"bench-{b}", f"zone{t % 5}/t{t}") for b in range(BUCKETS) for t in range(per_bucket)
        ]

    def replay(self) -> int:
        """Run the generator without writing (for a kept graph): the oracle and the lists of
        objects read on their own fill as in `build`. Returns the objects it made."""
        files = sum(1 for _ in self.objects())
        for _ in self.lineage():
            pass
        return files

    def dataset_assets(self) -> Iterator[Item]:
        for bucket, prefix in self.datasets:
            urn = f"s3://{bucket}/{prefix}"
            yield Asset(urn, "Dataset", "s3", name_of(urn), SEEN, {"bucket": bucket})
        for bucket, urn in (("bench-0", "s3://bench-0/zone0"), ("bench-9", "s3://bench-9")):
            yield Asset(urn, "Dataset", "s3", name_of(urn), SEEN, {"bucket": bucket})

    def consumed(self, k: int, bucket: str, prefix: str) -> bool:
        """Dataset k: 30% read in the window, 10% read before it, 5% loaded into Snowflake in
        it, 5% first read after --as-of, the rest idle; bench-0's zone0 is read as a whole."""
        return k % 20 < 6 or k % 20 == 8 or (bucket == "bench-0" and prefix.startswith("zone0/"))

    def objects(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(bucket, row of the S3 harvester's s3_merge_files) per object."""
        n = 0
        for k, (bucket, prefix) in enumerate(self.datasets):
            for p in range(4):
                for i in range(PER_DATASET // 4):
                    marker = i == PER_DATASET // 4 - 1
                    name = "_SUCCESS" if marker else f"part-{i:05d}.parquet"
                    key = f"{prefix}/dt=2024-01-{p + 1:02d}/{name}"
                    size = 0 if marker else 1024 + (n * 7_919) % 50_000_000
                    urn = s3_file_urn(bucket, key)
                    yield (
                        bucket,
                        {
                            "urn": urn,
                            "dataset": s3_dataset_urn_for_key(bucket, key),
                            "name": name,
                            "key": key,
                            "size": size,
                            "storage_class": CLASSES[n % len(CLASSES)],
                            "last_modified": SEEN - (n % 400) * DAY_MS,
                            "seen": SEEN,
                        },
                    )
                    n += 1
                    if marker or self.consumed(k, bucket, prefix):
                        continue
                    if n % 487 == 0:
                        self.single_reads.append(urn)  # read on its own within the window
                    elif n % 1_999 == 0:
                        self.single_flows.append(urn)  # loaded on its own within the window
                    else:
                        self.expected.add(bucket, size)

    def lineage(self) -> Iterator[Item]:
        """After objects(): Spark reads, Snowflake loads, a zone reader, an old bucket audit."""
        table = "snowflake://bench/DB.RAW.T"
        yield Asset(table, "Table", "snowflake", "T", SEEN)
        for k, (bucket, prefix) in enumerate(self.datasets):
            urn, r = f"s3://{bucket}/{prefix}", k % 20
            if r < 6:
                job, at = f"spark://etl-{k % 250}/out", AS_OF - (k % 80) * DAY_MS
            elif r in (6, 7):
                job, at = f"spark://old-{k % 50}/out", AS_OF - (120 + k % 30) * DAY_MS
            elif r == 8:
                yield Flow(urn, table, AS_OF - 10 * DAY_MS, "snowflake://bench/query/copy")
                continue
            elif r == 9:
                job, at = f"spark://later-{k % 10}/out", AS_OF + DAY_MS
            else:
                continue
            yield Transformation(job, "spark", job, f"{job}@{at}", at, reads=(urn,))
        yield Transformation(
            "spark://zone/out",
            "spark",
            "zone",
            "z1",
            AS_OF - 3 * DAY_MS,
            reads=("s3://bench-0/zone0",),
        )
        yield Transformation(
            "spark://audit/out",
            "spark",
            "audit",
            "a1",
            AS_OF - 400 * DAY_MS,
            reads=("s3://bench-9",),
        )
        for i, urn in enumerate(self.single_reads):
            job = f"spark://single-{i % 100}/out"
            yield Transformation(
                job, "spark", job, f"s{i}", AS_OF - (i % 60) * DAY_MS, reads=(urn,)
            )
        for urn in self.single_flows:
            yield Flow(urn, table, AS_OF - 5 * DAY_MS)


def build(store: GraphStore, lake: Lake) -> int:
    """Datasets and lineage through GraphWriter; objects with their PART_OF through the S3
    harvester's own batch statement, so the graph is the one a harvest writes."""
    writer = GraphWriter(store)
    writer.add_all(lake.dataset_assets())
    writer.flush()
    written = 0
    for bucket, rows in groupby(lake.objects(), key=itemgetter(0)):
        for chunk in chunks((row for _, row in rows), store.batch_size):
            result = store.run("s3_merge_files", {"rows": chunk, "bucket": bucket})
            written += int(result.rows[0][0])
    writer.add_all(lake.lineage())
    writer.flush()
    return written


def server_cpu_s(data_dir: Path) -> float:
    """CPU seconds the FalkorDB server has used: steadier than wall time on a shared machine."""
    pid = server_pid(data_dir)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Timer:
    """Wall seconds and the server's CPU seconds of each measured step."""

    data_dir: Path

    def __call__(self, step: Callable[[], T]) -> tuple[T, float, float]:
        cpu, wall = server_cpu_s(self.data_dir), time.perf_counter()
        result = step()
        return result, time.perf_counter() - wall, server_cpu_s(self.data_dir) - cpu


def report(store: GraphStore, kind: Kind, buckets: tuple[str, ...] = ()) -> Report:
    options = build_options(ReportSettings(), kind, as_of=AS_OF, buckets=buckets)
    return run_report(store, options)


def per_object(store: GraphStore, bucket: str) -> tuple[int, int]:
    text = (Path(__file__).resolve().parent / "orphans_per_file.cypher").read_text()
    params = {"root": f"s3://{bucket}/", "as_of": AS_OF, "since": AS_OF - 90 * DAY_MS}
    [row] = store.execute(text, params, write=False).rows
    return int(row[0]), int(row[1] or 0)


def check(what: str, got: tuple[int, int], want: tuple[int, int]) -> None:
    status = "ok" if got == want else "MISMATCH"
    print(
        f"  {what}: {got[0]:,} objects, {got[1]:,} bytes; the generator made {want[0]:,}, "
        f"{want[1]:,}: {status}"
    )
    if got != want:
        raise SystemExit(f"{what} disagrees with the generator")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000_000, help="S3 objects to build")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the graph in DIR; when DIR already holds one of --files objects, time the "
        "reports on it without building (10,000,000 objects take ~25 minutes to build)",
    )
    args = parse_args(parser, files=10_000)
    data_dir = args.keep or Path(tempfile.mkdtemp(prefix="lg-bench-orphans-"))
    built = data_dir / "bench_orphans.files"
    if args.keep and args.keep.exists() and not built.exists() and any(args.keep.iterdir()):
        if not (args.keep / "appendonlydir").is_dir():
            raise SystemExit(f"{args.keep} is neither empty nor a graph of this benchmark")
        shutil.rmtree(args.keep)  # a build cut short leaves no marker: start again
    try:
        with open_store(GraphSettings(data_dir=data_dir, batch_size=5000)) as store:
            timed = Timer(data_dir)
            lake = Lake(args.files)
            if built.exists():
                if built.read_text() != str(args.files):
                    raise SystemExit(f"{data_dir} holds {built.read_text()} objects, not --files")
                files = lake.replay()
                print(f"reusing the graph of {files:,} objects in {data_dir}")
            else:
                store.init_schema()
                empty = used_memory(store)
                files, seconds, _ = timed(lambda: build(store, lake))
                bytes_each = (used_memory(store) - empty) / files
                met = "met" if bytes_each <= GOAL_BYTES else "NOT met"
                print(
                    f"built {files:,} objects with datasets and lineage in {seconds:.1f} s "
                    f"({files / seconds:,.0f} objects/s); server memory {bytes_each:,.0f} "
                    f"B/object (goal {GOAL_BYTES} B: {met})"
                )
                if args.keep:
                    built.write_text(str(args.files))

            cold, cold_s, cold_cpu = timed(lambda: report(store, "orphans"))
            warm, warm_s, warm_cpu = timed(lambda: report(store, "orphans"))
            if cold.rows != warm.rows:
                raise SystemExit("two runs of the orphan report disagree")
            t = warm.totals
            print(
                f"orphans report, cold (FalkorDB compiles the statement): {cold_s:.2f} s "
                f"(server CPU {cold_cpu:.2f} s)"
            )
            print(
                f"orphans report, warm: {warm_s:.2f} s (server CPU {warm_cpu:.2f} s) -> "
                f"{t['objects']:,} orphaned objects, {t['gib']:,.1f} GiB, "
                f"{t['monthly_usd']:,.2f} USD/month, {len(warm.rows):,} rows"
            )
            # As it read the graph before, then the shipped report once more: a graph freshly
            # written settles during the first reports, so each side gets its best of two.
            with baseline():
                before, before_s, before_cpu = timed(lambda: report(store, "orphans"))
            same = without_readers(before) == without_readers(warm)
            _, again_s, again_cpu = timed(lambda: report(store, "orphans"))
            now_s, now_cpu = min((warm_s, warm_cpu), (again_s, again_cpu))
            print(
                f"orphans report as it read the graph before (benchmarks/report_baseline.py): "
                f"{before_s:.2f} s (server CPU {before_cpu:.2f} s), the shipped one run again "
                f"{again_s:.2f} s (server CPU {again_cpu:.2f} s); same rows: "
                f"{same}; ratio: now {before_s / now_s:.2f}x as fast "
                f"({before_cpu / max(now_cpu, 0.01):.2f}x less server CPU)"
            )
            if not same:
                raise SystemExit("the report disagrees with the way it read the graph before")
            expected = lake.expected
            everything = (sum(expected.objects.values()), sum(expected.bytes.values()))
            check("orphans", (t["objects"], t["bytes"]), everything)
            cost, cost_s, cost_cpu = timed(lambda: report(store, "cost"))
            print(
                f"cost report (every object): {cost_s:.2f} s (server CPU {cost_cpu:.2f} s) -> "
                f"{cost.totals['objects']:,} objects, "
                f"{cost.totals['monthly_usd']:,.2f} USD/month"
            )
            check(
                "cost report's orphans",
                (cost.totals["orphaned_objects"], cost.totals["orphaned_bytes"]),
                everything,
            )

            bucket = "bench-1"
            report(store, "orphans", (bucket,))  # the per-bucket statement compiled, as above
            subset, subset_s, subset_cpu = timed(lambda: report(store, "orphans", (bucket,)))
            per_object(store, bucket)
            (objects, size), naive_s, naive_cpu = timed(lambda: per_object(store, bucket))
            want = (expected.objects.get(bucket, 0), expected.bytes.get(bucket, 0))
            print(
                f"one bucket ({files // BUCKETS:,} objects): report {subset_s:.2f} s "
                f"(CPU {subset_cpu:.2f} s), per-object baseline {naive_s:.2f} s "
                f"(CPU {naive_cpu:.2f} s): {naive_s / subset_s:.1f}x wall, "
                f"{naive_cpu / max(subset_cpu, 0.01):.1f}x CPU"
            )
            check("report on the bucket", (subset.totals["objects"], subset.totals["bytes"]), want)
            check("per-object baseline", (objects, size), want)
            print(
                f"per-object baseline scaled to {files:,} objects: ~{naive_s * BUCKETS:.1f} s "
                f"vs the report's {warm_s:.2f} s ({naive_s * BUCKETS / warm_s:.1f}x)"
            )
            goal = next((s for n, s in sorted(GOAL_S.items()) if files <= n), max(GOAL_S.values()))
            met = "met" if max(cold_s, warm_s) < goal else "NOT met"
            print(f"goal: orphan report under {goal:.0f} s over {files:,} objects: {met}")
            server = server_peak_rss_mb(store)
            own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"peak RSS: this process {own:,.0f} MiB, FalkorDB server "
                f"{server or float('nan'):,.0f} MiB"
            )
    finally:
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
