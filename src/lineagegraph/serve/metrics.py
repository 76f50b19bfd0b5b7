"""`GET /metrics`: Prometheus's text format, written by prometheus-client.

Two parts. The graph's facts (assets by system and kind, lineage coverage, each source's
freshness and stale flag, data quality) are read by the library's
`lineagegraph.questions.status.graph_status`, the same numbers as `lineagegraph status`; that
scans the whole graph (seconds at a million assets), so one scan serves every scrape for
`[serve] metrics_ttl_seconds`. The service's own counts (events accepted, rejected, waiting and
ingested, graph scans; with [kafka], the consumer's messages and its lag per partition) and a
request-latency histogram are live, in a registry of this app, never prometheus-client's
process-wide one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from lineagegraph.alerts_settings import RULES
from lineagegraph.pipeline import now_ms
from lineagegraph.questions.alerts import ALSO_SEVERITIES, DEFAULT_SEVERITY
from lineagegraph.questions.status import Status, graph_status
from lineagegraph.serve.events import BadRequest
from lineagegraph.serve.guard import error

if TYPE_CHECKING:
    from lineagegraph.serve.app import Service
    from lineagegraph.serve.kafka import KafkaFeed

DEFAULT_MAX_AGE_HOURS = 26.0  # `lineagegraph status --max-age-hours`'s default
# Partitions whose lag is a series of its own, the most behind first: a topic pattern may match
# many topics, and each series costs Prometheus memory. The sum covers every partition.
MAX_LAG_SERIES = 200
# Seconds; from a warm lineage answer (a few ms) to a cold report over a large lake.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class ServiceCounts(Collector):
    """The events the service took in, read from the service when scraped."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def collect(self) -> Iterator[Metric]:
        s = self.service
        yield CounterMetricFamily(
            "lineagegraph_events_accepted",
            "OpenLineage events accepted (spooled to disk) since start",
            value=s.accepted,
        )
        yield CounterMetricFamily(
            "lineagegraph_events_rejected",
            "Requests whose events were refused as malformed since start",
            value=s.rejected,
        )
        yield CounterMetricFamily(
            "lineagegraph_events_ingested",
            "Spooled events ingested into the graph since start",
            value=s.ingester.ingested,
        )
        yield GaugeMetricFamily(
            "lineagegraph_events_waiting",
            "Spooled events not yet in the graph",
            value=s.spool.pending(),
        )
        yield CounterMetricFamily(
            "lineagegraph_events_dead_lettered",
            "Spooled events the store refused, set aside in the dead-letter file, since start",
            value=s.ingester.dead_letters,
        )
        yield CounterMetricFamily(
            "lineagegraph_store_restarts",
            "Times serve started the store's server again after it died, since start",
            value=s.ingester.restarts,
        )
        yield CounterMetricFamily(
            "lineagegraph_store_restart_failures",
            "Tries to start the store's server again that failed (retried with backoff)",
            value=s.ingester.revive_failures,
        )
        yield GaugeMetricFamily(
            "lineagegraph_store_up",
            "1 while the store answers, 0 while it is down (ingestion waits)",
            value=0 if s.ingester.store_down else 1,
        )
        yield from _alert_metrics(s)
        yield CounterMetricFamily(
            "lineagegraph_graph_scans",
            "Scans of the graph for /metrics since start (one per metrics_ttl_seconds at most)",
            value=s.metrics_facts.scans,
        )
        if s.kafka is not None:
            yield from kafka_metrics(s.kafka)


