"""`lineagegraph orphans` and `cost-report` as a user runs them, on the embedded store."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from lake import Lake, cli_lake

from lineagegraph.cli import cli
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings
from lineagegraph.values.pricing import GB

AS_OF = "2023-11-15T22:13:20Z"  # T0 + 1 day


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with no config file and no LINEAGEGRAPH_* variables, and a lake."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    with open_store(GraphSettings(data_dir=tmp_path / "store")) as store:
        cli_lake(store)
    return tmp_path


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--data-dir", str(home / "store"), *args])


def test_orphans_table(home: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["--data-dir", str(home / "store"), "orphans", "--as-of", AS_OF],
        env={"COLUMNS": "100"},
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "Orphaned S3 objects as of 2023-11-15T22:13:20Z: nothing consumed them in the 90 days "
        "since 2023-08-17T22:13:20Z"
    )
    assert "excluded keys: **/_SUCCESS, **/_temporary/**" in lines[1]
    table = [line.split() for line in lines if line.startswith("s3://lake/")]
    # The dataset urn names the bucket: no bucket column; money as money, sizes in GiB once.
    assert table[:3] == [
        [
            "s3://lake/raw/orders",
            "STANDARD",
            "1",
            "2.00",
            "GiB",
            "$0.0460",
            "2023-10-15",
            "2023-10-15",
        ],
        ["s3://lake/logs", "STANDARD", "1", "1.00", "GiB", "$0.0230", "2023-10-15", "2023-10-15"],
        [
            "s3://lake/raw/events/2024",
            "GLACIER",
            "1",
            "1.00",
            "GiB",
            "$0.0036",
            "2023-10-15",
            "2023-10-15",
        ],
    ]
    assert "Top 10 datasets by monthly cost:" in result.stdout
    assert lines[-1] == "Total: objects 3, bytes 4,294,967,296 (4.00 GiB), monthly_usd $0.0726"
    assert max(len(line) for line in lines[3:]) <= 100  # the tables: title and notes aside


@pytest.mark.parametrize("columns", ["200", "100", None])
def test_report_tables_never_break_a_name(home: Path, columns: str | None) -> None:
    """At any terminal width the names stay whole, one row a line (they were cut at `-` and
    `/` onto more lines even with COLUMNS=200); off a terminal nothing is fitted at all."""
    result = CliRunner().invoke(
        cli,
        ["--data-dir", str(home / "store"), "cost-report", "--as-of", AS_OF],
        env={"COLUMNS": columns},
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    rows = [line.split()[0] for line in lines if line.startswith("s3://")]
    assert "s3://lake/raw/events/2024" in rows and "s3://lake/raw/orders" in rows
    for table in result.stdout.split("\n\n")[1:3]:  # rows, and the top datasets
        rule = next(i for i, line in enumerate(table.splitlines()) if line.startswith("---"))
        body = table.splitlines()[rule + 1 : -1]
        assert all(line.startswith("s3://") for line in body), table
    if columns == "200":
        assert "monthly_usd" in result.stdout  # wide enough: not even a header wraps


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
    assert (row["bucket"], row["objects"], row["gib"]) == ("lake", 2, "3")
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
    assert lines[1].startswith("STANDARD,4,4294967296,4,0.092000000,2,3,0.069000000,")


def test_orphans_by_object_lists_each_object(home: Path) -> None:
    result = run(home, "orphans", "--as-of", AS_OF, "--by", "object", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["object"], r["objects"], r["bytes"], r["harvested_as"]) for r in rows] == [
        ("s3://lake/raw/orders/part-0.csv", "1", str(2 * GB), "object"),
        ("s3://lake/logs/app.log", "1", str(GB), "object"),
        ("s3://lake/raw/events/2024/x.json", "1", str(GB), "object"),
    ]
    assert rows[0]["dataset"] == "s3://lake/raw/orders" and rows[0]["bucket"] == "lake"
    whole = json.loads(
        run(home, "orphans", "--as-of", AS_OF, "--by", "object", "--format", "json").stdout
    )
    assert whole["by"] == "object" and whole["totals"]["objects"] == 3
    assert not any("per-object detail" in note for note in whole["notes"])


def test_orphans_oldest_objects_first(home: Path) -> None:
    args = ("orphans", "--as-of", AS_OF, "--by", "object", "--sort", "oldest", "--format", "csv")
    result = run(home, *args)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    dates = [r["oldest_modified"] for r in rows]
    assert dates == sorted(dates) and len(rows) == 3
    # the lake's objects share a date: the order falls back to cost, as without --sort
    by_cost = run(home, *args[:-4], "--format", "csv").stdout
    assert rows == list(csv.DictReader(io.StringIO(by_cost)))
    bad = run(home, "orphans", "--sort", "size")
    assert bad.exit_code == 2 and "'size' is not one of 'cost', 'oldest'" in bad.output


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


@pytest.fixture
def pennies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A lake of small objects: each costs a fraction of a cent a month, in thirds of a byte's
    price that no decimal holds exactly."""
    monkeypatch.chdir(tmp_path)
    with open_store(GraphSettings(data_dir=tmp_path / "store")) as store:
        store.init_schema()
        lake = Lake(store)
        for i in range(7):
            lake.obj("b", f"d{i}/x.csv", size=1000 + 333 * i)
        lake.obj("b", "ia/x.csv", size=7, storage_class="STANDARD_IA")
        lake.write()
    return tmp_path


def test_machine_formats_carry_exact_amounts_that_add_up(pennies: Path) -> None:
    args = ("--as-of", AS_OF, "--by", "dataset")
    csv_text = run(pennies, "orphans", *args, "--format", "csv").stdout
    doc = json.loads(run(pennies, "orphans", *args, "--format", "json").stdout)
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert len(rows) == 8
    usd = [Decimal(row["monthly_usd"]) for row in rows]
    assert all(amount > 0 for amount in usd)  # a fraction of a cent is not 0.0
    assert sum(usd) == Decimal(doc["totals"]["monthly_usd"])  # the CSV adds up to the total
    assert [Decimal(r["monthly_usd"]) for r in doc["rows"]] == usd
    assert all(len(r["monthly_usd"].partition(".")[2]) == 9 for r in doc["rows"])
    exact = Fraction("0.023") * 1000 / GB  # the cheapest row (d0)
    assert abs(Fraction(usd[-1]) - exact) < Fraction(1, 10**9)
    # GiB exactly, as a decimal string: 2^-30 has a finite decimal expansion.
    assert [Fraction(Decimal(r["gib"])) * GB for r in rows] == [int(r["bytes"]) for r in rows]
    assert sum(Decimal(r["gib"]) for r in rows) == Decimal(doc["totals"]["gib"])


def test_the_table_shows_money_as_money(pennies: Path) -> None:
    result = run(pennies, "cost-report", "--as-of", AS_OF)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if line.startswith("s3://b/")]
    assert len(rows) == 16 and all("<$0.0001" in line for line in rows)  # rows, top datasets
    assert all(re.search(r" \d\.\d\d KiB | \d+ B ", line) for line in rows)
    assert " 0.0 " not in result.stdout and "0.0\n" not in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "Total: objects 8, bytes 14,000 (13.67 KiB), monthly_usd <$0.0001, orphaned_objects 8, "
        "orphaned_bytes 14,000 (13.67 KiB), orphaned_usd <$0.0001"
    )
