"""How a read route takes its query parameters and answers: the library's errors become JSON
with a reason (a name not found lists the closest ones), shared by the API and the explorer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from lineagegraph import lineage, render
from lineagegraph.errors import LineageGraphError, StoreError
from lineagegraph.serve.events import BadRequest
from lineagegraph.serve.guard import error


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


def include_deleted(request: Request) -> bool:
    return request.query_params.get("include_deleted", "").lower() in ("1", "true", "yes")


async def answer(request: Request, question: Callable[..., Any], *args: Any) -> Response:
    """Run a read in a worker thread; the library's errors become JSON answers."""
    service = request.app.state.service
    try:
        value = await run_in_threadpool(service.read, question, *args)
    except lineage.AssetNotFound as exc:
        return error(404, str(exc).partition("; did you mean")[0], suggestions=exc.suggestions)
    except lineage.AssetDeleted as exc:
        return error(410, str(exc))
    except StoreError:
        raise
    except LineageGraphError as exc:
        return error(400, str(exc))
    return Response(render.to_json(value), media_type="application/json")
