"""`GET /api/v1/orphans` and `/api/v1/cost`: the CLI's `orphans` and `cost-report` over HTTP,
with the same options as query parameters and the same JSON or CSV (`?format=csv`, or
`Accept: text/csv`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from lineagegraph.reports.options import (
    GROUPINGS,
    ORDERS,
    Kind,
    ReportOptions,
    build_options,
    parse_time,
)
from lineagegraph.reports.orphans import run_report
from lineagegraph.serve.events import BadRequest
from lineagegraph.serve.guard import error
from lineagegraph.serve.reading import answer, flag_param, int_param
from lineagegraph.settings import Settings
from lineagegraph.values.globs import compile_glob

PARAMETERS = (
    "as_of",
    "lookback_days",
    "exclude",
    "bucket",
    "include_deleted",
    "by",
    "sort",
    "top",
    "format",
)
MAX_LOOKBACK_DAYS = 36_500
MAX_TOP = 100_000
CSV = "text/csv; charset=utf-8"


def report_options(request: Request, settings: Settings, kind: Kind) -> ReportOptions:
    """The report's options from the query; BadRequest names the parameter at fault."""
    query = request.query_params
    unknown = sorted(set(query) - set(PARAMETERS))
    if unknown:
        raise BadRequest(f"unknown query parameter {unknown[0]!r} (known: {', '.join(PARAMETERS)})")
    as_of = None
    if "as_of" in query:
        try:
            as_of = parse_time(query["as_of"])
        except ValueError as exc:
            raise BadRequest(f"as_of: {exc}") from None
    by = query.get("by", "dataset-class")
    if by not in GROUPINGS:
        raise BadRequest(f"by must be one of {', '.join(GROUPINGS)} (got {by[:40]!r})")
    sort = query.get("sort", "cost")
    if sort not in ORDERS:
        raise BadRequest(f"sort must be one of {', '.join(ORDERS)} (got {sort[:40]!r})")
    lookback, top = (
        int_param(request, name, 0, 1, high) if name in query else None
        for name, high in (("lookback_days", MAX_LOOKBACK_DAYS), ("top", MAX_TOP))
    )
    for glob in query.getlist("exclude"):  # the user's mistake: 400, not a store error
        try:
            compile_glob(glob)
        except ValueError as exc:
            raise BadRequest(f"exclude: {exc}") from None
    return build_options(
        settings.reports,
        kind,
        as_of=as_of,
        lookback_days=lookback,
        exclude=query.getlist("exclude"),
        buckets=query.getlist("bucket"),
        include_deleted=flag_param(request, "include_deleted"),
        by=by,
        top=top,
        sort=sort,
    )


def wanted_format(request: Request) -> str:
    """`format=json|csv`; without it, CSV when the Accept header asks for text/csv."""
    fmt = request.query_params.get("format")
    if fmt is None:
        accept = request.headers.get("accept", "").lower()
        return "csv" if "text/csv" in accept else "json"
    if fmt not in ("json", "csv"):
        raise BadRequest(f"format must be json or csv (got {fmt[:40]!r})")
    return fmt


def route(kind: Kind) -> Callable[[Request], Awaitable[Response]]:
    """The route of one report: JSON is the whole report, CSV its rows (as the CLI's)."""

    async def report(request: Request) -> Response:
        try:
            fmt = wanted_format(request)
            options = report_options(request, request.app.state.service.settings, kind)
        except BadRequest as exc:
            return error(exc.status, str(exc))

        def respond(value: Any) -> Response:
            media = CSV if fmt == "csv" else "application/json"
            return Response(value.render(fmt), media_type=media)

        return await answer(request, run_report, options, respond=respond)

    return report
