"""Rows as a terminal table, JSON, CSV or Markdown, for every command that prints data."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from lineagegraph.errors import UsageError

FORMATS = ("table", "json", "csv", "markdown")
MIN_TEXT_WIDTH = 24
"""A name is never cut shorter than this (its bucket and its end still show); a table that
cannot fit even so runs wider than the terminal rather than lose its names."""


def format_rows(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str,
    *,
    right_aligned: Collection[str] = (),
    width: int | None = None,
) -> str:
    """`right_aligned` names the table's columns of amounts given as text (`$0.0230`, sizes),
    aligned and kept whole like numbers; with `width` (reports: `terminal_width()`), a table
    fits it by wrapping headers, and cuts values in the middle only when it must."""
    if fmt == "json":
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        return json.dumps(records, indent=2, ensure_ascii=False, default=str)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_cell(v) for v in row] for row in rows])
        return buf.getvalue().rstrip("\n")
    if fmt == "markdown":
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += [
            "| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |" for row in rows
        ]
        return "\n".join(lines)
    if fmt == "table":
        return _table(columns, rows, right_aligned, width)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4g}"
    if isinstance(value, Decimal):
        return format(value, "f")  # never exponent notation (1E-9)
    return str(value)


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """Text for a terminal: control characters (a name may hold any) shown as `\\x1b` rather
    than sent, so a name can neither break a table's lines nor drive the terminal with an
    escape sequence. Machine formats (JSON, CSV) keep names exactly.

    >>> visible("a\\tb\\x1b[31m")
    'a\\\\x09b\\\\x1b[31m'
    """
    if text.isprintable():  # nearly every value: no search at all
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def time_text(ms: int | None) -> str | None:
    """Epoch milliseconds (every time in the graph) as UTC for a table: 2024-03-01 06:00:00Z."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


TIME_PROPERTIES = frozenset({
    "first_seen", "last_seen", "deleted_at", "last_modified", "oldest_modified",
    "newest_modified", "run_at", "last_run_at", "started", "finished", "watermark",
    "last_success",
})  # fmt: skip
"""The graph's properties that hold a time (epoch milliseconds): graph-model.md."""


def is_time_column(name: str) -> bool:
    """Whether a query's result column is a time: `t.last_seen`, `deleted_at`, `x.run_at`."""
    prop = name.rpartition(".")[2].strip("`")
    return prop in TIME_PROPERTIES or prop.endswith("_at")


