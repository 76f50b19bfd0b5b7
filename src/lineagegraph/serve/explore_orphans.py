"""The explorer's orphan cost table: `lineagegraph orphans --format json` for the page.

The page needs the report's JSON document only (rows, totals, warnings). The `api` work adds
`GET /api/v1/orphans` with every option of the CLI and the same document; once both are in,
the page can read that route and this module can go (see ORPHANS_URL in explorer.js).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from lineagegraph.reports.orphans import GROUPINGS, Report, build_options, run_report
from lineagegraph.serve.events import BadRequest
from lineagegraph.serve.guard import error
from lineagegraph.serve.reading import answer, int_param

MAX_LOOKBACK_DAYS = 36_500


async def orphans(request: Request) -> Response:
    settings = request.app.state.service.settings.reports
    by = request.query_params.get("by", "dataset-class")
    if by not in GROUPINGS:
        return error(400, f"by must be one of {', '.join(GROUPINGS)} (got {by[:40]!r})")
    try:
        days = int_param(request, "lookback_days", settings.lookback_days, 1, MAX_LOOKBACK_DAYS)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    options = build_options(settings, "orphans", lookback_days=days, by=by)

    def respond(report: Report) -> Response:
        return Response(report.render("json"), media_type="application/json")

    return await answer(request, run_report, options, respond=respond)


ROUTES = [Route("/api/v1/explore/orphans", orphans, methods=["GET"])]
