"""Exclusion globs over S3 keys (docs/orphans.md), turned into matcher parameters.

`*` matches within one path segment, `**` as a whole segment matches any number of them:
a leading `**/` zero or more, a `/**/` between segments zero or more, and a trailing `/**`
one or more (so `logs/**` covers everything under `logs/`, not an object named `logs`).
Every other character is literal.

The embedded FalkorDB (4.16) has no `=~`, and Neo4j has no FalkorDB regex functions, so a
glob is not handed to the graph as a regular expression. It is split into blocks of segment
patterns that one fixed Cypher expression in `cypher/orphans_usage.cypher` matches with
portable string functions only. Because `*` never crosses `/` and `**` is always whole
segments, matching works segment by segment: the block before the first `**` is anchored at
the start, the one after the last `**` at the end, and each block in between is placed at its
earliest position, which is exact when the gaps between blocks may hold any segments.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from lineagegraph.errors import ConfigError

DEFAULT_EXCLUDES: tuple[str, ...] = ("**/_SUCCESS", "**/_temporary/**")
"""Spark's job markers and its uncommitted output, never data anyone reads."""

_ANY_SEGMENTS = "**"


@dataclass(frozen=True)
class Glob:
    """One exclusion glob and the parameters the graph's matcher reads."""

    text: str
    program: dict[str, Any]

    def matches(self, key: str) -> bool:
        """Whether the glob matches `key`, in Python: for keys that never reach the graph
        (an inventory tallied by Spark into roll-ups)."""
        return glob_regex(self.text).fullmatch(key) is not None


@cache
def glob_regex(text: str) -> re.Pattern[str]:
    """The glob as a regular expression: '*' is [^/]*, a '**' segment any run of segments."""
    segments: list[str] = []
    for segment in text.split("/"):
        if not (segment == _ANY_SEGMENTS and segments and segments[-1] == _ANY_SEGMENTS):
            segments.append(segment)
    out = ""
    for i, segment in enumerate(segments):
        if segment == _ANY_SEGMENTS:
            if len(segments) == 1:
                out += ".*"
            elif i == 0:
                out += "(?:.*/)?"  # a leading '**/': zero or more segments
            elif i == len(segments) - 1:
                out += "/.*"  # a trailing '/**': one or more
            else:
                out += "/(?:.*/)?"  # '/**/' between segments: zero or more
        else:
            if i and segments[i - 1] != _ANY_SEGMENTS:
                out += "/"
            out += "[^/]*".join(re.escape(piece) for piece in segment.split("*"))
    return re.compile(out, re.DOTALL)


def compile_glob(text: str) -> Glob:
    """Check a glob and build its matcher parameters; raises ValueError on a malformed one.

    >>> compile_glob("**/_temporary/**").program["blocks"]
    [{'anchor': 'float', 'segments': [['_temporary']]}]
    >>> compile_glob("logs/*.gz").program["blocks"]
    [{'anchor': 'exact', 'segments': [['logs'], ['', '.gz']]}]
    """
    if not text:
        raise ValueError("an exclusion glob is empty")
    segments: list[str] = []
    for segment in text.split("/"):
        if _ANY_SEGMENTS in segment and segment != _ANY_SEGMENTS:
            raise ValueError(
                f"exclusion glob {text!r}: '**' must be a whole path segment (as in 'a/**/b'); "
                "use '*' to match within a segment"
            )
        if not (segment == _ANY_SEGMENTS and segments and segments[-1] == _ANY_SEGMENTS):
            segments.append(segment)  # repeated '**' segments mean the same as one
    # Groups of segment patterns between the '**' segments; each pattern is its '*'-split pieces.
    groups: list[list[list[str]]] = [[]]
    for segment in segments:
        if segment == _ANY_SEGMENTS:
            groups.append([])
        else:
            groups[-1].append(segment.split("*"))
    pieces = [piece for group in groups for pattern in group for piece in pattern]
    program: dict[str, Any] = {
        # A piece every matching key contains: the graph tests the pattern only then.
        "needle": max(pieces, key=len, default=""),
        **_literal_forms(segments),
        "rest": 1 if len(groups) > 1 and not groups[-1] else 0,  # a trailing '**' needs one
        "blocks": _blocks(groups),
    }
    return Glob(text, program)


def _literal_forms(segments: list[str]) -> dict[str, Any]:
    """Plain string tests for the common globs: literal segments with `**` only at the ends
    (`**/_SUCCESS`, `**/_temporary/**`, `logs/**`). The block matcher costs tens of
    microseconds a key in the graph; these cost one string comparison each."""
    lead = segments[0] == _ANY_SEGMENTS
    trail = len(segments) > 1 and segments[-1] == _ANY_SEGMENTS
    core = segments[int(lead) : len(segments) - int(trail)]
    forms: dict[str, Any] = {"equals": None, "starts": None, "ends": None, "contains": None}
    if not core or any("*" in segment for segment in core):
        return {**forms, "general": True}
    literal = "/".join(core)
    if trail:
        forms["starts"] = literal + "/"
        if lead:
            forms["contains"] = "/" + literal + "/"
    else:
        forms["equals"] = literal
        if lead:
            forms["ends"] = "/" + literal
    return {**forms, "general": False}


def _blocks(groups: list[list[list[str]]]) -> list[dict[str, Any]]:
    if len(groups) == 1:  # no '**': the key has exactly these segments
        return [{"anchor": "exact", "segments": groups[0]}]
    blocks = []
    if groups[0]:
        blocks.append({"anchor": "start", "segments": groups[0]})
    blocks += [{"anchor": "float", "segments": group} for group in groups[1:-1]]
    if groups[-1]:
        blocks.append({"anchor": "end", "segments": groups[-1]})
    return blocks


def exclusion_globs(*sources: Iterable[str]) -> list[Glob]:
    """The defaults plus the configured and the given globs, each once, in order.

    A malformed glob is a ConfigError naming it.
    """
    texts = dict.fromkeys([*DEFAULT_EXCLUDES, *(t for source in sources for t in source)])
    globs = []
    for text in texts:
        try:
            globs.append(compile_glob(text))
        except ValueError as exc:
            raise ConfigError(f"{exc} (from --exclude or [reports] exclude)") from None
    return globs
