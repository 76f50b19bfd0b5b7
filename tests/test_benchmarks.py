"""Every benchmark still runs: each script with `--small` (tiny sizes, seconds) in a subprocess.

Nothing else runs the benchmarks, so without this they rot (an import that moved, a fixture
renamed). A run passes when it exits 0 and prints its figures; the figures themselves mean
nothing at these sizes and are not judged here (performance is never asserted in tests).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from services.tansu import tansu_binary

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("bench_*.py"))

# Per script, lines its figures must show: a throughput or latency, and a ratio to its baseline.
FIGURES = {
    "bench_alerts": [r"evaluate all rules: median [\d.]+ s", r"ratio: evaluate [\d.]+x the reads"],
    "bench_changed_at_upgrade": [
        r"Neo4j statements \(urn pages of [\d,]+\): [\d.]+ s, server CPU [\d.]+ s",
        r"the same changed_at on every asset and FLOWS_TO: True",
        r"ratio: urn pages [\d.]+x the id pages",
    ],
    "bench_cli_warm": [r"warm, serve running: +median [\d.]+ s", r"ratio: cold [\d.]+x warm"],
    "bench_dbt": [r"[\d,]+ models/s", r"ratio: harvest [\d.]+x json.load alone"],
    "bench_file_node": [r"\d+ B/object", r"ratio: urn only [\d.]+x the baseline"],
    "bench_history_diff": [
        r"diff of the day: [\d,]+ changes in [\d.]+ s",
        r"memory .* [+-][\d.]+ %",
        r"ratio: full scans [\d.]+x the indexed statements",
        r"merge_flow_runs, .* merged again: .* ratio: writer [\d.]+x",
    ],
    "bench_ingest": [r"= +\d+% / \d+% of off", r"ratio: +batched/baseline nodes x[\d.]+"],
    "bench_kafka": [
        r"harvest kafka \(in process, join included\): [\d,]+ events/s",
        r"ratio: kafka [\d.]+x the file's events/s",
        r"backlog catch-up, .*: [\d.]+ s for [\d,]+ events .*peak RSS \d+ MB",
    ],
    "bench_openlineage": [
        r"[\d,]+ events/s",
        r"ratio: harvest [\d.]+x the baseline",
        r"graphs identical \(but for history\): True",
        r"serve's event log, .*: [\d.]+ us CPU per event",
        r"ratio: the event log adds [\d.]+x the harvest's CPU",
        r"hostile event, [\d,]+ inputs x 1 outputs .*: (refused|stored) in [\d.]+ s, peak RSS",
        r"SIGTERM .*: serve exited 0 in [\d.]+ s, peak RSS [\d,]+ MiB",
    ],
    "bench_serve": [
        r"into the graph: [\d,]+ events/s",
        r"ratio: serve [\d.]+x harvest",
        r"depth 20: p50 [\d.]+ ms, p95 [\d.]+ ms",
        r"ratio: HTTP p95 [\d.]+x",
    ],
    "bench_serve_alerts": [
        r"alerts off: GET /api/v1/lineage .*p50 [\d.]+ ms, p95 [\d.]+ ms",
        r"alerts every [\d.]+ s: GET .*p50 [\d.]+ ms, p95 [\d.]+ ms",
        r"p95 over \d+ run\(s\) each way: without evaluations [\d.]+ ms, with them [\d.]+ ms",
        r"ratio: p95 with evaluations [\d.]+x without, of the requests that overlapped one "
        r"[\d.]+x",
    ],
    "bench_orphans": [r"orphans report, warm: [\d.]+ s", r"per-object baseline .*: [\d.]+x wall"],
    "bench_recommend": [r"recommend: [\d.]+ s", r"ratio: recommend [\d.]+x the cost report"],
    "bench_rollups": [r"[\d,]+ rows/s, [\d,]+ datasets", r"ratio: spark roll-ups [\d.]+x"],
    "bench_s3_access": [
        r"1 process: .* [\d,]+ lines/s .* [\d.]+x reading alone",
        r"2 workers: .* [\d,]+ lines/s .* [\d.]+x reading alone",
        r"the same [\d,]+ tallies",
    ],
    "bench_s3_deletion": [
        r"new: emptied datasets, .* server cpu +[\d.]+ s",
        r"ratio: new/scope step: server cpu [\d.]+x",
    ],
    "bench_s3_harvest": [r"[\d,]+ objects/s", r"first: harvest/bare [\d.]+"],
    "bench_s3_writers": [r"FileWriter +[\d.]+ s +[\d,]+ objects/s", r"ratio: GraphWriter [\d.]+x"],
    "bench_short_names": [
        r"resolve, dotted tail .* median +[\d.]+ ms",
        r"ratio: short/whole [\d.]+x",
    ],
    "bench_snowflake": [r"[\d,]+ rows/s, [\d,]+ pairs/s", r"vs unreduced baseline: [\d.]+x"],
    "bench_spark": [r"action: median +[\d.]+ ms without", r"\(ratio [\d.]+\)"],
    "bench_tags": [
        r"all derived tags: [\d,]+ \(node, tag\) pairs .* in [\d.]+ s; peak RSS [\d,]+ MiB",
        r"tags ASSET#COLUMN, .*: p50 [\d.]+ ms, p95 [\d.]+ ms; CPU [\d.]+ s here",
        r"check --policy, whole graph: [\d,]+ violations in [\d.]+ s",
        r"ratio: per-origin baseline [\d.]+x all derived tags",
    ],
    "bench_traversal": [
        r"all traversals: median [\d.]+ ms",
        r"naive/ours median [\d.]+x",
        r"as-of/now [\d.]+x median",
    ],
}


def missing_service(name: str) -> str | None:
    """Why a benchmark cannot run on this machine, or None."""
    if name in ("bench_spark", "bench_rollups") and (
        shutil.which("java") is None or importlib.util.find_spec("pyspark") is None
    ):
        return "Spark needs Java 17 and pyspark"
    no_moto = importlib.util.find_spec("moto") is None
    if name == "bench_s3_harvest" and no_moto and not os.environ.get("LINEAGEGRAPH_TEST_RGW"):
        return "needs moto or LINEAGEGRAPH_TEST_RGW"
    if name == "bench_kafka":
        if importlib.util.find_spec("confluent_kafka") is None:
            return "needs confluent-kafka (pip install 'lineagegraph[kafka]')"
        return tansu_binary()[1] or None  # why there is no Kafka broker to run
    return None


def test_every_benchmark_has_its_figures_listed() -> None:
    assert sorted(FIGURES) == [script.stem for script in SCRIPTS]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_small_run_completes_and_prints_its_figures(script: Path) -> None:
    reason = missing_service(script.stem)
    if reason:
        pytest.skip(reason)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, str(script), "--small"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    missing = [f for f in FIGURES[script.stem] if not re.search(f, result.stdout)]
    assert not missing, f"figures not printed: {missing}\n{result.stdout[-3000:]}"
