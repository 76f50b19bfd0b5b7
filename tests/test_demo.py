"""The README's first command, end to end: `lineagegraph demo` in a fresh directory, twice.

Runs the real command in a subprocess (it starts its own Spark, S3 and Snowflake stand-ins)
twice into the same directory, as a newcomer trying it again would, then opens the graph it left
and checks the lineage path and the orphan totals against values computed here from the seeded
platform definition, not from the graph. A demo whose step fails must say which and exit non-zero.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from click.testing import CliRunner

from lineagegraph.cli import cli
from lineagegraph.demo import platform as p
from lineagegraph.demo.run import local_s3_server
from lineagegraph.graph.store import open_store
from lineagegraph.harvest.s3.harvester import harvest_s3
from lineagegraph.settings import GraphSettings, Settings

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")
RUNS = 2


def run_demo(workdir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    return subprocess.run(
        [sys.executable, "-m", "lineagegraph.cli", "demo", "--workdir", str(workdir)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=workdir.parent,
    )


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workdir after running the demo twice; stdout of run N in stdout-N.txt."""
    workdir = tmp_path_factory.mktemp("demo") / "run"
    for n in range(1, RUNS + 1):
        result = run_demo(workdir)
        assert result.returncode == 0, f"run {n}: {result.stderr[-3000:]}"
        (workdir / f"stdout-{n}.txt").write_text(result.stdout)
    return workdir


def expected_orphans() -> tuple[int, int]:
    """Everything not read by Spark, minus `_SUCCESS` markers (excluded by default)."""
    orphans = [
        o for o in p.seed_objects() if not o.read_by_spark and not o.key.endswith("/_SUCCESS")
    ]
    return len(orphans), sum(o.size for o in orphans)


def test_every_run_prints_the_path_and_the_same_orphan_totals(demo_dir: Path) -> None:
    staging = f"snowflake://{p.ACCOUNT}/{p.STAGING_TABLE}"
    mart = f"snowflake://{p.ACCOUNT}/{p.MART_TABLE}"
    dashboard = f"snowflake://{p.ACCOUNT}/{p.DASHBOARD_VIEW}"
    hops = [
        f"s3://{p.RAW_BUCKET}/events",
        f"s3://{p.CURATED_BUCKET}/{p.CURATED_PREFIX}",
        staging,
        mart,
        dashboard,
    ]
    objects, size = expected_orphans()
    for n in range(1, RUNS + 1):
        out = (demo_dir / f"stdout-{n}.txt").read_text()
        positions = [out.index(urn) for urn in hops]
        assert positions == sorted(positions), "the path is printed in flow order"
        assert f"Total: objects {objects}, bytes {size:,}" in out
        assert f"columns '{mart}#REVENUE'" in out  # the hint to see the column lineage


