"""The Python API: `import lineagegraph` gives settings, a store, harvests, the lineage
questions and rendering, as docs/python-api.md shows; the package imports cheaply and without
cycles."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import lineagegraph
from lineagegraph import api

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "lineagegraph"


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without the tester's LINEAGEGRAPH_* settings, this checkout first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return {**env, **extra}


def page_block(page: str, language: str) -> str:
    """The first code block of `language` on a docs page, before its first `## ` heading."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    section = text.split("\n## ", 1)[0]
    found = re.search(rf"^```{language}\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert found, f"no {language} block at the top of docs/{page}"
    return found.group(1)


def test_the_readme_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(page_block("python-api.md", "python"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=clean_env(TMPDIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "s3: skipped (no [s3] buckets)" in lines
    assert any(line.startswith("openlineage: ok in ") and "1 run(s)" in line for line in lines)
    assert "snowflake://acme/ANALYTICS.MARTS.DAILY_SALES  [snowflake Table]" in lines
    page = next(tmp_path.glob("*/lineage.html")).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "s3://lake/raw/orders" in page


def test_every_api_name_is_reachable_from_the_package() -> None:
    for name in api.__all__:
        assert getattr(lineagegraph, name) is getattr(api, name), name
    assert set(api.__all__) <= set(dir(lineagegraph))


def test_import_lineagegraph_loads_nothing_heavy() -> None:
    code = (
        "import sys, lineagegraph\n"
        "heavy = [m for m in ('lineagegraph.api', 'boto3', 'snowflake.connector', 'falkordb',"
        " 'click') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_store_interface_and_its_backends_import_no_cycle() -> None:
    graph = SRC / "graph"
    backends = {"lineagegraph.graph.falkordb", "lineagegraph.graph.neo4j"}
    assert not imports_of(graph / "base.py") & (backends | {"lineagegraph.graph.store"})
    for backend in ("falkordb.py", "neo4j.py"):
        assert "lineagegraph.graph.store" not in imports_of(graph / backend), backend
    # each backend imports on its own, before anything else of the package's graph layer
    for module in backends:
        subprocess.run(
            [sys.executable, "-c", f"import {module}"], env=clean_env(), check=True, timeout=60
        )


def test_the_quality_gate_through_the_api(tmp_path: Path) -> None:
    import json

    from lineagegraph.harvest.openlineage import OpenLineageHarvester

    assertions = [
        {"assertion": "not_null", "success": False, "column": "id"},
        {"assertion": "row_count", "success": True},
    ]
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({
        "eventType": "COMPLETE", "eventTime": "2024-06-01T02:00:00Z",
        "producer": "https://example.com/ge", "run": {"runId": "r-1"},
        "job": {"namespace": "etl", "name": "daily"},
        "inputs": [{"namespace": "s3://lake", "name": "raw/orders",
                    "inputFacets": {"dataQualityAssertions": {"assertions": assertions}}}],
        "outputs": [{"namespace": "s3://lake", "name": "mart/daily"}],
    }) + "\n")  # fmt: skip
    settings = lineagegraph.load_settings(graph={"data_dir": tmp_path / "graph"})
    with lineagegraph.open_store(settings) as store:
        (report,) = lineagegraph.harvest_source(
            OpenLineageHarvester(paths=(events,)), store, settings
        )
        assert report.ok and report.system == "openlineage"
        gate = lineagegraph.check(store, settings, "s3://lake/mart/daily")
    assert not gate.passed
    assert [(g.distance, g.check.name, g.check.status) for g in gate.failing] == [
        (1, "not_null", "fail")
    ]
    assert json.loads(gate.render("json"))["passed"] is False
