"""`lineagegraph orphans` and `cost-report` as a user runs them, on the embedded store."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from lake import DAY, T0, Lake

from lineagegraph.cli import cli
from lineagegraph.graph.store import open_store
from lineagegraph.reports.pricing import GB
from lineagegraph.settings import GraphSettings

AS_OF = "2023-11-15T22:13:20Z"  # T0 + 1 day


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with no config file and no LINEAGEGRAPH_* variables, and a lake."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    with open_store(GraphSettings(data_dir=tmp_path / "store")) as store:
        store.init_schema()
        lake = Lake(store)
        lake.obj("lake", "raw/orders/part-0.csv", size=2 * GB)
        lake.obj("lake", "raw/orders/_SUCCESS", size=0)
        lake.obj("lake", "raw/events/2024/x.json", size=GB, storage_class="GLACIER")
        lake.obj("lake", "logs/app.log", size=GB)
        lake.obj("lake", "marts/sales/part-0.parquet", size=GB)
        lake.read(lake.dataset("s3a://lake/marts/"), at=T0 - DAY)
        lake.write()
    return tmp_path


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--data-dir", str(home / "store"), *args])


def test_orphans_table(home: Path) -> None:
    result = run(home, "orphans", "--as-of", AS_OF)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "Orphaned S3 objects as of 2023-11-15T22:13:20Z: nothing consumed them in the 90 days "
        "since 2023-08-17T22:13:20Z"
    )
    assert "excluded keys: **/_SUCCESS, **/_temporary/**" in lines[1]
    table = [line.split() for line in lines if line.startswith("lake ")]
    assert [row[:3] for row in table[:3]] == [
        ["lake", "s3://lake/raw/orders", "STANDARD"],
        ["lake", "s3://lake/logs", "STANDARD"],
        ["lake", "s3://lake/raw/events/2024", "GLACIER"],
    ]
    assert "Top 10 datasets by monthly cost:" in result.stdout
    assert lines[-1].startswith("Total: objects 3, bytes 4,294,967,296, gib 4.0, monthly_usd 0.")


def test_orphans_json_is_the_whole_report(home: Path) -> None:
    result = run(
        home,
        "orphans",
        "--as-of",
        AS_OF,
        "--format",
        "json",
        "--by",
        "bucket",
        "--exclude",
        "logs/**",
        "--lookback-days",
        "30",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["report"], doc["as_of"], doc["since"], doc["lookback_days"]) == (
        "orphans",
        AS_OF,
        "2023-10-16T22:13:20Z",
        30,
    )
    assert doc["excludes"] == ["**/_SUCCESS", "**/_temporary/**", "logs/**"]
    [row] = doc["rows"]
    assert (row["bucket"], row["objects"], row["gib"]) == ("lake", 2, 3.0)
    assert doc["totals"]["monthly_usd"] == row["monthly_usd"]
    assert [d["dataset"] for d in doc["top_datasets"]] == [
        "s3://lake/raw/orders",
        "s3://lake/raw/events/2024",
    ]


def test_cost_report_csv_to_a_file(home: Path) -> None:
    out = home / "cost.csv"
    result = run(
        home, "cost-report", "--as-of", AS_OF, "--by", "class", "--format", "csv", "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and f"wrote {out}" in result.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == (
        "storage_class,objects,bytes,gib,monthly_usd,orphaned_objects,orphaned_gib,"
        "orphaned_usd,last_read"
    )
    assert lines[1].startswith("STANDARD,4,4294967296,4.0,0.092,2,3.0,0.069,")


def test_markdown(home: Path) -> None:
    result = run(home, "cost-report", "--as-of", AS_OF, "--format", "markdown", "--top", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## S3 storage cost as of 2023-11-15T22:13:20Z")
    assert "### Top 1 datasets by monthly cost" in result.stdout
    assert "| lake | s3://lake/raw/orders | STANDARD |" in result.stdout


def test_settings_from_the_config_file(home: Path) -> None:
    prices = home / "eu.toml"
    prices.write_text('region = "eu-west-1"\n[classes.STANDARD]\nusd_per_gb_month = 0.1\n')
    (home / "config").mkdir()
    (home / "config" / "lineagegraph.toml").write_text(
        '[reports]\nexclude = ["logs/**"]\nlookback_days = 1\ntop_n = 1\n'
        f'price_table = "{prices}"\n'
    )
    result = run(home, "orphans", "--as-of", AS_OF, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["lookback_days"], doc["excludes"][-1], len(doc["top_datasets"])) == (
        1,
        "logs/**",
        1,
    )
    assert doc["price_table"]["region"] == "eu-west-1"
    assert doc["rows"][0]["dataset"] == "s3://lake/raw/orders"  # marts read 2 days ago: outside
    assert doc["warnings"] == [
        f"storage class 'GLACIER' (1 object) is not in the price table {prices}; priced as STANDARD"
    ]
    assert "warning: storage class 'GLACIER'" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--as-of", "last tuesday"], "Invalid value for '--as-of': not a time: 'last tuesday'"),
        (["--exclude", "logs**"], "error: exclusion glob 'logs**': '**' must be a whole path"),
        (["--lookback-days", "0"], "Invalid value for '--lookback-days'"),
    ],
)
def test_bad_input_is_one_clear_line(home: Path, args: list[str], message: str) -> None:
    result = run(home, "orphans", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_price_table_is_a_config_error(home: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["--data-dir", str(home / "store"), "orphans"],
        env={"LINEAGEGRAPH_REPORTS__PRICE_TABLE": str(home / "nope.toml")},
    )
    assert result.exit_code == 2
    assert "error: cannot read price table" in result.stderr
    assert "nope.toml" in result.stderr


def test_help_shows_examples() -> None:
    for command in ("orphans", "cost-report"):
        result = CliRunner().invoke(cli, [command, "--help"])
        assert result.exit_code == 0
        assert f"lineagegraph {command} --" in result.stdout