def test_the_graph_it_leaves_answers_the_same(demo_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    graph = demo_dir / "graph"
    query = subprocess.run(
        [
            sys.executable,
            "-m",
            "lineagegraph.cli",
            "--data-dir",
            str(graph),
            "orphans",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert query.returncode == 0, query.stderr
    report = json.loads(query.stdout)
    objects, size = expected_orphans()
    assert (report["totals"]["objects"], report["totals"]["bytes"]) == (objects, size)
    spark_output = sorted(
        f.relative_to(demo_dir / "s3-mirror" / p.CURATED_BUCKET).as_posix()
        for f in (demo_dir / "s3-mirror" / p.CURATED_BUCKET).rglob("*")
        if f.is_file() and not f.name.startswith(".")
    )
    with open_store(GraphSettings(data_dir=graph)) as store:

        def rows(cypher: str, **params: object) -> list[list[object]]:
            return store.execute(cypher, params, write=False).rows

        assert rows(
            "MATCH (:Asset {urn: $raw})-[:FLOWS_TO*1..6]->(d:Asset {urn: $dash}) RETURN count(*)",
            raw=f"s3://{p.RAW_BUCKET}/events",
            dash=f"snowflake://{p.ACCOUNT}/{p.DASHBOARD_VIEW}",
        ) == [[1]]
        # Column lineage crosses Spark and the COPY (matched by name): raw amount -> mart revenue.
        assert rows(
            "MATCH p = (:Column {urn: $raw})-[:FEEDS*1..5]->(:Column {urn: $mart}) "
            "RETURN [c IN nodes(p) | c.urn]",
            raw=f"s3://{p.RAW_BUCKET}/events#amount",
            mart=f"snowflake://{p.ACCOUNT}/{p.MART_TABLE}#REVENUE",
        ) == [[[f"s3://{p.RAW_BUCKET}/events#amount",
                f"s3://{p.CURATED_BUCKET}/{p.CURATED_PREFIX}#revenue",
                f"snowflake://{p.ACCOUNT}/{p.STAGING_TABLE}#REVENUE",
                f"snowflake://{p.ACCOUNT}/{p.MART_TABLE}#REVENUE"]]]  # fmt: skip
        assert rows(
            "MATCH (f:File)-[:PART_OF]->(d:Dataset {urn: $events}) RETURN count(f)",
            events=f"s3://{p.RAW_BUCKET}/events",
        ) == [[len(p.DAYS) * p.PARTS_PER_DAY]]
        # Every harvest of both runs succeeded: S3 twice, Spark and Snowflake once per run.
        assert rows("MATCH (r:HarvestRun) RETURN r.system, r.status ORDER BY r.system") == (
            [["s3", "success"]] * 2 * RUNS
            + [["snowflake", "success"]] * RUNS
            + [["spark", "success"]] * RUNS
        )
        # Only the part files Spark's last overwrite left are present; the replaced ones are not.
        root = f"s3://{p.CURATED_BUCKET}/"
        present = rows(
            "MATCH (f:File) WHERE f.urn STARTS WITH $root AND f.deleted_at IS NULL "
            "RETURN f.urn ORDER BY f.urn",
            root=root,
        )
        assert [urn.removeprefix(root) for [urn] in present] == spark_output


def test_the_marts_dropped_column_is_a_dated_schema_change(demo_dir: Path) -> None:
    """COLUMNS' DELETED row dates the drop a day before the run; both runs of the demo leave
    the one change, not one per run."""
    mart = f"snowflake://{p.ACCOUNT}/{p.MART_TABLE}"
    dropped = next(c for c in p.SNOWFLAKE_COLUMNS if c.name == p.DROPPED_COLUMN)
    assert dropped.table == p.MART_TABLE and dropped.dropped_days_ago == 1
    standing = [c.name for c in p.SNOWFLAKE_COLUMNS if c.table == p.MART_TABLE]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    argv = [sys.executable, "-m", "lineagegraph.cli", "--data-dir", str(demo_dir / "graph")]
    ran = subprocess.run(
        [*argv, "schema-history", p.MART_TABLE, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    history = json.loads(ran.stdout)
    assert history["urn"] == mart
    fields = [[f["name"] for f in v["fields"]] for v in history["versions"]]
    assert fields == [standing, [c for c in standing if c != p.DROPPED_COLUMN]]
    [change] = history["changes"]
    assert change["breaking"] and [d["name"] for d in change["dropped"]] == [p.DROPPED_COLUMN]
    newest = max(v["last_seen"] for v in history["versions"])  # the last run's harvest
    assert 0 < newest - change["at"] - 86_400_000 < 30 * 60_000  # a day before a run


def test_data_is_read_after_it_was_written(demo_dir: Path) -> None:
    """No dataset flows anywhere before its newest present object was written."""
    with open_store(GraphSettings(data_dir=demo_dir / "graph")) as store:
        flows = store.execute(
            "MATCH (f:File)-[:PART_OF]->(d:Dataset)-[e:FLOWS_TO]->(t:Asset) "
            "WHERE f.deleted_at IS NULL "
            "RETURN d.urn, t.urn, e.first_seen, e.last_seen, max(f.last_modified)",
            write=False,
        ).rows
        reads = store.execute(
            "MATCH (f:File)-[:PART_OF]->(d:Dataset)<-[:READS_FROM]-(j:Transformation) "
            "WHERE f.deleted_at IS NULL RETURN d.urn, j.last_run_at, max(f.last_modified)",
            write=False,
        ).rows
    assert {(d, t) for d, t, *_ in flows} == {
        (f"s3://{p.RAW_BUCKET}/events", f"s3://{p.CURATED_BUCKET}/{p.CURATED_PREFIX}"),
        (
            f"s3://{p.CURATED_BUCKET}/{p.CURATED_PREFIX}",
            f"snowflake://{p.ACCOUNT}/{p.STAGING_TABLE}",
        ),
    }
    for dataset, target, _first, last_seen, written in flows:
        assert last_seen > written, f"{dataset} flows to {target} before it was written"
    assert reads and all(read_at > written for _, read_at, written in reads)


def test_a_failing_step_stops_the_demo_and_names_it(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A graph that holds a dataset the demo's bucket no longer has: listing the bucket would
    lose it entirely, the mass-delete guard refuses, the harvest is partial: the demo stops."""
    workdir = tmp_path_factory.mktemp("demo-fails") / "run"
    with local_s3_server() as endpoint:
        settings = Settings.model_validate(
            {
                "graph": {"data_dir": str(workdir / "graph")},
                "s3": {
                    "endpoint_url": endpoint,
                    "region": "us-east-1",
                    "access_key_id": "t",
                    "secret_access_key": "t",
                    "addressing_style": "path",
                },
            }
        )
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="t",
            aws_secret_access_key="t",
        )
        client.create_bucket(Bucket=p.RAW_BUCKET)
        for i in range(30):
            client.put_object(Bucket=p.RAW_BUCKET, Key=f"legacy/{i}.csv", Body=b"x")
        with open_store(settings.graph) as store:
            store.init_schema()
            assert harvest_s3(store, settings, p.RAW_BUCKET).status == "success"

    result = run_demo(workdir)
    assert result.returncode == 5, result.stderr[-3000:]
    assert "error: demo step [1/5] (S3 at http://127.0.0.1:" in result.stderr
    assert f"failed: listing s3://{p.RAW_BUCKET} ended partial: stopped before " in result.stderr
    assert f"(s3://{p.RAW_BUCKET}/legacy) with 30 objects" in result.stderr
    assert "[2/5]" not in result.stderr and "Done" not in result.stdout


# --- the first hour after the demo (issue 22) -----------------------------------------------


def test_the_closing_lines_point_the_shell_at_the_graph_and_run_as_printed(demo_dir: Path) -> None:
    """Copied in order from the demo's output, the `export` line and the commands after it
    work with no --data-dir; without the export, `status` names the demo's store nearby."""
    out = (demo_dir / "stdout-1.txt").read_text().splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("Point this shell at it"))
    block = [line.strip() for line in out[start + 1 :] if line.startswith("  ")]
    export = f"export LINEAGEGRAPH_GRAPH__DATA_DIR={demo_dir / 'graph'}"
    assert block[0] == export and block[1].endswith(" status")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    ran = subprocess.run(
        ["bash", "-c", "set -e\n" + "\n".join(block)],
        cwd=demo_dir.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert f"{p.MART_TABLE}#REVENUE: " in ran.stdout  # the columns hint answered
    assert any(  # the schema-history hint answered: the mart's column dropped a day ago
        line.split()[3:5] == ["breaking", p.DROPPED_COLUMN] for line in ran.stdout.splitlines()
    ), ran.stdout
    plain = subprocess.run(
        ["bash", "-c", block[1]],
        cwd=demo_dir.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plain.returncode == 3
    assert f"Found a store nearby: {demo_dir.name}/graph" in plain.stderr
    assert export in plain.stderr


READ_COMMANDS = [
    "status",
    "query",
    "upstream",
    "downstream",
    "path",
    "impact",
    "columns",
    "schema-history",
    "check",
    "orphans",
    "cost-report",
]


def help_examples(command: str) -> list[list[str]]:
    """The example command lines of `command --help` (continuations joined, `&& ...` and
    `# ...` left out), as argv lists without the leading `lineagegraph`."""
    text = CliRunner().invoke(cli, [command, "--help"], terminal_width=200).output
    lines = text.split("Example", 1)[1].split("Options:")[0].splitlines()[1:]
    joined: list[str] = []
    for line in (x.strip() for x in lines):
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line
        elif line.startswith("lineagegraph "):
            joined.append(line)
    return [shlex.split(x.split(" && ")[0].split("  #")[0])[1:] for x in joined]


@pytest.mark.parametrize("command", READ_COMMANDS)
def test_every_help_example_runs_on_the_demos_graph(
    demo_dir: Path, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Examples are what people copy first: each runs, as printed, on the demo's graph."""
    monkeypatch.chdir(tmp_path)  # where the examples' -o files go
    examples = help_examples(command)
    assert examples, f"`{command} --help` has no example"
    env = {"LINEAGEGRAPH_GRAPH__DATA_DIR": str(demo_dir / "graph")}
    for argv in examples:
        result = CliRunner().invoke(cli, argv, env=env)
        assert result.exit_code == 0, f"lineagegraph {shlex.join(argv)}: {result.output}"
