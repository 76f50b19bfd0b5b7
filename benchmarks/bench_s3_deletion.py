"""What deleting emptied S3 datasets and stopping their lineage adds to a complete scan's settle.

A complete scan settles each scope (src/lineagegraph/harvest/s3/settle.py): it counts the
scope's objects, soft-deletes those it did not see, and refreshes the roll-ups. Since drift
(docs/history.md), it also finds the datasets the scan left empty (s3_scope_vanished), keeps
those that lineage runs through (s3_datasets_in_lineage), and the unseen objects that lineage
names directly (s3_scope_files_in_lineage, a pass over the scope's objects), and deletes them
with their lineage (delete_assets). With the mass-delete guard on, the vanished datasets were
already read by the guard; with `--allow-mass-delete`, as here, they are read for this alone:
this is the most the new work can add.

The graph, written directly (no S3 server): `--objects` objects under one scope in datasets of
200, every third dataset read by a job into a table of its own (FLOWS_TO, READS_FROM,
WRITES_TO, and a FEEDS from its column), and one object of every thirtieth dataset read by a
job of its own (READS_FROM and FLOWS_TO on the :File). Then a settle that saw none of them (all
unseen, the largest deletion). The time of each statement is summed by what it belongs to: the
scope step as it was (counts, soft delete), the roll-ups, and the new work. CPU seconds of this
process and of the embedded server, wall seconds, and the load average; a fresh graph each round.

    python benchmarks/bench_s3_deletion.py                  # 200,000 objects, 2 rounds
    python benchmarks/bench_s3_deletion.py --objects 20000 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from small import parse_args, server_pid

from lineagegraph.graph.statements import statement, statement_names
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.s3.scan import Scope
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.harvest.s3.settle import settle
from lineagegraph.model import Asset, Column, ColumnFeed, Flow, Transformation
from lineagegraph.pipeline import HarvestRun
from lineagegraph.settings import GraphSettings

BUCKET = "bench"
PER_DATASET = 200
T0 = 1_700_000_000_000
SCOPE_STEP = ("s3_scope_counts", "s3_soft_delete")
NEW = (
    "s3_scope_vanished",
    "s3_datasets_in_lineage",
    "s3_scope_files_in_lineage",
    "history_assets",  # delete_assets: a window of drops (graph.history)
    "history_state_flows",
    "history_state_feeds",
    "history_state_reads_from",
    "history_state_writes_to",
    "history_runs",
    "history_set_flows",
    "history_set_feeds",
    "history_set_reads_from",
    "history_set_writes_to",
    "history_edges_of_assets",
    "history_set_assets",
    "history_pending_drops",
)


def build(store: GraphStore, objects: int) -> tuple[int, int]:
    """`objects` files in datasets of PER_DATASET, a third of the datasets in lineage and an
    object of every thirtieth; returns how many datasets and objects lineage runs through."""
    datasets = -(-objects // PER_DATASET)
    urns = [f"s3://{BUCKET}/t{d:05}" for d in range(datasets)]
    rows = [{"urn": u, "name": u.rsplit("/", 1)[1], "seen": T0} for u in urns]
    for chunk in _chunks(rows, 5000):
        params = {"rows": chunk, "bucket": BUCKET, "region": None}
        store.execute(statement("s3_merge_datasets"), params, write=True)
    files = (
        {"urn": f"{urns[i // PER_DATASET]}/part-{i:07}.parquet",
         "dataset": urns[i // PER_DATASET], "name": f"part-{i:07}.parquet", "size": 100,
         "storage_class": "STANDARD", "last_modified": T0, "access_tier": None, "seen": T0}
        for i in range(objects)
    )  # fmt: skip
    for chunk in _chunks(files, 5000):
        store.execute(statement("s3_merge_files"), {"rows": chunk}, write=True)
    writer = GraphWriter(store)
    read = urns[::3]
    for n, src in enumerate(read):
        job, table = f"spark://bench/job{n}", f"warehouse://db/out{n}"
        writer.add_all([
            Asset(table, "Table", "warehouse", f"out{n}", T0),
            Transformation(job, "spark", f"job{n}", f"run{n}", T0, reads=(src,), writes=(table,)),
            Flow(src, table, T0, job),
            Column(f"{src}#x", src, "x", T0),
            Column(f"{table}#x", table, "x", T0),
            ColumnFeed(f"{src}#x", f"{table}#x", T0, job),
        ])  # fmt: skip
    direct = [f"{urn}/part-{d * PER_DATASET:07}.parquet" for d, urn in enumerate(urns)][1::30]
    for n, src in enumerate(direct):
        job, table = f"spark://bench/file-job{n}", f"warehouse://db/file-out{n}"
        writer.add_all([
            Asset(table, "Table", "warehouse", f"file-out{n}", T0),
            Transformation(job, "spark", f"file-job{n}", f"file-run{n}", T0, reads=(src,),
                           writes=(table,)),
            Flow(src, table, T0, job),
        ])  # fmt: skip
    writer.flush()
    return len(read), len(direct)


def _chunks(rows: Any, size: int) -> Any:
    chunk: list[Any] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class Meter:
    """Wall, this process's CPU and the embedded server's CPU, per named statement (the store's
    `read`, `run` and `write_parts`, whichever a caller uses; one inside another counts once)."""

    def __init__(self, store: GraphStore, data_dir: Path) -> None:
        self.by_name: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        self._stat = Path(f"/proc/{server_pid(data_dir)}/stat")
        self._depth = 0
        names = {statement(n): n for n in statement_names()}
        for method in ("read", "run", "write_parts"):
            setattr(store, method, self._metered(getattr(store, method), names))

    def _metered(self, call: Callable[..., Any], names: dict[str, str]) -> Callable[..., Any]:
        def metered(name: str, *args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return call(name, *args, **kwargs)
            self._depth += 1
            began = (time.perf_counter(), time.process_time(), self.server())
            try:
                return call(name, *args, **kwargs)
            finally:
                self._depth -= 1
                spent = self.by_name[names.get(name, name)]
                spent[0] += time.perf_counter() - began[0]
                spent[1] += time.process_time() - began[1]
                spent[2] += self.server() - began[2]

        return metered

    def server(self) -> float:
        fields = self._stat.read_text().rsplit(") ", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def total(self, names: tuple[str, ...] | None = None) -> list[float]:
        picked = [v for k, v in self.by_name.items() if names is None or k in names]
        return [sum(v[i] for v in picked) for i in range(3)]


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0  # --small: too little to measure


def one_round(root: Path, objects: int) -> None:
    data_dir = root / f"g{time.monotonic_ns()}"
    store = open_store(GraphSettings(data_dir=data_dir))
    try:
        store.ensure_schema()
        began = time.perf_counter()
        in_lineage, files_in_lineage = build(store, objects)
        print(f"  graph: {objects:,} objects, {in_lineage:,} datasets and "
              f"{files_in_lineage:,} objects in lineage, "
              f"{time.perf_counter() - began:.1f} s")  # fmt: skip
        meter = Meter(store, data_dir)
        run = HarvestRun("s3", f"s3://{BUCKET}/")
        scope = Scope(BUCKET, "")
        load = os.getloadavg()[0]
        errors = settle(store, [scope], {}, T0 + 1, S3Settings(), True, run, {scope: objects})
        assert not errors, errors
        assert run.counts["soft_deleted"] == objects, run.counts
        assert run.counts["datasets_deleted"] == in_lineage, run.counts
        assert run.counts["files_deleted"] == files_in_lineage, run.counts
        step, new, whole = meter.total(SCOPE_STEP), meter.total(NEW), meter.total()
        for label, (wall, cpu, server) in (
            ("scope step as it was (counts, soft delete)", step),
            ("new: emptied datasets, lineage objects, their deletion", new),
            ("the whole settle (with roll-ups)", whole),
        ):
            print(f"  {label:56} wall {wall:6.2f} s  cpu {cpu:5.2f} s  server cpu {server:6.2f} s")
        for name in NEW:
            wall, cpu, server = meter.by_name[name]
            print(f"    {name:30} wall {wall:6.2f} s  server cpu {server:6.2f} s")
        after = os.getloadavg()[0]
        print(f"  ratio: new/scope step: server cpu {_ratio(new[2], step[2]):.2f}x, "
              f"wall {_ratio(new[0], step[0]):.2f}x; new/whole settle: server cpu "
              f"{_ratio(new[2], whole[2]):.2f}x  [load {load:.1f} -> {after:.1f}]")  # fmt: skip
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parse_args(parser, objects=2_000, rounds=1)
    with tempfile.TemporaryDirectory(prefix="bench-s3-deletion-") as tmp:
        for n in range(args.rounds):
            print(f"round {n + 1}:")
            one_round(Path(tmp), args.objects)


if __name__ == "__main__":
    main()
