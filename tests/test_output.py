"""The shared row renderer: money and sizes for people, and tables that fit a width."""

from __future__ import annotations

import csv
import doctest
import io
from decimal import Decimal

from lineagegraph import output
from lineagegraph.output import render, size_text, usd_text


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
    text = render(["usd"], [[Decimal(1).scaleb(-9)], [Decimal(0).scaleb(-9)]], "csv")
    assert text.splitlines() == ["usd", "0.000000001", "0.000000000"]


def test_a_wide_table_wraps_to_the_width_and_keeps_amounts_whole() -> None:
    urn = "s3://a-long-bucket-name/raw/events/year=2024/month=09/day=30/hour=12/" + "x" * 40
    rows = [[urn, "$1,234.57", 123456789], ["s3://b/short", "<$0.0001", 1]]
    text = render(["dataset", "monthly_usd", "orphaned_objects"], rows, "table",
                  right_aligned=["monthly_usd"], width=60)  # fmt: skip
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 60
    assert "$1,234.57" in text and "123456789" in text and "<$0.0001" in text
    first = len(lines[2].split()[0])  # the dataset column's width, from the rule under it
    assert "".join(line[:first].strip() for line in lines[3:-2]) == urn  # wrapped, not cut
    assert lines[-2].split() == ["s3://b/short", "<$0.0001", "1"]
    assert lines[0].split() == ["dataset", "monthly_", "orphaned_"]  # headers break at _


def test_without_a_width_nothing_wraps() -> None:
    urn = "s3://bucket/" + "x" * 150
    assert urn in render(["urn"], [[urn]], "table")
    assert render([], [], "table") == "\n\n(0 rows)"


def test_a_table_shows_control_characters_instead_of_sending_them() -> None:
    """A name may hold any character: in a terminal table an escape sequence or a line break
    would drive the terminal or break the table, so they are shown; CSV and JSON keep them."""
    names = ["a\x1b[2J", "line\nbreak", "tab\there", "del\x7f", "c1\x9b", " spaced ", "日本 é"]
    table = render(["name"], [[n] for n in names], "table")
    assert not any(c in table for c in "\x1b\t\x7f\x9b") and table.count("\n") == len(names) + 2
    assert [line.rstrip() for line in table.splitlines()[2:-1]] == [
        "a\\x1b[2J", "line\\x0abreak", "tab\\x09here", "del\\x7f", "c1\\x9b", " spaced", "日本 é",
    ]  # fmt: skip
    assert [row[0] for row in csv.reader(io.StringIO(render(["name"], [[n] for n in names],
                                                              "csv")))][1:] == names  # fmt: skip
