"""How long resolving a short name takes on a big graph (`lineagegraph upstream orders`).

Writes N table assets named the OpenLineage way (`postgres://db:5432/crm.public.t{i}`) and a
tenth as many S3 datasets into a fresh embedded store, then times lineage.resolve of a short
name that is the dotted tail of one table (`t{i}`), of a path's whole last segment, and of a
name nothing has (the slowest: it goes on to the suggestions). Both kinds of short name are
one scan of :Asset with a string comparison or two per asset, as the whole-name lookup
before them (benchmarks/baseline_assets_named.cypher, timed in the same run) was.

    .venv/bin/python benchmarks/bench_short_names.py --assets 100000
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from small import parse_args

from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import name_of, system_of
from lineagegraph.model import Asset
from lineagegraph.questions import lineage
from lineagegraph.settings import GraphSettings, Settings

SEEN = 1_717_000_000_000


def assets(n: int) -> Iterator[Asset]:
    for i in range(n):
        urn = f"postgres://db:5432/crm.public.t{i}"
        yield Asset(urn, "Table", system_of(urn), name_of(urn), SEEN, {})
    for i in range(n // 10):
        urn = f"s3://lake/exports/e{i}.csv"
        yield Asset(urn, "Dataset", system_of(urn), name_of(urn), SEEN, {})


def timed(store: GraphStore, settings: Settings, text: str, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        with contextlib.suppress(lineage.AssetNotFound):  # the slow answer is timed too
            lineage.resolve(store, settings, text)
        times.append(time.perf_counter() - start)
    return times


def baseline(store: GraphStore, text: str, repeat: int) -> list[float]:
    """The whole-name statement alone, as `resolve` ran it before dotted tails counted."""
    statement = (Path(__file__).resolve().parent / "baseline_assets_named.cypher").read_text()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        store.execute(statement, {"name": text, "limit": 6}, write=False)
        times.append(time.perf_counter() - start)
    return times


def named(store: GraphStore, text: str, repeat: int) -> list[float]:
    """The short-name statement alone (lineage.short_named)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        lineage.short_named(store, text)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parse_args(parser, assets=2_000, repeat=2)
    settings = Settings()
    with (
        tempfile.TemporaryDirectory() as tmp,
        open_store(GraphSettings(data_dir=Path(tmp))) as store,
    ):
        store.init_schema()
        writer = GraphWriter(store)
        writer.add_all(assets(args.assets))
        writer.finish()
        print(f"{args.assets:,} tables + {args.assets // 10:,} S3 datasets")
        for label, text in [
            ("dotted tail (t{n/2})", f"t{args.assets // 2}"),
            ("path segment", f"e{args.assets // 20}.csv"),
            ("no such name", "no_such_table"),
        ]:
            times = timed(store, settings, text, args.repeat)
            print(
                f"resolve, {label:22} median {statistics.median(times) * 1000:8.1f} ms "
                f"(best {min(times) * 1000:.1f} ms, {args.repeat} runs)"
            )
        text = f"t{args.assets // 2}"
        ours = statistics.median(named(store, text, args.repeat))
        before = statistics.median(baseline(store, text, args.repeat))
        print(
            f"short-name statement median {ours * 1000:.1f} ms, whole-name baseline "
            f"{before * 1000:.1f} ms; ratio: short/whole {ours / before:.2f}x"
        )


if __name__ == "__main__":
    main()
