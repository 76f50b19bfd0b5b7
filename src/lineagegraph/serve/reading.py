"""What the read routes of `lineagegraph serve` share: query parameters checked into a 400 with
the reason, and library calls run in a worker thread whose errors become JSON answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from lineagegraph.errors import LineageGraphError, StoreError
from lineagegraph.questions import lineage
from lineagegraph.render.as_json import to_json
from lineagegraph.reports.options import parse_time
from lineagegraph.serve.events import BadRequest
from lineagegraph.serve.guard import error
from lineagegraph.store_check import EmptyGraph

if TYPE_CHECKING:
    from lineagegraph.serve.app import Service

TRUE, FALSE = ("1", "true", "yes"), ("", "0", "false", "no")


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name, str(default))
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise BadRequest(f"{name} must be an integer from {low} to {high} (got {raw[:40]!r})")
    return value


def text_param(request: Request, name: str) -> str:
    value = request.query_params.get(name)
    if not value:
        raise BadRequest(f"the {name} query parameter is required")
    return value


def time_param(request: Request, name: str) -> int | None:
    """A time parameter (2024-06-30, 2024-06-30T12:00:00Z or epoch ms) as epoch ms, or None
    when absent: `asOf`, the lineage as it was then (docs/history.md)."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        return parse_time(raw)
    except ValueError as exc:
        raise BadRequest(f"{name}: {exc}") from None


def flag_param(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "").lower()
    if raw not in TRUE + FALSE:
        raise BadRequest(f"{name} must be true or false (got {raw[:40]!r})")
    return raw in TRUE


def path_params(request: Request) -> tuple[str, str, int, bool]:
    """`from`, `to`, `depth` and `include_deleted` of a path question (API and explorer)."""
    source, target = text_param(request, "from"), text_param(request, "to")
    depth = int_param(request, "depth", 10, 1, lineage.MAX_PATH_DEPTH)
    return source, target, depth, flag_param(request, "include_deleted")


def json_response(value: Any) -> Response:
    return Response(to_json(value), media_type="application/json")


async def answer(
    request: Request,
    question: Callable[..., Any],
    *args: Any,
    respond: Callable[[Any], Response] = json_response,
) -> Response:
    """Run a read in a worker thread; the library's errors become JSON answers."""
    service: Service = request.app.state.service
    try:
        value = await run_in_threadpool(service.read, question, *args)
    except lineage.AssetNotFound as exc:
        return error(404, str(exc).partition("; did you mean")[0], suggestions=exc.suggestions)
    except lineage.AssetDeleted as exc:
        return error(410, str(exc))
    except EmptyGraph as exc:
        return error(404, str(exc))
    except StoreError:
        raise
    except LineageGraphError as exc:
        return error(400, str(exc))
    return respond(value)
