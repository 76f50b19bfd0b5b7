"""What the fuzz tests share: the characters names are drawn from, and their settings."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


def fuzz(examples: int, **more: Any) -> Any:
    """Moderate counts keep a module under a minute; each example carries many names."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        **more,
    )


AWKWARD = ["\x00", " ", "\t", "\r", "\n", "\x01", "\x1f", "\x7f", "/", "//", "=", "#", "%", "%2F",
           "+", "'", '"', "\\", "<", ">", "&", ".", "é", "e\u0301", "\u200f", "\u202e",
           "😀", "ß", "İ", "\u3000", "\x85", "\ufeff"]  # fmt: skip
"""Characters names break on: NUL, C0 and C1 controls, whitespace, separators, escapes,
markup, combining and bidirectional marks, astral and case-changing letters."""
chars = st.one_of(
    st.sampled_from(AWKWARD),
    st.characters(blacklist_categories=("Cs",)),
)
"""One character of a name: an awkward one, or any of the whole range but lone surrogates."""
