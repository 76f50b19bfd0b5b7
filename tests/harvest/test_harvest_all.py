"""`harvest all`: every configured source in turn, failures reported but not contagious."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import pytest
from botocore.client import BaseClient
from click.testing import CliRunner
from s3_fixtures import put_many

from lineagegraph.cli import cli
from lineagegraph.graph.store import open_store
from lineagegraph.pipeline import now_ms
from lineagegraph.settings import GraphSettings


@pytest.fixture
def config(tmp_path: Path, moto_endpoint: str, bucket: str) -> Path:
    cfg = tmp_path / "lineagegraph.toml"
    cfg.write_text(
        "[graph]\n"
        f'data_dir = "{tmp_path / "store"}"\n'
        "[s3]\n"
        f'endpoint_url = "{moto_endpoint}"\n'
        'region = "us-east-1"\naccess_key_id = "test"\naddressing_style = "path"\n'
        f'buckets = ["{bucket}"]\n'
        "[snowflake]\n"  # configured, but nothing listens there: this source must fail
        'account = "acme"\nuser = "u"\nhost = "127.0.0.1"\nport = 9\nprotocol = "http"\n'
        "login_timeout = 5\n"
    )
    return cfg


def run(config: Path, *args: str, **env: str):  # type: ignore[no-untyped-def]
    env = {
        "LINEAGEGRAPH_S3__SECRET_ACCESS_KEY": "test",
        "LINEAGEGRAPH_SNOWFLAKE__PASSWORD": "pw",
        **env,
    }
    return CliRunner().invoke(cli, ["--config", str(config), *args], env=env)


def test_a_failing_source_does_not_stop_the_others(
    config: Path, moto: BaseClient, bucket: str
) -> None:
    put_many(moto, bucket, {"raw/a.csv": (b"a,b\n", "STANDARD"), "raw/b.csv": (b"1", "STANDARD")})
    result = run(config, "harvest", "all")
    assert result.exit_code == 5, result.output
    lines = result.output.splitlines()
    s3_line = next(line for line in lines if line.startswith("s3: "))
    assert s3_line.startswith("s3: ok in ") and "2 nodes" not in s3_line
    assert "1 run(s)" in s3_line
    snow = next(line for line in lines if line.startswith("snowflake: "))
    assert snow.startswith("snowflake: FAILED")
    assert "spark: skipped (spark spool is empty)" in lines
    assert "error: 1 source(s) failed: snowflake" in result.output
    status = run(config, "status", "--format", "json")
    assets = json.loads(status.stdout)["assets"]
    assert {(a["kind"], a["assets"]) for a in assets} == {("File", 2), ("Dataset", 1)}


def test_only_runs_the_named_sources(config: Path) -> None:
    result = run(config, "harvest", "all", "--only", "s3")
    assert result.exit_code == 0, result.output
    summaries = [line.split(":")[0] for line in result.output.splitlines() if ": " in line]
    assert "s3" in summaries and "snowflake" not in summaries and "spark" not in summaries


def test_a_second_run_waits_for_nobody(config: Path, tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    with open(tmp_path / "store" / "harvest.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("pid 4242")
        held.flush()
        result = run(config, "harvest", "all")
    assert result.exit_code == 5
    assert "another harvest is running on this store (pid 4242 holds" in result.output
    assert "s3:" not in result.output


def test_counts_only_its_own_runs(config: Path, tmp_path: Path) -> None:
    # Another process records a failed S3 run while this one harvests (dated ahead so that it
    # falls inside this process's time window whatever the clocks).
    with open_store(GraphSettings(data_dir=tmp_path / "store")) as store:
        store.run("harvest_run_start", {
            "id": "theirs", "system": "s3", "scope": "s3://elsewhere/",
            "started": now_ms() + 60_000, "host": "another-host", "pid": 1, "pid_start": 1,
        })  # fmt: skip
        store.run("harvest_run_finish", {
            "id": "theirs", "finished": now_ms() + 61_000, "status": "failed", "error": "boom",
            "watermark": None, "counts": {},
        })  # fmt: skip
    result = run(config, "harvest", "all", "--only", "s3")
    assert result.exit_code == 0, result.output
    assert "s3: ok in " in result.output and "1 run(s)" in result.output


def test_nothing_configured_is_a_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "empty.toml"
    cfg.write_text(
        f'[graph]\ndata_dir = "{tmp_path / "store"}"\n'
        f'[spark]\nspool_dir = "{tmp_path / "no-spool"}"\n'
    )
    result = CliRunner().invoke(cli, ["--config", str(cfg), "harvest", "all"])
    assert result.exit_code == 2, result.output
    error = result.output.strip().splitlines()[-1]
    assert error.startswith("error: nothing to harvest: s3: no [s3] buckets;")
    for setting in ("[s3] buckets", "[snowflake] account", "[spark] spool_dir"):
        assert setting in error
    assert not (tmp_path / "store").exists()  # nothing touched


def test_a_configured_source_runs_and_the_rest_are_skipped(config: Path) -> None:
    result = run(config, "harvest", "all", "--only", "s3", "--only", "spark")
    assert result.exit_code == 0, result.output
    assert "spark: skipped (spark spool is empty)" in result.output.splitlines()


def test_snowflake_settings_are_checked_only_when_it_is_harvested(config: Path) -> None:
    no_password = {"LINEAGEGRAPH_SNOWFLAKE__PASSWORD": ""}
    for command in (["harvest", "all", "--only", "s3"], ["status"], ["query", "RETURN 1"]):
        result = run(config, *command, **no_password)
        assert result.exit_code == 0, (command, result.output)
    result = run(config, "harvest", "snowflake", **no_password)
    assert result.exit_code == 2, result.output
    assert "invalid [snowflake] settings" in result.output
    assert "password is empty; give a real value or leave the setting unset" in result.output
    result = run(config, "harvest", "all", **no_password)
    assert result.exit_code == 5, result.output
    assert "snowflake: FAILED" in result.output and "password is empty" in result.output
