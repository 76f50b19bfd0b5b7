"""What each property of a :File node costs in the embedded FalkorDB store, in bytes per object.

Writes `--objects` S3 objects (with their PART_OF edge to one dataset per 200 objects, under the
:Asset(urn) index) into a fresh graph once per variant, and prints the server's memory growth
per object (Redis `used_memory`) and FalkorDB's own breakdown (`GRAPH.MEMORY USAGE`). The
baseline, in the same run: the node as the S3 harvester wrote it before it was slimmed (with
`bucket` and `key`, which the urn already holds, and `etag`, which no query reads); the next
variant drops bucket and key, the next is the node as written now, and each further one leaves
more properties out, down to the urn alone: the floor for a node
that MERGE can find by its indexed urn.

    python benchmarks/bench_file_node.py                    # 200,000 objects: about a minute
    python benchmarks/bench_file_node.py --objects 50000    # quicker, coarser

Measured at 1,000,000 objects per variant (FalkorDB 4.16), in B/object: before 727, without bucket
and key 644, also without etag (as written now) 594, also without name and system 540, urn + size +
class 506, urn only 461; the same urn-only node outside the :Asset(urn) index 168, and with its key
within its dataset in place of the urn 144. The index is about 290 B of the 461: a :File that is
not an :Asset, found through its dataset's PART_OF edges, is the shape that could reach 300 B.
Every statement that finds a file by its urn would have to change first; not built.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from small import parse_args

from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.store import chunks
from lineagegraph.settings import GraphSettings

SEEN = 1_719_792_000_000
PER_DATASET = 200
GOAL_BYTES = 300
BASELINE = (
    "system",
    "name",
    "first_seen",
    "last_seen",
    "bucket",
    "key",
    "size",
    "storage_class",
    "last_modified",
    "etag",
)
LEAN = ("system", "name", "first_seen", "last_seen", "size", "storage_class", "last_modified")
# Per variant: the properties kept, and how the node is keyed (a statement of WRITE).
VARIANTS: dict[str, tuple[tuple[str, ...], str]] = {
    "before (with bucket, key)": (BASELINE, "indexed urn"),
    "no bucket, key (with etag)": ((*LEAN, "etag"), "indexed urn"),
    "as written now (no etag)": (LEAN, "indexed urn"),
    "... and no name, system": (LEAN[2:], "indexed urn"),
    "urn, size, class only": (("size", "storage_class"), "indexed urn"),
    "urn only": ((), "indexed urn"),
    "urn only, not indexed": ((), "urn"),
    "key within its dataset, not indexed": ((), "key in dataset"),
}
# The last two are not shapes the queries can use as they stand (MERGE finds an object by its
# indexed urn); they show what the index and the full urn cost.
WRITE = {
    "indexed urn": """
UNWIND $rows AS r
MATCH (d:Asset {urn: r.dataset})
CREATE (n:Asset:File {urn: r.urn})
SET n += r.props
CREATE (n)-[:PART_OF]->(d)
""",
    "urn": """
UNWIND $rows AS r
MATCH (d:Asset {urn: r.dataset})
CREATE (n:File {urn: r.urn})
CREATE (n)-[:PART_OF]->(d)
""",
    "key in dataset": """
UNWIND $rows AS r
MATCH (d:Asset {urn: r.dataset})
CREATE (n:File {key: substring(r.urn, size(r.dataset) + 1)})
CREATE (n)-[:PART_OF]->(d)
""",
}


def objects(count: int, keep: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """Rows like the S3 harvester's, with only the `keep` properties."""
    for n in range(count):
        dataset = n // PER_DATASET
        key = f"zone{dataset % 7}/t{dataset}/dt=2024-06-{n % 28 + 1:02d}/part-{n:07d}.parquet"
        props = {
            "system": "s3", "name": key.rsplit("/", 1)[1], "first_seen": SEEN,
            "last_seen": SEEN, "bucket": "bench-lake", "key": key,
            "size": (n * 7_919) % 400_000_000, "storage_class": "STANDARD",
            "last_modified": SEEN - (n % 700) * 86_400_000, "etag": f"{n * 2654435761:032x}",
        }  # fmt: skip
        yield {
            "urn": f"s3://bench-lake/{key}",
            "dataset": f"s3://bench-lake/zone{dataset % 7}/t{dataset}",
            "props": {p: props[p] for p in keep},
        }


def used_memory(store: FalkorDBStore) -> int:
    connection = store._graph.client.connection
    return int(connection.info("memory")["used_memory"])


def breakdown(store: FalkorDBStore, graph: str) -> dict[str, Any]:
    connection = store._graph.client.connection
    flat = connection.execute_command("GRAPH.MEMORY", "USAGE", graph)
    return {str(k): v for k, v in zip(flat[::2], flat[1::2], strict=True)}


def measure(data_dir: Path, name: str, count: int, keep: tuple[str, ...], shape: str) -> float:
    """Bytes per object of one variant, in a server of its own (a graph dropped in a shared
    server frees its memory lazily, which skewed the next variant's figure)."""
    graph = "bench"
    settings = GraphSettings(data_dir=data_dir, graph_name=graph, batch_size=5000)
    with FalkorDBStore(settings, appendfsync=None) as s:
        datasets = [
            {"urn": f"s3://bench-lake/zone{d % 7}/t{d}"}
            for d in range((count + PER_DATASET - 1) // PER_DATASET)
        ]
        s.execute(
            "UNWIND $rows AS r CREATE (:Asset:Dataset {urn: r.urn})", {"rows": datasets}, write=True
        )
        before = used_memory(s)
        for chunk in chunks(objects(count, keep), s.batch_size):
            s.execute(WRITE[shape], {"rows": chunk}, write=True)
        grown = used_memory(s) - before
        parts = breakdown(s, graph)
    per_object = grown / count
    print(
        f"{name:34} {per_object:7.0f} B/object  (graph {parts['total_graph_sz_mb']} MiB: node "
        f"attributes {parts['amortized_node_attributes_by_label_sz_mb']}, indices "
        f"{parts['indices_sz_mb']} MiB; {shape}; properties: {', '.join(keep) or 'none'})"
    )
    return per_object


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--objects", type=int, default=200_000, help="S3 objects per variant")
    args = parse_args(parser, objects=5_000)
    data_dir = Path(tempfile.mkdtemp(prefix="lg-bench-file-node-"))
    try:
        print(f"{args.objects:,} :File nodes per variant, each with urn, labels and PART_OF")
        sizes = {  # a fresh data directory, so a fresh server and graph, per variant
            name: measure(data_dir / str(n), name, args.objects, keep, shape)
            for n, (name, (keep, shape)) in enumerate(VARIANTS.items())
        }
        baseline = sizes[next(iter(VARIANTS))]
        for name, size in sizes.items():
            print(f"ratio: {name} {size / baseline:.2f}x the baseline")
        now, floor = sizes["as written now (no etag)"], sizes["urn only"]
        met = "met" if now <= GOAL_BYTES else "NOT met"
        print(
            f"goal: at most {GOAL_BYTES} B per object ({now:.0f} B as written now): {met}; "
            f"the urn alone, indexed, with its PART_OF edge: {floor:.0f} B; not indexed "
            f"{sizes['urn only, not indexed']:.0f} B; a key within its dataset instead of the "
            f"urn, not indexed: {sizes['key within its dataset, not indexed']:.0f} B"
        )
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
