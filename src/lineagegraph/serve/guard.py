"""The checks in front of every route of `lineagegraph serve`, and the shape of every error.

Safe by default: bodies over the size limit are refused before they are read; with a token set,
/api/v1 and /metrics need `Authorization: Bearer <token>` (compared in constant time, never
echoed); and while bound to loopback, a Host header naming another machine (DNS rebinding) is
refused.
"""

from __future__ import annotations

import hmac
from http import HTTPStatus
from typing import Any

from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from lineagegraph.settings import Settings, is_loopback

# What the token guards: the graph's data, and /metrics since it names sources and counts
# (Prometheus sends a bearer token with `authorization: {credentials: ...}` in a scrape config).
GUARDED = ("/api/", "/metrics")


def error(status: int, reason: str, **extra: Any) -> JSONResponse:
    """Every error answer: {"error": <HTTP phrase>, "reason": <what and where>}."""
    body = {"error": HTTPStatus(status).phrase, "reason": reason, **extra}
    return JSONResponse(body, status_code=status)


class Guard:
    """Checks every request before a route sees it: Host, size and token."""

    def __init__(self, app: ASGIApp, settings: Settings, routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes
        self.serve = settings.serve
        self.loopback = is_loopback(settings.serve.host)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = self._problem(scope)
        if problem is not None:
            await problem(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _problem(self, scope: Scope) -> Response | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = _host_name(headers.get("host", ""))
        if self.loopback and host and not is_loopback(host):
            return error(421, f"Host {host[:80]!r} is not this server (it listens on loopback)")
        length = headers.get("content-length", "0")
        if not length.isdigit():
            return error(400, f"Content-Length {length[:40]!r} is not a number")
        if int(length) > self.serve.max_body_bytes:
            return error(413, f"body is over {self.serve.max_body_bytes:,} bytes")
        path: str = scope["path"]
        token = self.serve.token
        if token is None or not path.startswith(GUARDED) or not self._served(scope):
            return None  # no route serves it: the router answers 404 or 405, no data
        if scope["method"] in ("GET", "HEAD") and self.serve.open_reads:
            return None
        scheme, _, given = headers.get("authorization", "").partition(" ")
        expected = token.get_secret_value().encode()
        given = given.strip()  # never empty below: settings refuse an empty token, and so here
        if (
            scheme.lower() != "bearer"
            or not given
            or not hmac.compare_digest(given.encode(), expected)
        ):
            response = error(401, "this server needs 'Authorization: Bearer <token>'")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        return None

    def _served(self, scope: Scope) -> bool:
        """Whether a route takes this path and method (else 404/405, as OpenAPI says)."""
        return any(route.matches(scope)[0] == Match.FULL for route in self.routes)


def _host_name(header: str) -> str:
    """The host of a Host header, without the port: `[::1]:5000` is `::1`."""
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header
