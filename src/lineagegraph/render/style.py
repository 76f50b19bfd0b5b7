"""What every picture shares: the colours of systems and qualities, a node's subtitle, and
the control characters no picture syntax may carry."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from lineagegraph.render.views import Node, View

_SYSTEM_COLOURS = {
    "s3": "#f59e0b",
    "file": "#94a3b8",
    "snowflake": "#29b5e8",
    "spark": "#e25a1c",
    "openlineage": "#8b5cf6",
}


QUALITY_COLOURS = {
    "pass": "#4ade80",  # green
    "warn": "#fbbf24",  # amber: passed, with a warning
    "error": "#f87171",  # red: the check could not run
    "fail": "#ef4444",  # red
    "unknown": "#d1d5db",  # grey: no check, or only skipped ones
}


CHANGE_COLOURS = {  # the explorer's diff: outlines and edges added or removed since a time
    "added": "#16a34a",  # green
    "removed": "#dc2626",  # red, drawn dashed
}


UNTAGGED = "#f3f4f6"  # near white: an asset with no classification when colouring by tag
TAGGED = "#b91c1c"  # dark red: the border of an asset that carries a classification


def shows_quality(view: View) -> bool:
    """Pictures colour assets by quality once any asset in them has a known one; with no check
    results at all they keep the colours of their systems. A view coloured by tag does not."""
    return not view.by_tag and any(n.quality not in (None, "unknown") for n in view.nodes)


def fill(node: Node, by_quality: bool, by_tag: bool = False) -> str:
    """A node's fill: its tags' colour (colouring by tag), its quality's colour, or
    (transformations, answers without quality) its system's."""
    if by_tag and node.kind != "Transformation":
        return tag_colour(node.tags)
    if by_quality and node.kind != "Transformation":
        return QUALITY_COLOURS[node.quality or "unknown"]
    return colour(node.system)


def colour(system: str | None) -> str:
    """A stable colour per system (known ones fixed, others from a hash of the name)."""
    if system in _SYSTEM_COLOURS:
        return _SYSTEM_COLOURS[system]
    hue = int(hashlib.sha256((system or "").encode()).hexdigest()[:4], 16) % 360
    return f"hsl({hue}, 55%, 55%)"


def tag_colour(tags: Sequence[str]) -> str:
    """A stable colour per set of tags (each set its own entry in a legend)."""
    if not tags:
        return UNTAGGED
    hue = int(hashlib.sha256(", ".join(tags).encode()).hexdigest()[:4], 16) % 360
    return f"hsl({hue}, 70%, 62%)"


def subtitle(node: Node) -> str:
    if node.detail:
        return node.detail
    deleted = " · deleted" if node.deleted else ""
    quality = f" · {node.quality}" if node.quality and node.quality != "unknown" else ""
    return f"{node.system or '?'} · {node.kind}{quality}{deleted}{tag_note(node)}"


def tag_note(node: Node) -> str:
    """The classifications a node carries, as its subtitle ends: every picture (and a reader
    of Mermaid or DOT text) sees which assets hold tagged data without colouring by tag."""
    return f" · tags {', '.join(node.tags)}" if node.tags else ""


CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
