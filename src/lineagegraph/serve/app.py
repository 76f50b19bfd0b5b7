"""The HTTP routes of `lineagegraph serve` (behind serve.guard).

Every error is JSON with a reason (serve.guard.error), including the router's own 404 and 405
and anything unexpected; POST needs a JSON content type, so a web page cannot send events as a
"simple" cross-site request; no CORS headers are ever sent.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from lineagegraph import __version__
from lineagegraph.errors import LineageGraphError, StoreError
from lineagegraph.questions import answers, lineage
from lineagegraph.questions.lineage import Direction
from lineagegraph.serve import listings, marquez, reports
from lineagegraph.serve.alerting import AlertLoop
from lineagegraph.serve.eventlog import EventLog, events_route
from lineagegraph.serve.events import BadRequest, EventChecker, decode_body, spool_lines
from lineagegraph.serve.explorer import routes as explorer_routes
from lineagegraph.serve.guard import Guard, error
from lineagegraph.serve.metrics import FactsCache, Metrics, get_metrics
from lineagegraph.serve.openapi import OPENAPI
from lineagegraph.serve.reading import (
    answer,
    flag_param,
    int_param,
    path_params,
    text_param,
    time_param,
)
from lineagegraph.serve.spool import GroupCommit, Ingester, Spool
from lineagegraph.settings import Settings, redact, secret_values

if TYPE_CHECKING:
    from lineagegraph.serve.kafka import KafkaFeed
    from lineagegraph.serve.server import Stores

log = logging.getLogger(__name__)
JSON_TYPES = ("application/json", "application/vnd.openlineage+json")


# Bodies up to this size are checked on the event loop: cheaper than a hop to a worker thread,
# and short enough not to hold up other requests (docs/benchmarks.md); larger ones go to a thread.
INLINE_BYTES = 64 * 2**10


class Service:
    """What the routes share: settings, the spool, the ingester, a store for reads, the
    Kafka consumer when there is one, and the log of ingested events."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        spool: Spool,
        ingester: Ingester,
        commit: GroupCommit,
        kafka: KafkaFeed | None = None,
        *,
        events: EventLog,
    ) -> None:
        self.settings = settings
        self.rules = settings.identity.rules()
        self.stores = stores
        self.spool = spool
        self.ingester = ingester
        self.commit = commit
        self.kafka = kafka
        self.events = events  # the ingested RunEvents, for GET /api/v1/events/lineage
        # Used on the event loop only (not thread-safe).
        self.checker = EventChecker(self.rules, settings.openlineage)
        self.metrics_facts = FactsCache(settings.serve.metrics_ttl_seconds)
        self.accepted = 0
        self.rejected = 0
        self.alerts = AlertLoop(self)

    async def accept(self, text: str) -> int:
        """Check, spool and count the events of a body; returns once they are on disk."""
        try:
            if len(text) <= INLINE_BYTES:
                count, lines = _checked(self.checker, text)
            else:  # a large batch: off the event loop, with a checker of its own
                count, lines = await run_in_threadpool(
                    _checked, EventChecker(self.rules, self.settings.openlineage), text
                )
        except BadRequest:
            self.rejected += 1
            raise
        await self.commit.append(lines, count)
        self.accepted += count
        self.ingester.nudge()
        return count

    def read(self, question: Callable[..., Any], *args: Any) -> Any:
        """Answer `question(store, *args)` with the read store, one request at a time; a store
        found unreachable is handed to the ingester to start again."""
        with self.stores.read_lock:
            try:
                return question(self.stores.reads, *args)
            except StoreError as exc:
                self.ingester.store_lost(str(exc))
                raise


def _checked(checker: EventChecker, text: str) -> tuple[int, bytes]:
    """How many events a body holds, and their spool lines (BadRequest if one is malformed)."""
    events = checker.events(text)
    return len(events), spool_lines(events, text)


