"""The lineage explorer in the browser: one page at `/`, its script and style sheet, and the
JSON reads it calls under /api/v1/explore (lineagegraph.serve.explorer.pictures answers them).

The page and its files are static and need no token; the reads go through the same token rule
as the rest of /api (the page keeps a token typed into it in sessionStorage and sends it as a
Bearer header). A strict Content-Security-Policy lets the page run only its own script file and
talk only to this server: no inline script, nothing from another origin.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from lineagegraph.questions import lineage
from lineagegraph.serve.events import BadRequest
from lineagegraph.serve.explorer import column_pictures, pictures
from lineagegraph.serve.guard import error
from lineagegraph.serve.reading import (
    answer,
    flag_param,
    int_param,
    path_params,
    text_param,
    time_param,
)

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
STATIC = {
    "index.html": "text/html; charset=utf-8",
    "explorer.js": "text/javascript; charset=utf-8",
    "explorer.css": "text/css; charset=utf-8",
}
DEFAULT_DEPTH = 3


def _file(name: str) -> Response:
    body = (resources.files("lineagegraph.serve") / "static" / name).read_bytes()
    headers = {
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    return Response(body, media_type=STATIC[name], headers=headers)


async def page(request: Request) -> Response:
    return _file("index.html")


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC or name == "index.html":
        return error(404, f"no explorer file {name[:80]!r}")
    return _file(name)


async def suggest(request: Request) -> Response:
    try:
        text = text_param(request, "q")
    except BadRequest as exc:
        return error(exc.status, str(exc))
    return await answer(request, pictures.suggest, text)


async def graph(request: Request) -> Response:
    return await _lineage(request, pictures.graph)


async def columns(request: Request) -> Response:
    """The column view: the graph's picture with each asset's columns and their lineage."""
    return await _lineage(request, column_pictures.columns)


async def _lineage(request: Request, question: Callable[..., Any]) -> Response:
    """A lineage picture: `question` asked with the parameters the page sends for one (`as_of`:
    the picture then; `since`: what changed since then marked)."""
    settings = request.app.state.service.settings
    side = request.query_params.get("direction", "both")
    if side not in pictures.SIDES:
        return error(
            400, f"direction must be one of {', '.join(pictures.SIDES)} (got {side[:40]!r})"
        )
    expanded = request.query_params.getlist("expand")
    try:
        name = text_param(request, "name")
        depth = int_param(request, "depth", DEFAULT_DEPTH, 1, lineage.MAX_DEPTH)
        deleted = flag_param(request, "include_deleted")
        when = pictures.When(time_param(request, "as_of"), time_param(request, "since"))
    except BadRequest as exc:
        return error(exc.status, str(exc))
    if len(expanded) > pictures.MAX_EXPANDED:
        return error(400, f"at most {pictures.MAX_EXPANDED} expand parameters")
    colour = _colour(request)
    return await answer(
        request, question, settings, name, side, depth, deleted, expanded, colour, when
    )


async def path(request: Request) -> Response:
    settings = request.app.state.service.settings
    try:
        source, target, depth, deleted = path_params(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    return await answer(
        request, pictures.paths, settings, source, target, depth, deleted, _colour(request)
    )


def _colour(request: Request) -> pictures.Colour:
    """`colour=system`: systems' colours even where assets have a quality; `colour=tag`: by
    classifications; anything else, quality where known."""
    asked = request.query_params.get("colour")
    return next((c for c in pictures.COLOURS if c == asked), "quality")


async def asset(request: Request) -> Response:
    settings = request.app.state.service.settings
    try:
        name = text_param(request, "name")
    except BadRequest as exc:
        return error(exc.status, str(exc))
    return await answer(request, pictures.asset, settings, name)


ROUTES = [
    Route("/", page, methods=["GET"]),
    Route("/explorer/{name}", static, methods=["GET"]),
    Route("/api/v1/explore/suggest", suggest, methods=["GET"]),
    Route("/api/v1/explore/graph", graph, methods=["GET"]),
    Route("/api/v1/explore/columns", columns, methods=["GET"]),
    Route("/api/v1/explore/path", path, methods=["GET"]),
    Route("/api/v1/explore/asset", asset, methods=["GET"]),
]
