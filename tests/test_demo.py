"""The README's first command, end to end: `lineagegraph demo` in a fresh directory.

Runs the real command in a subprocess (it starts its own Spark, S3 and Snowflake stand-ins),
then opens the graph it left and checks the lineage path and the orphan totals against values
computed here from the seeded platform definition, not from the graph.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lineagegraph.demo import platform as p
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("demo") / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    result = subprocess.run(
        [sys.executable, "-m", "lineagegraph.cli", "demo", "--workdir", str(workdir)],
        capture_output=True, text=True, timeout=600, env=env, cwd=workdir.parent,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (workdir / "stdout.txt").write_text(result.stdout)
    return workdir


def expected_orphans() -> tuple[int, int]:
    """Everything not read by Spark, minus `_SUCCESS` markers (excluded by default)."""
    orphans = [o for o in p.seed_objects()
               if not o.read_by_spark and not o.key.endswith("/_SUCCESS")]  # fmt: skip
    return len(orphans), sum(o.size for o in orphans)


def test_demo_prints_the_path_and_the_orphan_totals(demo_dir: Path) -> None:
    out = (demo_dir / "stdout.txt").read_text()
    staging = f"snowflake://{p.ACCOUNT}/{p.STAGING_TABLE}"
    mart = f"snowflake://{p.ACCOUNT}/{p.MART_TABLE}"
    dashboard = f"snowflake://{p.ACCOUNT}/{p.DASHBOARD_VIEW}"
    hops = [f"s3://{p.RAW_BUCKET}/events", f"s3://{p.CURATED_BUCKET}/{p.CURATED_PREFIX}",
            staging, mart, dashboard]  # fmt: skip
    positions = [out.index(urn) for urn in hops]
    assert positions == sorted(positions), "the path is printed in flow order"
    objects, size = expected_orphans()
    assert f"Total: objects {objects}, bytes {size:,}" in out


def test_the_graph_it_leaves_answers_the_same(demo_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    graph = demo_dir / "graph"
    query = subprocess.run(
        [sys.executable, "-m", "lineagegraph.cli", "--data-dir", str(graph), "orphans",
         "--format", "json"], capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert query.returncode == 0, query.stderr
    report = json.loads(query.stdout)
    objects, size = expected_orphans()
    assert (report["totals"]["objects"], report["totals"]["bytes"]) == (objects, size)
    with open_store(GraphSettings(data_dir=graph)) as store:
        rows = store.execute(
            "MATCH (:Asset {urn: $raw})-[:FLOWS_TO*1..6]->(d:Asset {urn: $dash}) RETURN count(*)",
            {"raw": f"s3://{p.RAW_BUCKET}/events",
             "dash": f"snowflake://{p.ACCOUNT}/{p.DASHBOARD_VIEW}"}, write=False,
        ).rows  # fmt: skip
        assert rows == [[1]]
        spark_reads = store.execute(
            "MATCH (f:File)-[:PART_OF]->(d:Dataset {urn: $events}) RETURN count(f)",
            {"events": f"s3://{p.RAW_BUCKET}/events"}, write=False,
        ).rows  # fmt: skip
        assert spark_reads == [[len(p.DAYS) * p.PARTS_PER_DAY]]
