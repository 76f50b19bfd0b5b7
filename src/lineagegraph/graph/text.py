"""How the embedded store holds any string: a reversible per-character code, and the key limit.

FalkorDB cannot take, or cannot find, some strings exactly (measured on 4.16, see
tests/graph/test_text.py):

- NUL ends the query text (the server reads it as a C string): the statement fails to parse,
  so one such value failed its whole batch on every retry.
- Its exact-match index (a RediSearch tag index) splits values at \\x01 and trims C whitespace
  (space, \\t, \\n, \\v, \\f, \\r) from their ends, so `MATCH (:Asset {urn: 's3://b/Q1 '})` found
  nothing; inner whitespace and every other character are found exactly.
- The index holds values of at most KEY_BYTES bytes (UTF-8): a longer key is stored but never
  found again, so its edges were dropped.

The store therefore writes every string in a stored form and reads it back decoded. Each of
those 8 characters becomes one control character that the index neither trims nor splits at
(`SINGLE`), so size(), substring(), STARTS WITH, CONTAINS and ORDER BY keep their meaning on
everyday text. Those 8 stand-ins, and the 5 characters of the 3-character code words, are
themselves written as code words (`RARE`): a marker then two characters none of which ever
stands alone. The code is prefix-free and no code word can begin inside another, so equality,
STARTS WITH, ENDS WITH and CONTAINS on stored forms answer exactly what they answer on the
strings. Only strings holding one of those 13 rare control characters grow (3 per character).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Characters FalkorDB cannot hold (NUL) or its index cannot find (\x01, C whitespace at the
# ends), each with its one-character stand-in (order kept: \x00 < \x01 < \t ... < ' ').
SINGLE = {
    "\x00": "\x02",
    "\x01": "\x03",
    "\t": "\x04",
    "\n": "\x05",
    "\v": "\x06",
    "\f": "\x07",
    "\r": "\x08",
    " ": "\x1f",
}
MARK = "\x0e"
DIGITS = "\x0f\x10\x11\x12"
# Every character that never stands for itself in a stored form, in code-point order.
RARE = sorted({*SINGLE.values(), MARK, *DIGITS})
WORD = {c: MARK + DIGITS[i // 4] + DIGITS[i % 4] for i, c in enumerate(RARE)}
ENCODE = str.maketrans({**SINGLE, **WORD})
DECODE_SINGLE = str.maketrans({v: k for k, v in SINGLE.items()})
DECODE_WORD = {w: c for c, w in WORD.items()}
WORD_RE = re.compile(f"{MARK}[{DIGITS}][{DIGITS}]")
NEEDS_ENCODING = re.compile(f"[{re.escape(''.join(SINGLE))}{''.join(RARE)}]")

KEY_BYTES = 4096
"""The longest key (urn, run id) the embedded store's index finds, in UTF-8 bytes of its stored
form; Neo4j's index takes about 8 KB. One limit for both keeps a graph portable."""


def encode(text: str) -> str:
    """The stored form of `text` (itself when it holds none of the characters above)."""
    # Every character above is a control character or a space: two fast scans settle nearly
    # every text (a batch's parameters are one text), before the slower character class.
    if (text.isprintable() and " " not in text) or NEEDS_ENCODING.search(text) is None:
        return text
    return text.translate(ENCODE)


def decode(stored: str) -> str:
    """The string a stored form stands for. Callers skip printable strings (the common case:
    every character above is a control character), so this only runs on ones that are not."""
    text = stored.translate(DECODE_SINGLE)
    if MARK in text:
        text = WORD_RE.sub(lambda m: DECODE_WORD[m[0]], text)
    return text


def key_too_long(key: str) -> bool:
    """Whether the embedded store's index could never find `key` again."""
    return len(key) * 4 > KEY_BYTES and len(encode(key).encode()) > KEY_BYTES


def too_long(keys: Iterable[str]) -> str | None:
    """Why a record naming these keys (urns) cannot be stored, or None: the one check the
    ingestion paths make before acknowledging a record (a longer key was stored but its edges
    were dropped)."""
    for key in keys:
        if key_too_long(key):
            size = len(encode(key).encode())
            return (
                f"name too long: {key[:60]!r}... is {size:,} bytes as stored, over the "
                f"store's {KEY_BYTES:,}-byte limit for a key"
            )
    return None
