"""Real dbt artifacts of the small project in data/dbt_project, made once per test session.

dbt runs from its own venv (tools/dbt/.venv, built by scripts/dbt-venv.sh) or the executable
named by LINEAGEGRAPH_TEST_DBT: `dbt parse` with a Snowflake profile (no connection needed)
gives the Snowflake urns; dbt-duckdb builds the project for real for run_results and catalog.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT = Path(__file__).parent / "data" / "dbt_project"
# Files laid over the shop project for the classification tests: tags and meta, and a model
# that hashes and counts personal data.
PRIVACY = Path(__file__).parent / "data" / "dbt_privacy"
VENV_DBT = Path(__file__).parents[2] / "tools" / "dbt" / ".venv" / "bin" / "dbt"
SNOWFLAKE_ACCOUNT = "acme-prod"


@dataclass(frozen=True)
class DbtBuild:
    """Target directories: Snowflake `dbt parse`, and a DuckDB build + docs; the DuckDB file."""

    snowflake: Path
    duckdb: Path
    database: Path

    @property
    def duckdb_namespace(self) -> str:
        return f"duckdb://{self.database}"


def dbt_executable() -> Path | None:
    named = os.environ.get("LINEAGEGRAPH_TEST_DBT")
    path = Path(named) if named else VENV_DBT
    return path if path.is_file() else None


def _dbt(dbt: Path, project: Path, *args: str) -> None:
    env = {
        **os.environ,
        "DBT_PROFILES_DIR": str(project),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_PARTIAL_PARSE": "false",
        "SHOP_DUCKDB_PATH": str(project / "shop.duckdb"),
    }
    done = subprocess.run(
        [str(dbt), *args, "--project-dir", str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # `dbt build` exits 1 when a test fails: this project has one failing test on purpose.
    if done.returncode not in (0, 1) or "Encountered an error" in done.stdout:
        raise AssertionError(f"dbt {' '.join(args)} failed:\n{done.stdout[-3000:]}")


@pytest.fixture(scope="session")
def dbt_build(tmp_path_factory: pytest.TempPathFactory) -> DbtBuild:
    return _build(tmp_path_factory.mktemp("dbt") / "shop")


@pytest.fixture(scope="session")
def dbt_privacy_build(tmp_path_factory: pytest.TempPathFactory) -> DbtBuild:
    """The shop project with data/dbt_privacy laid over it, parsed and built the same way."""
    return _build(tmp_path_factory.mktemp("dbt-privacy") / "shop", PRIVACY)


def rebuilt(build: DbtBuild, into: Path, files: dict[str, str], *args: str) -> DbtBuild:
    """A copy of a built project (its DuckDB file and target too) with `files` (paths in the
    project: new text) replaced, where real dbt then runs `args` (`run -s model`): a session's
    build changed in seconds instead of built again."""
    dbt = dbt_executable()
    assert dbt is not None  # the build it copies ran it
    project = into / "shop"
    shutil.copytree(build.database.parent, project)
    for name, text in files.items():
        (project / name).write_text(text, encoding="utf-8")
    _dbt(dbt, project, *args, "--target", "duckdb")
    return DbtBuild(project / "target-sf", project / "target", project / "shop.duckdb")


def _build(project: Path, overlay: Path | None = None) -> DbtBuild:
    dbt = dbt_executable()
    if dbt is None:
        pytest.skip(f"no dbt at {VENV_DBT} (run scripts/dbt-venv.sh) or $LINEAGEGRAPH_TEST_DBT")
    shutil.copytree(PROJECT, project)
    if overlay is not None:
        shutil.copytree(overlay, project, dirs_exist_ok=True)
    _dbt(dbt, project, "parse", "--target", "snowflake", "--target-path", "target-sf")
    # build writes run_results.json with the tests; docs generate (after build, so the tables
    # exist for the catalog) writes its own, so the build's is put back.
    _dbt(dbt, project, "build", "--target", "duckdb")
    build_results = (project / "target" / "run_results.json").read_bytes()
    _dbt(dbt, project, "docs", "generate", "--target", "duckdb")
    (project / "target" / "run_results.json").write_bytes(build_results)
    return DbtBuild(project / "target-sf", project / "target", project / "shop.duckdb")
