"""`GET /metrics` on a running server: Prometheus text with the graph's facts (as `lineagegraph
status` computes them), the events taken in and the request latency, behind the token."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml
from prometheus_client.parser import text_string_to_metric_families
from serve_fixtures import Server, client, run_event, wait_for

from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Flow
from lineagegraph.pipeline import harvest_run
from lineagegraph.questions.status import HOUR_MS, Status, graph_status
from lineagegraph.serve.metrics import FactsCache
from lineagegraph.settings import GraphSettings

T0 = 1_700_000_000_000
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def build_graph(data_dir: Path) -> None:
    """Two S3 datasets (one with lineage) and a table; s3 harvested now and failing since,
    snowflake harvested 48 h ago."""
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.init_schema()
        writer = GraphWriter(store)
        writer.add_all([
            Asset("s3://b/read", "Dataset", "s3", "read", T0),
            Asset("s3://b/unread", "Dataset", "s3", "unread", T0),
            Asset("snowflake://a/D.S.T", "Table", "snowflake", "T", T0),
            Flow("s3://b/read", "snowflake://a/D.S.T", T0),
        ])  # fmt: skip
        writer.flush()
        for system, scope in (("s3", "b"), ("snowflake", "a")):
            with harvest_run(store, system, scope):
                pass
        with pytest.raises(RuntimeError), harvest_run(store, "s3", "b"):
            raise RuntimeError("the bucket's listing failed")  # s3 is failing since
        store.execute(
            "MATCH (h:HarvestRun {system: 'snowflake'}) SET h.finished = h.finished - $age",
            {"age": 48 * HOUR_MS},
            write=True,
        )


@pytest.fixture
def graph_server(tmp_path: Path) -> Iterator[Server]:
    build_graph(tmp_path / "store")
    server = Server(tmp_path / "store")
    server.start()
    yield server
    server.kill(signal.SIGTERM)  # a clean stop also stops its embedded store's server


def scrape(server: Server, **params: str) -> Samples:
    r = server.get("/metrics", **params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def test_graph_facts_freshness_and_the_stale_flag(graph_server: Server) -> None:
    samples = scrape(graph_server)
    assets = {k[1]: v for k, v in samples.items() if k[0] == "lineagegraph_assets"}
    assert assets[(("kind", "Dataset"), ("state", "present"), ("system", "s3"))] == 2
    assert assets[(("kind", "Table"), ("state", "present"), ("system", "snowflake"))] == 1
    assert samples[("lineagegraph_lineage_coverage_ratio", (("kind", "Dataset"),))] == 0.5
    assert samples[("lineagegraph_lineage_coverage_ratio", (("kind", "Table"),))] == 1.0
    assert samples[("lineagegraph_lineage_coverage", (("system", "s3"),))] == 0.5
    assert samples[("lineagegraph_lineage_coverage", (("system", "snowflake"),))] == 1.0
    stale = {k[1]: v for k, v in samples.items() if k[0] == "lineagegraph_source_stale"}
    assert stale == {
        (("scope", "b"), ("system", "s3")): 0,
        (("scope", "a"), ("system", "snowflake")): 1,
    }
    last = {
        k[1]: v
        for k, v in samples.items()
        if k[0] == "lineagegraph_source_last_success_timestamp_seconds"
    }
    s3, sf = (
        last[(("scope", "b"), ("system", "s3"))],
        last[(("scope", "a"), ("system", "snowflake"))],
    )
    assert round((s3 - sf) / 3600) == 48
    failures = {
        k[1]: v
        for k, v in samples.items()
        if k[0] == "lineagegraph_source_last_failure_timestamp_seconds"
    }
    assert list(failures) == [(("scope", "b"), ("system", "s3"))]
    assert failures[(("scope", "b"), ("system", "s3"))] >= s3
    patient = scrape(graph_server, max_age_hours="72")
    assert {v for k, v in patient.items() if k[0] == "lineagegraph_source_stale"} == {0}
    bad = graph_server.get("/metrics", max_age_hours="soon")
    assert bad.status_code == 400 and "max_age_hours" in bad.json()["reason"]


def test_the_shipped_prometheus_rules_name_only_metrics_serve_exposes(
    graph_server: Server,
) -> None:
    rules = yaml.safe_load((Path(__file__).parents[2] / "config/prometheus/rules.yml").read_text())
    named = {
        name
        for group in rules["groups"]
        for rule in group["rules"]
        for name in re.findall(r"lineagegraph_[a-z_]+", rule["expr"])
    }
    # serve's alert metrics come with its first evaluation of the alert rules, on start
    wait_for(lambda: scrape(graph_server).get(("lineagegraph_alert_evaluations_total", ())))
    exposed = {name for name, _ in scrape(graph_server)}
    assert len(named) == 8
    assert named <= exposed, named - exposed


def test_events_and_request_latency(graph_server: Server) -> None:
    client(graph_server).emit(run_event("load", [("s3://b", "read")], [("s3://b", "out")]))
    assert graph_server.post("{not json").status_code == 400
    graph_server.get("/api/v1/namespaces")
    graph_server.get("/api/v1/nothing-here")
    samples = scrape(graph_server)
    assert samples[("lineagegraph_events_accepted_total", ())] == 1
    assert samples[("lineagegraph_events_rejected_total", ())] == 1
    count = "lineagegraph_http_request_duration_seconds_count"
    route = (("method", "POST"), ("route", "/api/v1/lineage"))
    assert samples[(count, (*route, ("status", "201")))] == 1
    assert samples[(count, (*route, ("status", "400")))] == 1
    namespaces = (("method", "GET"), ("route", "/api/v1/namespaces"), ("status", "200"))
    assert samples[(count, namespaces)] == 1
    assert samples[(count, (("method", "GET"), ("route", "unmatched"), ("status", "404")))] == 1
    buckets = {
        k[1]: v
        for k, v in samples.items()
        if k[0] == "lineagegraph_http_request_duration_seconds_bucket"
        and ("route", "/api/v1/namespaces") in k[1]
    }
    assert buckets[(("le", "+Inf"), *namespaces)] == 1


def test_metrics_need_the_token_when_one_is_set(graph_server: Server) -> None:
    r = requests.get(f"{graph_server.url}/metrics", timeout=30)
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"] == "Bearer"


def present_assets(samples: Samples) -> float:
    return sum(
        v
        for k, v in samples.items()
        if k[0] == "lineagegraph_assets" and ("state", "present") in k[1]
    )


def test_one_graph_scan_per_ttl_while_event_counts_stay_live(tmp_path: Path) -> None:
    build_graph(tmp_path / "store")
    server = Server(
        tmp_path / "store", extra_env={"LINEAGEGRAPH_SERVE__METRICS_TTL_SECONDS": "3600"}
    )
    server.start()
    try:
        first = scrape(server)
        assert first[("lineagegraph_graph_scans_total", ())] == 1
        assert present_assets(first) == 3
        client(server).emit(run_event("load", [("s3://b", "read")], [("s3://b", "out")]))
        deadline = time.monotonic() + 60
        while server.get("/healthz").json()["events_ingested"] < 1:
            assert time.monotonic() < deadline, "the event was not ingested within 60 s"
            time.sleep(0.1)
        second = scrape(server)
        assert second[("lineagegraph_graph_scans_total", ())] == 1  # the graph was not read
        assert second[("lineagegraph_events_ingested_total", ())] == 1  # the counts are live
        assert present_assets(second) == 3  # the kept scan, from before the event
        other = scrape(server, max_age_hours="72")  # another threshold is another scan
        assert other[("lineagegraph_graph_scans_total", ())] == 2
        assert present_assets(other) == 4  # s3://b/out, from the event
    finally:
        server.kill(signal.SIGTERM)


def test_facts_cache_scans_again_after_the_ttl(store: GraphStore) -> None:
    writer = GraphWriter(store)
    writer.add_all([Asset("s3://b/one", "Dataset", "s3", "one", T0)])
    writer.flush()
    now = [0.0]
    cache = FactsCache(15.0, clock=lambda: now[0])

    def scan(max_age: float) -> Status:
        return graph_status(store, T0, max_age, 0)

    first = cache.get(scan, 26.0)
    assert [r["assets"] for r in first.assets] == [1]
    writer.add_all([Asset("s3://b/two", "Dataset", "s3", "two", T0)])
    writer.flush()
    now[0] = 14.9
    assert cache.get(scan, 26.0) is first and cache.scans == 1
    now[0] = 15.0
    assert [r["assets"] for r in cache.get(scan, 26.0).assets] == [2]
    assert cache.scans == 2
    never = FactsCache(0.0, clock=lambda: now[0])  # a TTL of 0: every scrape scans
    never.get(scan, 26.0)
    never.get(scan, 26.0)
    assert never.scans == 2
