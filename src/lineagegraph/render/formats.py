"""The output formats of a lineage answer, and the picture of a view in one of them."""

from __future__ import annotations

from lineagegraph.render.diagrams import to_dot, to_mermaid
from lineagegraph.render.html_page import to_html
from lineagegraph.render.views import View

PICTURE_FORMATS = ("mermaid", "dot", "html")
FORMATS = ("table", "tree", "json", *PICTURE_FORMATS)


def picture(view: View, fmt: str) -> str:
    """The view in one of PICTURE_FORMATS."""
    if fmt == "mermaid":
        return to_mermaid(view)
    if fmt == "dot":
        return to_dot(view)
    if fmt == "html":
        return to_html(view)
    raise ValueError(f"not a picture format: {fmt!r}; choose one of {', '.join(PICTURE_FORMATS)}")