async def post_lineage(request: Request) -> Response:
    service: Service = request.app.state.service
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind not in JSON_TYPES:
        return error(415, f"Content-Type must be application/json (got {kind or 'none'!r})")
    limit = service.settings.serve.max_body_bytes
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return error(413, f"body is over {limit:,} bytes")
    try:
        text = decode_body(bytes(body), request.headers.get("content-encoding"), limit)
        count = await service.accept(text)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    return JSONResponse({"accepted": count}, status_code=201)


async def get_lineage(request: Request) -> Response:
    service: Service = request.app.state.service
    try:
        node = text_param(request, "nodeId")
        depth = int_param(request, "depth", marquez.DEFAULT_DEPTH, 1, marquez.MAX_DEPTH)
        as_of = time_param(request, "asOf")
        graph = await run_in_threadpool(
            service.read, marquez.lineage, node, depth, service.rules, as_of
        )
    except (BadRequest, marquez.BadNodeId) as exc:
        return error(400, str(exc))
    except marquez.NodeNotFound as exc:
        return error(404, str(exc), suggestions=exc.suggestions)
    return JSONResponse(graph)


async def lineage_route(request: Request) -> Response:
    """One route for both methods, so a 405 there lists both in Allow."""
    if request.method == "POST":
        return await post_lineage(request)
    return await get_lineage(request)


async def get_namespaces(request: Request) -> Response:
    return await answer(request, marquez.namespaces)


async def get_search(request: Request) -> Response:
    kind = request.query_params.get("filter")
    if kind not in (None, "DATASET", "JOB"):
        return error(400, f"filter must be DATASET or JOB (got {kind[:40]!r})")
    try:
        text = text_param(request, "q")
        limit = int_param(request, "limit", marquez.SEARCH_LIMIT, 1, marquez.MAX_SEARCH_LIMIT)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    return await answer(request, marquez.search, text, kind, limit)


def _traversal(direction: Direction) -> Callable[[Request], Awaitable[Response]]:
    async def route(request: Request) -> Response:
        settings = request.app.state.service.settings
        try:
            name = text_param(request, "name")
            depth = int_param(request, "depth", lineage.DEFAULT_DEPTH, 1, lineage.MAX_DEPTH)
            deleted = flag_param(request, "include_deleted")
            as_of = time_param(request, "as_of")
        except BadRequest as exc:
            return error(exc.status, str(exc))
        question = partial(answers.traversal, depth=depth, include_deleted=deleted, as_of=as_of)
        return await answer(request, question, settings, name, direction, respond=_as_json)

    return route


async def get_impact(request: Request) -> Response:
    settings = request.app.state.service.settings
    try:
        name = text_param(request, "name")
        deleted = flag_param(request, "include_deleted")
        as_of = time_param(request, "as_of")
    except BadRequest as exc:
        return error(exc.status, str(exc))
    question = partial(answers.impact, include_deleted=deleted, as_of=as_of)
    return await answer(request, question, settings, name, respond=_as_json)


async def get_path(request: Request) -> Response:
    settings = request.app.state.service.settings
    try:
        source, target, depth, deleted = path_params(request)
        as_of = time_param(request, "as_of")
    except BadRequest as exc:
        return error(exc.status, str(exc))
    question = partial(answers.path, depth=depth, include_deleted=deleted, as_of=as_of)
    return await answer(request, question, settings, source, target, respond=_as_json)


def _as_json(value: answers.Traversal | answers.ImpactAnswer | answers.Paths) -> Response:
    """The answer as `lineagegraph upstream|downstream|impact|path --format json` prints it,
    so a program can move between the CLI, the Python API and these routes."""
    return Response(value.render("json"), media_type="application/json")


async def healthz(request: Request) -> Response:
    service: Service = request.app.state.service
    ingester = service.ingester
    ingest_error = ingester.last_error
    feed = service.kafka
    body: dict[str, Any] = {
        "status": "degraded" if ingest_error or (feed and feed.problem) else "ok",
        "version": __version__,
        "events_accepted": service.accepted,
        "events_rejected": service.rejected,
        "events_waiting": service.spool.pending(),
        "events_ingested": service.ingester.ingested,
        "ingest_batches": service.ingester.batches,
        "ingest_error": redact(ingest_error, secret_values(service.settings))
        if ingest_error
        else None,
        "store_restarts": ingester.restarts,
        "events_dead_lettered": ingester.dead_letters,
        "dead_letter_file": str(ingester.dead_letter_path) if ingester.dead_letters else None,
        "last_dead_letter": redact(ingester.last_dead_letter, secret_values(service.settings))
        if ingester.last_dead_letter
        else None,
    }
    if feed is not None:
        body["kafka"] = kafka_health(feed)
    return JSONResponse(body)


