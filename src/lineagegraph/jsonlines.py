"""Reading JSON lines that anyone may have written: a bad line is a reason, never a crash.

Files are opened with errors="surrogateescape", so an undecodable byte reaches `parse_json`
inside its own line (and is reported there) instead of failing the whole file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TextIO

# A line (or a one-document file) longer than this is skipped unread: events and records are
# kilobytes, wide column lineage a few megabytes, and memory stays bounded whatever a file holds.
MAX_TEXT_CHARS = 64 * 2**20


def numbered_lines(fh: TextIO) -> Iterator[tuple[int, str | None]]:
    """Each line and its number; None for a line over MAX_TEXT_CHARS, whose rest is read in
    pieces and dropped, so one endless line cannot fill the memory."""
    number = 0
    while line := fh.readline(MAX_TEXT_CHARS + 1):
        number += 1
        if len(line) <= MAX_TEXT_CHARS:
            yield number, line
            continue
        while line and not line.endswith(("\n", "\r")):
            line = fh.readline(MAX_TEXT_CHARS)
        yield number, None


class BadText(ValueError):
    """Text that is no JSON value; `offset` is where in the text the fault is."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.offset = offset


_UNDECODED = re.compile("[\udc80-\udcff]")  # the bytes that surrogateescape let through


def parse_json(text: str) -> Any:
    """`json.loads`, with every way a text can fail as a BadText: an undecodable byte, bad
    JSON, nesting deeper than the parser's recursion limit, a number too long to convert, an
    escaped lone surrogate (no character: the graph could not store it)."""
    if not text.isascii() and (byte := _UNDECODED.search(text)):
        code, at = ord(byte.group()) - 0xDC00, byte.start()
        column = at - text.rfind("\n", 0, at)
        raise BadText(f"not UTF-8: byte 0x{code:02x} at column {column}", at)
    try:
        value = json.loads(text)
        if "\\u" in text:  # only an escape can make a lone surrogate
            json.dumps(value, ensure_ascii=False).encode()
    except json.JSONDecodeError as exc:
        raise BadText(f"malformed JSON: {exc.msg}", exc.pos) from None
    except RecursionError:
        raise BadText("malformed JSON: nested too deep", 0) from None
    except UnicodeEncodeError:
        raise BadText("malformed JSON: a \\u escape names a lone surrogate", 0) from None
    except ValueError:  # the only other: an integer of more than 4300 digits
        raise BadText("malformed JSON: a number too long to read", 0) from None
    return value
