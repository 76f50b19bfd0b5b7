"""The shared row renderer: money and sizes for people, and tables that fit a width."""

from __future__ import annotations

import csv
import doctest
import io
from decimal import Decimal

import click
import pytest
from click.testing import CliRunner

from lineagegraph import output
from lineagegraph.output import (
    cut_middle,
    format_rows,
    human_times,
    size_text,
    terminal_width,
    usd_text,
)


def test_doctests() -> None:
    assert doctest.testmod(output).failed == 0


def test_money_is_never_shown_as_zero_unless_it_is() -> None:
    assert usd_text(Decimal("0.000000001")) == "<$0.0001"
    assert usd_text(Decimal("0.0001")) == "$0.0001"
    assert usd_text(Decimal("0.00005")) == "<$0.0001"
    assert usd_text(Decimal("0.99996")) == "$1.0000"
    assert usd_text(Decimal("1234567.891")) == "$1,234,567.89"
    assert usd_text(Decimal("0E-9")) == "$0"


def test_sizes_have_one_style() -> None:
    assert [size_text(n) for n in (0, 1023, 1024, 10 * 2**20, 3 * 2**40)] == [
        "0 B", "1023 B", "1.00 KiB", "10.00 MiB", "3.00 TiB",
    ]  # fmt: skip


def test_decimals_are_written_without_exponents() -> None:
    text = format_rows(["usd"], [[Decimal(1).scaleb(-9)], [Decimal(0).scaleb(-9)]], "csv")
    assert text.splitlines() == ["usd", "0.000000001", "0.000000000"]


REPORT_COLUMNS = [
    "dataset",
    "storage_class",
    "objects",
    "size",
    "monthly_usd",
    "oldest_modified",
    "newest_modified",
    "last_read",
]
SIZES = ["size", "monthly_usd"]


@pytest.mark.parametrize("width", [110, 120, 200])
def test_a_table_fits_by_wrapping_headers_and_never_breaks_a_name(width: int) -> None:
    """Names are what people copy: the demo's orphan table, at any width it can fit, keeps
    `s3://acme-raw/partners/feeds/2024-05` whole on its line (it was cut at `-` and `/`)."""
    name = "s3://acme-raw/partners/feeds/2024-05"
    rows = [
        [name, "STANDARD", 12, "3.50 MiB", "<$0.0001", "2026-12-02", "2026-12-02", None],
        [
            "s3://acme-raw/backups",
            "DEEP_ARCHIVE",
            1,
            "3.81 MiB",
            "<$0.0001",
            "2026-12-02",
            "2026-12-02",
            None,
        ],
    ]
    lines = format_rows(
        REPORT_COLUMNS, rows, "table", right_aligned=SIZES, width=width
    ).splitlines()
    assert max(len(line) for line in lines) <= width
    assert [line.split()[0] for line in lines if line.startswith("s3://")] == [
        name,
        "s3://acme-raw/backups",
    ]
    rule = lines.index(next(x for x in lines if x.startswith("-")))
    assert len(lines) == rule + 4  # two rows, one line each, and the count


def test_only_a_too_narrow_width_cuts_names_and_then_in_the_middle() -> None:
    urn = "s3://a-long-bucket-name/raw/events/year=2024/month=09/day=30/hour=12/" + "x" * 40
    rows = [[urn, "$1,234.57", 123456789], ["s3://b/short", "<$0.0001", 1]]
    text = format_rows(
        ["dataset", "monthly_usd", "orphaned_objects"],
        rows,
        "table",
        right_aligned=["monthly_usd"],
        width=60,
    )
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 60
    assert [lines[0].split(), lines[1].split()] == [
        ["dataset", "monthly_", "orphaned_"],
        ["usd", "objects"],
    ]
    cut, short = lines[3].split(), lines[4].split()
    assert cut[1:] == ["$1,234.57", "123456789"] and short == ["s3://b/short", "<$0.0001", "1"]
    head, _, tail = cut[0].partition("…")
    assert urn.startswith(head) and urn.endswith(tail) and len(tail) >= len(head) >= 11
    assert len(lines) == 6  # one line a row: nothing wrapped onto another


def test_cut_middle_keeps_both_ends() -> None:
    assert cut_middle("ANALYTICS.MARTS.DAILY_ACTIVE", 26) == "ANALYTICS.MA….DAILY_ACTIVE"
    assert cut_middle("abc", 3) == "abc" and cut_middle("abcd", 1) == "…"
    assert all(len(cut_middle("x" * 50, n)) == n for n in range(1, 50))


def test_terminal_width_follows_columns_and_is_none_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert terminal_width() == 200
    monkeypatch.delenv("COLUMNS")
    assert CliRunner().invoke(_width_command).output == "None\n"  # stdout is not a terminal


@click.command()
def _width_command() -> None:
    click.echo(repr(terminal_width()))


def test_query_shows_graph_times_as_utc_in_tables() -> None:
    columns = ["t.urn", "t.last_seen", "deleted_at", "runs", "x.run_at"]
    rows = [["a", 1_717_200_000_000, None, 1_717_200_000_000, 0], ["b", "not a time", 5, 2, 1]]
    assert human_times(columns, rows) == [
        ["a", "2024-06-01 00:00:00Z", None, 1_717_200_000_000, "1970-01-01 00:00:00Z"],
        ["b", "not a time", "1970-01-01 00:00:00Z", 2, "1970-01-01 00:00:00Z"],
    ]


def test_without_a_width_nothing_wraps() -> None:
    urn = "s3://bucket/" + "x" * 150
    assert urn in format_rows(["urn"], [[urn]], "table")
    assert format_rows([], [], "table") == "\n\n(0 rows)"


def test_a_table_shows_control_characters_instead_of_sending_them() -> None:
    """A name may hold any character: in a terminal table an escape sequence or a line break
    would drive the terminal or break the table, so they are shown; CSV and JSON keep them."""
    names = ["a\x1b[2J", "line\nbreak", "tab\there", "del\x7f", "c1\x9b", " spaced ", "日本 é"]
    table = format_rows(["name"], [[n] for n in names], "table")
    assert not any(c in table for c in "\x1b\t\x7f\x9b") and table.count("\n") == len(names) + 2
    assert [line.rstrip() for line in table.splitlines()[2:-1]] == [
        "a\\x1b[2J", "line\\x0abreak", "tab\\x09here", "del\\x7f", "c1\\x9b", " spaced", "日本 é",
    ]  # fmt: skip
    assert [
        row[0]
        for row in csv.reader(io.StringIO(format_rows(["name"], [[n] for n in names], "csv")))
    ][1:] == names
