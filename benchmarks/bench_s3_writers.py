"""S3 objects written by the S3 harvest's FileWriter against the pipeline's GraphWriter.

Why S3 listings have a writer of their own (docs/s3.md, "Why S3 writes through its own
writer"): this writes the same lake-shaped objects (bench_s3_harvest's keys) into a fresh
embedded store twice, once through `FileWriter` (datasets once per run, a file and its PART_OF
edge in one statement) and once through `GraphWriter` (a :Dataset asset per new dataset, then
a :File asset and a PartOf item per object: merge_files and merge_part_of), each inside a
:HarvestRun, folding each directory once either way. No S3 server: only the graph writes are
timed, the part of a harvest that overlaps the listing.

    python benchmarks/bench_s3_writers.py                  # 100,000 objects
    python benchmarks/bench_s3_writers.py --objects 500000
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_s3_harvest import key_of
from small import parse_args

from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.harvest.s3.scan import FileWriter, Page, S3Object, ScanStats
from lineagegraph.identity import FoldRules, name_of, s3_dataset_urn_for_key, s3_file_urn
from lineagegraph.model import Asset, PartOf
from lineagegraph.pipeline import harvest_run
from lineagegraph.settings import GraphSettings, Settings

BUCKET = "lake"
SEEN = 1_719_792_000_000  # 2024-07-01T00:00:00Z
PAGE = 1000  # objects per ListObjectsV2 page


def pages(objects: int) -> Iterator[Page]:
    for start in range(0, objects, PAGE):
        batch = []
        for i in range(start, min(start + PAGE, objects)):
            key, size, storage_class = key_of(i)
            batch.append(S3Object(key, size, SEEN - i, storage_class))
        yield Page(batch, SEEN)


def with_file_writer(store: GraphStore, rules: FoldRules, objects: int) -> dict[str, int]:
    with harvest_run(store, "s3", f"s3://{BUCKET}/") as (run, _):
        writer = FileWriter(store, rules, run, ScanStats())
        for page in pages(objects):
            writer.add(BUCKET, page)
        writer.flush()
    return {"files": run.counts["files"], "datasets": run.counts["datasets"]}


def with_graph_writer(store: GraphStore, rules: FoldRules, objects: int) -> dict[str, int]:
    with harvest_run(store, "s3", f"s3://{BUCKET}/") as (run, writer):
        directories: dict[str, str] = {}
        written: set[str] = set()
        for page in pages(objects):
            for obj in page.objects:
                directory = obj.key[: obj.key.rfind("/") + 1]
                dataset = directories.get(directory)
                if dataset is None:
                    dataset = s3_dataset_urn_for_key(BUCKET, obj.key, rules)
                    directories[directory] = dataset
                if dataset not in written:
                    written.add(dataset)
                    props = {"bucket": BUCKET}
                    writer.add(Asset(dataset, "Dataset", "s3", name_of(dataset), page.seen, props))
                urn = s3_file_urn(BUCKET, obj.key)
                props = {
                    "size": obj.size,
                    "storage_class": obj.storage_class,
                    "last_modified": obj.last_modified,
                }
                writer.add(Asset(urn, "File", "s3", name_of(urn), page.seen, props))
                writer.add(PartOf(urn, dataset))
    return {
        "files": run.counts["merge_files"],
        "datasets": run.counts["merge_datasets"],
        "part_of": run.counts["merge_part_of"],
    }


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(
    write: Callable[[GraphStore, FoldRules, int], dict[str, int]], objects: int
) -> tuple[float, float, dict[str, int]]:
    """Seconds to write `objects` into a fresh embedded store, this process's CPU seconds in
    that time (in a harvest they share the GIL with the listers), and the run's counts."""
    data_dir = Path(tempfile.mkdtemp(prefix="lg-bench-s3-writers-"))
    try:
        with open_store(GraphSettings(data_dir=data_dir)) as store:
            store.init_schema()
            began, cpu = time.perf_counter(), cpu_seconds()
            counts = write(store, Settings().identity.rules(), objects)
            return time.perf_counter() - began, cpu_seconds() - cpu, counts
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2, help="each writer this many times")
    args = parse_args(parser, objects=2_000, rounds=1)
    seconds: dict[str, list[float]] = {"FileWriter": [], "GraphWriter": []}
    for _ in range(args.rounds):  # alternate, so drift in the machine's load hits both
        for label, write in (("FileWriter", with_file_writer), ("GraphWriter", with_graph_writer)):
            took, cpu, counts = timed(write, args.objects)
            assert counts["files"] == args.objects, counts
            seconds[label].append(took)
            print(
                f"{label:12} {took:7.1f} s  {args.objects / took:9,.0f} objects/s  "
                f"cpu {cpu:5.1f} s  {counts}"
            )
    best = {label: min(runs) for label, runs in seconds.items()}
    print(
        f"ratio: GraphWriter {best['GraphWriter'] / best['FileWriter']:.2f}x FileWriter "
        f"(best of {args.rounds}, {args.objects:,} objects)"
    )


if __name__ == "__main__":
    main()