def human_times(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """The rows with each time column's integers as UTC text (`time_text`), for people; other
    values, and anything in a time column that is not an integer, stay as they are."""
    times = [is_time_column(name) for name in columns]
    if not any(times):
        return [list(row) for row in rows]
    return [
        [time_text(v) if t and type(v) is int else v for v, t in zip(row, times, strict=True)]
        for row in rows
    ]


def usd_text(amount: Decimal) -> str:
    """Money as people read it: `$1,234.57`, `$0.0230`, `<$0.0001`; never `0.0` for a cost.

    >>> usd_text(Decimal("1234.5678")), usd_text(Decimal("0.023")), usd_text(Decimal("1E-9"))
    ('$1,234.57', '$0.0230', '<$0.0001')
    >>> usd_text(Decimal(0))
    '$0'
    """
    if amount == 0:
        return "$0"
    if amount < Decimal("0.0001"):
        return "<$0.0001"
    if amount < 1:
        return f"${amount.quantize(Decimal('0.0001'), ROUND_HALF_UP)}"
    return f"${amount.quantize(Decimal('0.01'), ROUND_HALF_UP):,}"


def size_text(size: int) -> str:
    """Bytes in binary units, one style for every size: `512 B`, `1.50 KiB`, `4.00 GiB`.

    >>> size_text(0), size_text(1536), size_text(4 * 2**30), size_text(2**60)
    ('0 B', '1.50 KiB', '4.00 GiB', '1.00 EiB')
    """
    if size < 1024:
        return f"{size} B"
    units = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    power = min(len(units), (size.bit_length() - 1) // 10)
    return f"{size / 1024**power:,.2f} {units[power - 1]}"


def terminal_width() -> int | None:
    """The width a report's table should fit: $COLUMNS when set, else the terminal's; None
    when stdout is not a terminal (a file or a pipe gets every name whole, on one line)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):  # not a terminal, or no real stdout
        return None


def cut_middle(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut in the middle with `…`: the start of a name
    says where it lives and the end what it is, so both stay (more of the end).

    >>> cut_middle("s3://acme-raw/partners/events/2024", 20)
    's3://acme…vents/2024'
    >>> cut_middle("short", 20)
    'short'
    """
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def _table(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    right_aligned: Collection[str] = (),
    width: int | None = None,
) -> str:
    """Aligned columns (numbers to the right). A table wider than `width` wraps its long
    headers (at `_`); a value is never broken across lines (names are what people copy):
    only if the table still does not fit are the widest text values cut in the middle."""
    cells = [[visible(v if type(v) is str else _cell(v)) for v in row] for row in rows]
    numeric = [
        name in right_aligned or _numeric([row[i] for row in rows])
        for i, name in enumerate(columns)
    ]
    if width is None:
        widths = [max(len(v) for v in column) for column in zip(columns, *cells, strict=True)]
    else:
        widths = _fit([list(columns), *cells], numeric, width)
    # Rows are padded by one format string, and only values wider than their column are cut:
    # a report of 200,000 rows took 6 s the general way, cell by cell.
    line = "  ".join(
        f"{{:{'>' if num else '<'}{w}}}" for w, num in zip(widths, numeric, strict=True)
    )
    header = [[v] if len(v) <= w else _wrap(v, w) for v, w in zip(columns, widths, strict=True)]
    out = [
        line.format(*[part[i] if i < len(part) else "" for part in header]).rstrip()
        for i in range(max(map(len, header), default=1))
    ]
    out.append("  ".join("-" * w for w in widths))
    for row in cells:
        if any(len(v) > w for v, w in zip(row, widths, strict=True)):
            row = [cut_middle(v, w) for v, w in zip(row, widths, strict=True)]
        out.append(line.format(*row).rstrip())
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def _fit(table: list[list[str]], numeric: list[bool], width: int) -> list[int]:
    """Column widths: each as wide as its longest cell; if the table is too wide, first long
    headers wrap to their column's cells, then the widest text column narrows one character at
    a time until the table fits (numbers and amounts never narrow)."""
    header, *cells = table
    widths = [max(len(v) for v in column) for column in zip(*table, strict=True)]
    longest_cell = [max([len(row[i]) for row in cells], default=0) for i in range(len(header))]
    longest_piece = [max(len(piece) for piece in _pieces(name)) for name in header]

    def overflow() -> int:
        return sum(widths) + 2 * (len(widths) - 1) - width

    for i, name in enumerate(header):
        if overflow() > 0 and len(name) > longest_cell[i]:
            widths[i] = max(longest_cell[i], longest_piece[i])
    least = [
        max(longest_piece[i], longest_cell[i] if numeric[i] else min(MIN_TEXT_WIDTH, w))
        for i, w in enumerate(widths)
    ]
    while overflow() > 0:
        spare, i = max((w - m, i) for i, (w, m) in enumerate(zip(widths, least, strict=True)))
        if spare <= 0:
            break
        widths[i] -= 1
    return widths


def _wrap(text: str, width: int) -> list[str]:
    """A header in lines of at most `width` characters, broken after `/ . _ -` where possible."""
    if len(text) <= width:
        return [text]
    lines = [""]
    for piece in _pieces(text):
        while len(piece) > width - len(lines[-1]) and len(piece) > width:
            room = width - len(lines[-1])  # no separator near enough: break anywhere
            lines[-1] += piece[:room]
            piece = piece[room:]
            lines.append("")
        if lines[-1] and len(lines[-1] + piece) > width:
            lines.append("")
        lines[-1] += piece
    return lines


def _pieces(text: str) -> list[str]:
    """`monthly_usd` -> `monthly_`, `usd`: where a header may break."""
    return re.findall(r"[^/._-]*[/._-]|[^/._-]+", text) or [text]


def _numeric(values: Sequence[Any]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(isinstance(v, int | float | Decimal) for v in present)


def write_file(path: Path, text: str) -> None:
    """Write the whole file at once (a temporary file renamed into place), so a failure never
    leaves half a file behind; UsageError (exit 2) naming the file if it cannot be written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