def kafka_metrics(feed: KafkaFeed) -> Iterator[Metric]:
    """The Kafka consumer's counts, and its lag per partition it holds."""
    counts = feed.counts
    for name, value, what in (
        ("consumed", counts.consumed, "read"),
        ("dead_lettered", counts.dead_lettered, "that were no event, sent to the dead letter"),
        ("committed", counts.committed, "whose offsets are committed (spooled or dead-lettered)"),
    ):
        yield CounterMetricFamily(
            f"lineagegraph_kafka_messages_{name}", f"Kafka messages {what} since start", value
        )
    yield CounterMetricFamily(
        "lineagegraph_kafka_consumer_failures",
        "Times the Kafka consumer failed and was started again, since start",
        value=feed.failures,
    )
    yield GaugeMetricFamily(
        "lineagegraph_kafka_consumer_up",
        "1 while the Kafka consumer holds partitions and has not failed since",
        value=1 if feed.status == "ok" else 0,
    )
    yield GaugeMetricFamily(
        "lineagegraph_kafka_partitions_assigned",
        "Kafka partitions this consumer holds",
        value=feed.assigned,
    )
    lag = feed.lag
    yield GaugeMetricFamily(
        "lineagegraph_kafka_consumer_lag_sum",
        "Messages behind the committed offsets, over every partition held",
        value=sum(p.lag for p in lag),
    )
    per = _gauge(
        "kafka_consumer_lag",
        f"Messages behind the committed offset, per partition (the {MAX_LAG_SERIES} most behind)",
        ["topic", "partition"],
    )
    for p in sorted(lag, key=lambda p: (-p.lag, p.topic, p.partition))[:MAX_LAG_SERIES]:
        per.add_metric([p.topic, str(p.partition)], p.lag)
    yield per


def _alert_metrics(s: Service) -> Iterator[Metric]:
    """The newest evaluation of the alert rules: firing alerts by rule and severity (every
    rule at its configured severity, so the label sets are few and fixed) and what waits for
    each receiver."""
    loop = s.alerts
    yield CounterMetricFamily(
        "lineagegraph_alert_evaluations",
        "Evaluations of the alert rules since start (every [alerts] interval_seconds)",
        value=loop.evaluations,
    )
    yield CounterMetricFamily(
        "lineagegraph_alert_evaluation_failures",
        "Evaluations of the alert rules that failed since start (logged; retried next time)",
        value=loop.failures,
    )
    if loop.last is None:
        return
    firing = _gauge("alerts_firing", "Alerts firing, by rule and severity", ["rule", "severity"])
    severity = DEFAULT_SEVERITY | s.settings.alerts.severity
    counts = loop.last.firing
    for rule in RULES:
        for level in dict.fromkeys((severity[rule], *ALSO_SEVERITIES.get(rule, ()))):
            firing.add_metric([rule, level], counts[rule, level])
    waiting = _gauge(
        "alert_notifications_waiting",
        "Notifications a receiver has not taken yet (resent at the next evaluation)",
        ["receiver"],
    )
    for delivery in loop.last.deliveries:
        waiting.add_metric([delivery.receiver], delivery.waiting)
    yield from (firing, waiting)


class FactsCache:
    """The graph's facts for /metrics, scanned at most once per `ttl` seconds per stale
    threshold; concurrent scrapes wait for one scan rather than each running their own."""

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self.scans = 0
        self._lock = threading.Lock()
        self._kept: tuple[float, float, Status] | None = None  # (max_age, when, facts)

    def get(self, scan: Callable[[float], Status], max_age: float) -> Status:
        """The kept facts while fresh and for the same `max_age`, else `scan(max_age)`'s."""
        with self._lock:
            kept = self._kept
            if kept and kept[0] == max_age and self.clock() - kept[1] < self.ttl:
                return kept[2]
            facts = scan(max_age)
            self.scans += 1
            self._kept = (max_age, self.clock(), facts)
            return facts