def kafka_health(feed: KafkaFeed) -> dict[str, Any]:
    """The consumer in /healthz: its group, whether it holds partitions, what it did."""
    counts = feed.counts
    return {
        "status": feed.status,
        "group": feed.settings.group_id,
        "topics": feed.subscription,
        "group_state": feed.group_state,
        "partitions": feed.assigned,
        "lag": sum(p.lag for p in feed.lag),
        "events_accepted": feed.accepted,
        "messages_consumed": counts.consumed,
        "messages_dead_lettered": counts.dead_lettered,
        "messages_committed": counts.committed,
        "dead_letter": feed.letters.where,
        "failures": feed.failures,
        "error": feed.problem,
    }


async def openapi(request: Request) -> Response:
    return JSONResponse(OPENAPI)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    response = error(exc.status_code, exc.detail or "")
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _store_failed(request: Request, exc: Exception) -> Response:
    """503 with the reason (a full disk, a store that went away): one log line, no traceback
    (this is the user's world failing, not a bug), and the server restarted in the background."""
    secrets = secret_values(request.app.state.service.settings)
    reason = redact(str(exc), secrets)
    log.error("%s %s: %s", request.method, request.url.path, reason.partition("\n")[0])
    return error(503, reason)


async def _unexpected(request: Request, exc: Exception) -> Response:
    secrets = secret_values(request.app.state.service.settings)
    reason = redact(f"{type(exc).__name__}: {exc}", secrets)
    if not isinstance(exc, LineageGraphError):
        log.exception("unexpected error answering %s %s", request.method, request.url.path)
    return error(503 if isinstance(exc, LineageGraphError) else 500, reason)


class AnyText(Convertor[str]):
    """A path parameter of any characters. Starlette's `path` is `.*`, which stops at a line
    break, so a namespace or name holding one (sent as %0A) fell to the router's bare 404."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("text", AnyText())


def create_app(service: Service) -> ASGIApp:
    """The ASGI application; `service` is started and stopped by its owner (server.py)."""
    routes = [
        Route("/api/v1/lineage", lineage_route, methods=["GET", "POST"]),
        Route("/api/v1/namespaces", get_namespaces, methods=["GET"]),
        Route("/api/v1/namespaces/{rest:text}", listings.namespace_route, methods=["GET"]),
        Route("/api/v1/column-lineage", listings.column_lineage_route, methods=["GET"]),
        Route("/api/v1/tags", listings.tags_route, methods=["GET"]),
        Route("/api/v1/jobs/runs/{id:text}", listings.run_route, methods=["GET"]),
        Route("/api/v1/events/lineage", events_route, methods=["GET"]),
        Route("/api/v1/search", get_search, methods=["GET"]),
        Route("/api/v1/upstream", _traversal("upstream"), methods=["GET"]),
        Route("/api/v1/downstream", _traversal("downstream"), methods=["GET"]),
        Route("/api/v1/impact", get_impact, methods=["GET"]),
        Route("/api/v1/path", get_path, methods=["GET"]),
        Route("/api/v1/orphans", reports.route("orphans"), methods=["GET"]),
        Route("/api/v1/cost", reports.route("cost"), methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", get_metrics, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        *explorer_routes.ROUTES,
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        HTTPException: _http_error,
        LineageGraphError: _store_failed,  # before ServerErrorMiddleware, which logs a traceback
        Exception: _unexpected,
    }
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.service = service
    app.state.metrics = metrics = Metrics(service)
    return Guard(metrics.timed(app), service.settings, app.routes)
