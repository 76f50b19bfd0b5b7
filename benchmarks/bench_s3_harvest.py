"""S3 harvest of a large bucket against a bare boto3 paginator listing the same bucket.

The goal (issue 3): a harvest, graph writes and dataset rollups included, takes at most 1.2x
the time of the bare listing measured in the same run (the graph must not be the bottleneck),
with peak RSS under 400 MB however large the bucket.

    python benchmarks/bench_s3_harvest.py --endpoint http://127.0.0.1:7480  # Ceph RGW, test/test
    python benchmarks/bench_s3_harvest.py                   # starts moto's server (slower)
    python benchmarks/bench_s3_harvest.py --objects 20000   # a quicker look

Two bare listings are timed: boto3's default client (the goal's baseline), and a client made
the harvester's way (`make_client`: botocore with a fast parser for listing timestamps), which
shows what the graph itself costs on top of the same listing.

The bucket is filled once (in a child process, many put_object threads, so filling does not
count toward this process's peak RSS) and reused by later runs with the same count. Order of
the timed runs: both bare listings, harvest into an empty graph, both bare listings, harvest
again (objects already in the graph), both bare listings; each harvest is compared with the
mean of the bare listings before and after it (the machine's load drifts during a run).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
from botocore.client import BaseClient
from botocore.exceptions import ClientError

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import server_peak_rss_mb
from small import parse_args

from lineagegraph.graph.store import open_store
from lineagegraph.harvest.s3.client import make_client
from lineagegraph.harvest.s3.harvester import S3Report, harvest_s3
from lineagegraph.settings import Settings

CLASSES = ["STANDARD"] * 8 + ["STANDARD_IA", "GLACIER"]


def key_of(i: int) -> tuple[str, int, str]:
    """A lake-shaped key: 40 tables, daily Hive partitions, a few parts a day."""
    table, day, part = i % 40, (i // 40) % 365, i // (40 * 365)
    date = time.strftime("%Y-%m-%d", time.gmtime(1_704_067_200 + day * 86_400))
    return f"lake/table_{table:02}/dt={date}/part-{part:05}-{i}.parquet", i % 97, CLASSES[i % 10]


def marker(objects: int) -> str:
    """Written last; a zero-byte key ending in '/', so a folder marker, not an asset."""
    return f"_bench/filled-{objects}/"


def fill(client: BaseClient, bucket: str, objects: int, threads: int) -> None:
    try:
        client.head_object(Bucket=bucket, Key=marker(objects))
        print(f"bucket {bucket} already holds {objects:,} objects", flush=True)
        return
    except ClientError:
        pass
    started = time.perf_counter()

    def put(i: int) -> None:
        key, size, storage_class = key_of(i)
        client.put_object(Bucket=bucket, Key=key, Body=b"x" * size, StorageClass=storage_class)

    with ThreadPoolExecutor(threads) as pool:
        for start in range(0, objects, 20_000):  # in windows: a future per object is costly
            end = min(objects, start + 20_000)
            list(pool.map(put, range(start, end)))
            print(f"  filled {end:,} objects", flush=True)
    client.put_object(Bucket=bucket, Key=marker(objects), Body=b"")
    seconds = time.perf_counter() - started
    print(f"filled {objects:,} objects in {seconds:,.0f} s ({objects / seconds:,.0f}/s)")


def bare_listing(client: BaseClient, bucket: str, page_size: int) -> tuple[int, float]:
    started = time.perf_counter()
    count = 0
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, PaginationConfig={"PageSize": page_size}):
        for entry in page.get("Contents", ()):
            count += entry["Size"] >= 0
    return count, time.perf_counter() - started


def timed_harvest(settings: Settings, bucket: str) -> tuple[S3Report, float, float | None]:
    """The harvest's report, its seconds, and the FalkorDB server's peak RSS (MB) so far."""
    started = time.perf_counter()
    with open_store(settings.graph) as store:
        report = harvest_s3(store, settings, bucket)
        seconds = time.perf_counter() - started
        server_rss = server_peak_rss_mb(settings.graph.data_dir)
    return report, seconds, server_rss


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    """moto's server in a child process, so its memory is not counted as ours."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = (
        "import logging; from moto.server import ThreadedMotoServer;"
        "logging.getLogger('werkzeug').setLevel(logging.ERROR);"
        f"s = ThreadedMotoServer(ip_address='127.0.0.1', port={port}, verbose=False); s.start();"
        "import time\nwhile True: time.sleep(3600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    time.sleep(3)
    return proc, f"http://127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=200_000, help="objects in the bucket")
    parser.add_argument(
        "--endpoint",
        default=os.environ.get("LINEAGEGRAPH_TEST_RGW"),
        help="S3 endpoint (keys test/test); default: start moto",
    )
    parser.add_argument("--bucket", help="bucket name (default: lg-bench-<objects>)")
    parser.add_argument("--fill-threads", type=int, default=32)
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--fill-only", action="store_true", help=argparse.SUPPRESS)
    args = parse_args(parser, objects=300, fill_threads=4)
    bucket = args.bucket or f"lg-bench-{args.objects}"

    moto = None
    if not args.endpoint:
        moto, args.endpoint = start_moto()
    server = f"moto at {args.endpoint}" if moto else args.endpoint
    data_dir = Path(tempfile.mkdtemp(prefix="lg-bench-s3-"))
    settings = Settings.model_validate(
        {
            "graph": {"data_dir": data_dir, "graph_name": "bench"},
            "s3": {
                "endpoint_url": args.endpoint,
                "region": "us-east-1",
                "access_key_id": "test",
                "secret_access_key": "test",
                "page_size": args.page_size,
            },
        }
    )
    client = make_client(settings.s3)
    try:
        if args.fill_only:
            try:
                client.create_bucket(Bucket=bucket)
            except ClientError as exc:
                if exc.response["Error"]["Code"] not in (
                    "BucketAlreadyOwnedByYou",
                    "BucketAlreadyExists",
                ):
                    raise
            fill(client, bucket, args.objects, args.fill_threads)
            return
        child = [sys.executable, __file__, "--fill-only", "--objects", str(args.objects),
                 "--endpoint", args.endpoint, "--bucket", bucket,
                 "--fill-threads", str(args.fill_threads)]  # fmt: skip
        subprocess.run(child, check=True)
        print(
            f"\nserver: {server}; bucket {bucket}: {args.objects:,} objects (+1 marker), "
            f"page size {args.page_size}"
        )

        default_client = boto3.client(
            "s3",
            endpoint_url=args.endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )

        def bare() -> tuple[float, float]:
            """Seconds of the default client's listing, then of the harvester's client's."""
            timings = []
            for label, lister in (("boto3 default", default_client), ("harvester's", client)):
                began = cpu_seconds()
                listed, seconds = bare_listing(lister, bucket, args.page_size)
                assert listed == args.objects + 1  # the marker is a folder marker: not an asset
                cpu = cpu_seconds() - began
                print(
                    f"bare listing, {label + ' client:':23} {seconds:7.1f} s  "
                    f"{listed / seconds:7,.0f} objects/s  cpu {cpu:5.1f} s"
                )
                timings.append(seconds)
            return timings[0], timings[1]

        def harvest(label: str) -> tuple[S3Report, float]:
            began = cpu_seconds()
            report, seconds, rss = timed_harvest(settings, bucket)
            assert report.stats.objects == args.objects and report.status == "success"
            print(
                f"{label:37} {seconds:7.1f} s  {report.stats.objects / seconds:7,.0f} objects/s"
                f"  cpu {cpu_seconds() - began:5.1f} s"
            )
            peaks.append(rss or 0.0)
            return report, seconds

        peaks: list[float] = []
        bare1 = bare()
        first, harvest1 = harvest("harvest into an empty graph:")
        bare2 = bare()
        second, harvest2 = harvest("harvest again (graph has them):")
        bare3 = bare()

        print("(cpu: of this process; the S3 server and FalkorDB use the other cores)")
        print("(bare = mean of the listings before and after each harvest)")
        for label, report, seconds, before, after in (
            ("first", first, harvest1, bare1, bare2),
            ("again", second, harvest2, bare2, bare3),
        ):
            default, same = ((b + a) / 2 for b, a in zip(before, after, strict=True))
            writes, files = report.stats.write_seconds, report.counts["files"]
            print(
                f"{label}: harvest/bare {seconds / default:.2f} (goal <= 1.20), "
                f"harvest/bare with the harvester's client {seconds / same:.2f} (the graph's own "
                f"cost); {files:,} files written in {writes:.1f} s of graph "
                f"writes ({files / writes:,.0f} files/s, overlapping the "
                "listing)"
            )
        print(f"peak RSS of this process: {peak_rss_mb():.0f} MB (goal < 400 MB)")
        print(f"peak RSS of the FalkorDB server: {max(peaks):.0f} MB")
    finally:
        if moto:
            moto.terminate()
            moto.wait()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