class GraphFacts(Collector):
    """One scrape's graph facts, from `lineagegraph status`'s library function."""

    def __init__(self, facts: Status) -> None:
        self.facts = facts

    def collect(self) -> Iterator[Metric]:
        assets = _gauge(
            "assets", "Assets in the graph, present or soft-deleted", ["system", "kind", "state"]
        )
        for row in self.facts.assets:
            assets.add_metric([row["system"] or "", row["kind"], "present"], row["assets"])
            assets.add_metric([row["system"] or "", row["kind"], "deleted"], row["deleted"])
        coverage = _gauge(
            "lineage_coverage_ratio", "Share of present assets with any lineage", ["kind"]
        )
        for row in self.facts.coverage:
            coverage.add_metric([row["kind"]], row["share"])
        by_system = _gauge(
            "lineage_coverage",
            "Share of a system's present tables and datasets with any lineage",
            ["system"],
        )
        for row in self.facts.coverage_by_system:
            by_system.add_metric([row["system"]], row["share"])
        source = ["system", "scope"]
        last = _gauge(
            "source_last_success_timestamp_seconds", "A source's last good harvest", source
        )
        stale = _gauge(
            "source_stale",
            "1 when a source's last good harvest is older than max_age_hours",
            source,
        )
        for row in self.facts.freshness:
            labels = [row["system"] or "", row["scope"] or ""]
            last.add_metric(labels, row["last_success"] / 1000)
            stale.add_metric(labels, 1 if row["stale"] else 0)
        failed = _gauge(
            "source_last_failure_timestamp_seconds",
            "A source's last harvest that failed or was partial (failing while newer than its"
            " last success)",
            source,
        )
        for row in self.facts.failures:
            failed.add_metric([row["system"] or "", row["scope"] or ""], row["last_failure"] / 1000)
        quality = _gauge("quality_assets", "Assets with check results, by quality", ["quality"])
        for name, count in sorted(self.facts.quality.items()):
            quality.add_metric([name], count)
        yield from (assets, coverage, by_system, last, stale, failed, quality)


def _gauge(name: str, documentation: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"lineagegraph_{name}", documentation, labels=labels)


class Metrics:
    """The app's registry: service counts and request latency; graph facts join per scrape."""

    def __init__(self, service: Service) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(ServiceCounts(service))
        self.latency = Histogram(
            "lineagegraph_http_request_duration_seconds",
            "Time to answer a request, by method, route template and status",
            ["method", "route", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    def timed(self, app: Starlette) -> Timed:
        return Timed(app, self.latency)


class Timed:
    """ASGI wrapper observing each request's latency, labelled by its route's template (so the
    label set stays small whatever the paths asked for)."""

    def __init__(self, app: Starlette, latency: Histogram) -> None:
        self.app = app
        self.latency = latency

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            labels = (scope["method"], self._route(scope), str(status))
            self.latency.labels(*labels).observe(time.perf_counter() - started)

    @staticmethod
    def _route(scope: Scope) -> str:
        route = scope.get("route")  # set by Starlette's router on a match (405s too)
        return "unmatched" if route is None else str(getattr(route, "path", "other"))


def _max_age(request: Request) -> float:
    raw = request.query_params.get("max_age_hours", str(DEFAULT_MAX_AGE_HOURS))
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1e6:
        raise BadRequest(f"max_age_hours must be a number of hours above 0 (got {raw[:40]!r})")
    return value


def _scanner(service: Service) -> Callable[[float], Status]:
    def scan(max_age: float) -> Status:
        facts: Status = service.read(graph_status, now_ms(), max_age, 0)
        return facts

    return scan


async def get_metrics(request: Request) -> Response:
    """The exposition: the app's registry, then the graph facts (kept for the TTL)."""
    service: Service = request.app.state.service
    metrics: Metrics = request.app.state.metrics
    try:
        max_age = _max_age(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    facts = await run_in_threadpool(service.metrics_facts.get, _scanner(service), max_age)
    graph = CollectorRegistry(auto_describe=False)
    graph.register(GraphFacts(facts))
    body = generate_latest(metrics.registry) + generate_latest(graph)
    # 0.0.4: what generate_latest writes and every Prometheus reads (0.26's "latest" says 1.0.0)
    return Response(body, media_type=CONTENT_TYPE_PLAIN_0_0_4)
