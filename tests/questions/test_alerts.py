"""Alert rules over a real graph: freshness (set and learned), folding, harvest failures,
coverage and quality, with blast radii."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from lineagegraph.alerts_settings import AlertSettings
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.model import (
    Asset,
    CheckResult,
    Column,
    ColumnFeed,
    Flow,
    Item,
    Transformation,
)
from lineagegraph.pipeline import harvest_run
from lineagegraph.questions.alerts import HOUR_MS, at_least, evaluate
from lineagegraph.schemas import SchemaSeen

T0 = 1_700_000_000_000
RAW = "s3://raw/events"
MARTS = [f"snowflake://acme/MARTS.PUBLIC.M{i} ü" for i in range(5)]


def late_chain(store: GraphStore) -> None:
    """A raw dataset written hourly by a job, feeding five marts (each with two columns) in a
    chain RAW -> M0 -> M1 ... -> M4, each written at the same times."""
    items: list[Item] = [Asset(RAW, "Dataset", "s3", "events", T0)]
    items += [Asset(m, "Table", "snowflake", m.rsplit(".", 1)[1], T0) for m in MARTS]
    items += [Column(f"{m}#{c}", m, c, T0) for m in MARTS for c in ("a", "b")]
    for hour in range(6):
        at = T0 + hour * HOUR_MS
        items.append(Transformation("spark://load", "spark", "load", f"r{hour}", at, writes=(RAW,)))
        for src, dst in zip([RAW, *MARTS], MARTS, strict=False):
            items.append(Flow(src, dst, at, via="dbt://m"))
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()


def test_a_late_source_is_one_alert_naming_the_five_late_assets_below(store: GraphStore) -> None:
    late_chain(store)
    last = T0 + 5 * HOUR_MS
    settings = AlertSettings(owners={"snowflake://acme/MARTS.**": "analytics@acme.example"})
    # learned: written every hour over 6 writes, window 3 h
    assert evaluate(store, settings, last + 3 * HOUR_MS - 1) == []
    alerts = evaluate(store, settings, last + 3 * HOUR_MS + 1)
    assert [(a.rule, a.subject, a.severity) for a in alerts] == [("freshness", RAW, "warning")]
    root = alerts[0]
    assert root.key == f"freshness:{RAW}"
    assert root.since == last + 3 * HOUR_MS
    assert sorted(root.explains) == sorted(MARTS)
    assert "learned: written every 1 h over 6 writes" in root.cause
    assert root.blast.assets == 5 and root.blast.columns == 10
    assert root.blast.names == tuple(MARTS)  # nearest first
    assert root.blast.owners == ("analytics@acme.example",)


def test_a_set_window_wins_and_an_asset_on_time_is_not_folded(store: GraphStore) -> None:
    late_chain(store)
    last = T0 + 5 * HOUR_MS
    settings = AlertSettings(freshness={MARTS[2]: 0.5}, learn_freshness=False, blast_names=1)
    alerts = evaluate(store, settings, last + HOUR_MS)
    assert [(a.subject, a.explains) for a in alerts] == [(MARTS[2], ())]
    assert "window 0.5 h (set)" in alerts[0].cause
    assert alerts[0].blast.assets == 2 and alerts[0].blast.names == (MARTS[3],)


def test_harvest_failing_until_a_success(store: GraphStore) -> None:
    with harvest_run(store, "s3", "raw"):
        pass
    for _ in range(2):
        try:
            with harvest_run(store, "s3", "raw"):
                raise RuntimeError("access denied to s3://raw")
        except RuntimeError:
            pass
    settings = AlertSettings(learn_freshness=False)
    alerts = evaluate(store, settings, T0)
    assert [(a.rule, a.key) for a in alerts] == [("harvest_failing", "harvest_failing:s3:raw")]
    assert "2 harvest(s) failed" in alerts[0].cause and "access denied" in alerts[0].cause
    with harvest_run(store, "s3", "raw"):
        pass
    assert evaluate(store, settings, T0) == []


def test_coverage_under_the_minimum_per_system(store: GraphStore) -> None:
    writer = GraphWriter(store)
    writer.add_all([
        Asset("s3://b/x", "Dataset", "s3", "x", T0),
        Asset("snowflake://a/D.S.T", "Table", "snowflake", "T", T0),
        Asset("snowflake://a/D.S.U", "Table", "snowflake", "U", T0),
        Flow("s3://b/x", "snowflake://a/D.S.T", T0),
    ])  # fmt: skip
    writer.flush()
    settings = AlertSettings(coverage={"s3": 0.5, "*": 0.9}, learn_freshness=False)
    alerts = evaluate(store, settings, T0)
    assert [(a.key, a.since) for a in alerts] == [("coverage:snowflake", T0)]
    assert "1 of 2 tables and datasets have lineage (50.0%), under 90.0%" in alerts[0].cause


def test_quality_folds_along_lineage_and_counts_severity(store: GraphStore) -> None:
    late_chain(store)
    writer = GraphWriter(store)
    writer.add_all([
        CheckResult("dbt://t1", "dbt", "not_null_a", f"{MARTS[1]}#a", "fail", T0, "r", 3),
        CheckResult("dbt://t2", "dbt", "unique_a", MARTS[3], "error", T0 + 5, "r"),
        CheckResult("dbt://t3", "dbt", "ok", MARTS[0], "pass", T0, "r"),
    ])  # fmt: skip
    writer.flush()
    settings = AlertSettings(learn_freshness=False, severity={"quality": "warning"})
    alerts = evaluate(store, settings, T0)
    assert [(a.subject, a.explains, a.since) for a in alerts] == [(MARTS[1], (MARTS[3],), T0)]
    assert "not_null_a (fail, 3 failures)" in alerts[0].cause
    assert alerts[0].blast.assets == 3
    assert at_least(alerts, "warning") == alerts and at_least(alerts, "critical") == []


def event(
    kind: str,
    job: str,
    run: str,
    hour: float,
    outputs: tuple[str, ...] = (),
    inputs: tuple[str, ...] = (),
) -> str:
    at = datetime.fromtimestamp((T0 + hour * HOUR_MS) / 1000, UTC).isoformat()
    return json.dumps({
        "eventType": kind, "eventTime": at, "run": {"runId": run},
        "job": {"namespace": "airflow", "name": job},
        "inputs": [{"namespace": "s3://out", "name": i} for i in inputs],
        "outputs": [{"namespace": "s3://out", "name": o} for o in outputs],
        "producer": "https://example.com/test", "schemaURL": "https://example.com/schema",
    })  # fmt: skip


def test_runs_that_never_finished_or_failed(store: GraphStore, tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    lines = [
        event("START", "hung ü", "r1", 0),
        event("RUNNING", "hung ü", "r1", 1),
        event("START", "flaky", "r2", 0),
        event("FAIL", "flaky", "r2", 1, ("daily",)),
        event("COMPLETE", "ok", "r3", 1, ("ok",)),  # its START arrives after it
        event("START", "ok", "r3", 0),
        event("START", "flaky", "r0", -5),  # an older run of flaky that completed
        event("COMPLETE", "flaky", "r0", -4, ("daily",)),
    ]
    (events / "a.jsonl").write_text("\n".join(lines) + "\n")
    harvest_openlineage(store, events)
    settings = AlertSettings(learn_freshness=False, run_timeout_hours=2)
    assert [a.key for a in evaluate(store, settings, T0 + 2 * HOUR_MS - 1)] == [
        "run_failed:openlineage://airflow/flaky"
    ]
    alerts = evaluate(store, settings, T0 + 3 * HOUR_MS)
    assert [(a.rule, a.severity, a.since) for a in alerts] == [
        ("run_failed", "critical", T0 + HOUR_MS),
        ("run_unfinished", "warning", T0 + 2 * HOUR_MS),
    ]
    failed, hung = alerts
    assert failed.cause.startswith("its latest run r2 ended FAIL")
    assert failed.blast.names == ("s3://out/daily",) and failed.blast.assets == 1
    assert hung.subject == "openlineage://airflow/hung ü"
    assert "r1 (RUNNING since" in hung.cause

    (events / "b.jsonl").write_text(
        "\n".join([event("COMPLETE", "hung ü", "r1", 4), event("START", "flaky", "r4", 4),
                   event("COMPLETE", "flaky", "r4", 5, ("daily",))]) + "\n"
    )  # fmt: skip
    harvest_openlineage(store, events / "b.jsonl")
    assert evaluate(store, settings, T0 + 6 * HOUR_MS) == []


def test_alerts_that_only_reach_each_other_fold_into_the_lowest_key(store: GraphStore) -> None:
    """A job reading what it writes: two late assets in a cycle, and a third below both."""
    a, b, c = "s3://x/a", "s3://x/b", "s3://x/c"
    items: list[Item] = [Asset(u, "Dataset", "s3", u[-1], T0) for u in (a, b, c)]
    items += [Flow(a, b, T0), Flow(b, a, T0), Flow(b, c, T0)]
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()
    settings = AlertSettings(freshness={"**": 1}, learn_freshness=False)
    alerts = evaluate(store, settings, T0 + 2 * HOUR_MS)
    assert [(x.subject, sorted(x.explains), x.blast.assets) for x in alerts] == [
        (a, [b, c], 2)  # a reaches b and c; itself (through b) is not in its blast radius
    ]


def test_schema_changes_are_breaking_only_where_something_reads_the_column(
    store: GraphStore,
) -> None:
    """ORDERS drops `note`, which column lineage shows nothing reads, and adds `region`: a
    warning. EVENTS, read by a job with no column lineage, drops `id`: breaking, naming the
    job and the asset it flows into. LONELY changes but nothing reads it: no alert."""
    orders, mart, events, lonely = (f"file:///{n}" for n in ("orders", "mart", "events", "lonely"))
    items: list[Item | SchemaSeen] = [
        Asset(u, "Dataset", "file", u, T0) for u in (orders, mart, events, lonely)
    ]
    items += [Column(f"{orders}#id", orders, "id", T0), Column(f"{mart}#id", mart, "id", T0)]
    items += [
        ColumnFeed(f"{orders}#id", f"{mart}#id", T0),
        Flow(orders, mart, T0),
        Transformation("spark://count", "spark", "count", "r1", T0, reads=(events,)),
        Flow(events, mart, T0),
    ]
    for urn, before, after in [
        (orders, [("id", "int"), ("note", "text")], [("id", "int"), ("region", "text")]),
        (events, [("id", "int"), ("at", "timestamp")], [("at", "timestamp")]),
        (lonely, [("x", "int")], [("x", "bigint")]),
    ]:
        items += [
            SchemaSeen(urn, "openlineage", T0, tuple(before)),
            SchemaSeen(urn, "openlineage", T0 + HOUR_MS, tuple(after)),
        ]
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()
    found = {
        a.subject: a for a in evaluate(store, AlertSettings(), T0 + 2 * HOUR_MS)
        if a.rule == "schema_change"
    }  # fmt: skip
    assert sorted(found) == [events, orders]
    assert found[orders].severity == "warning"
    assert found[orders].cause == "openlineage at 2023-11-14 23:13:20Z: +region text, -note"
    assert found[events].severity == "critical"
    assert found[events].cause.endswith(f"-id; read by count, {mart}")
    assert (found[events].blast.assets, found[events].blast.names) == (1, (mart,))
    settings = AlertSettings(severity={"schema_change": "info"})  # breaking stays critical
    again = evaluate(store, settings, T0 + 2 * HOUR_MS)
    assert {a.subject: a.severity for a in again if a.rule == "schema_change"} == {
        events: "critical",
        orders: "info",
    }


def test_upstream_drift_names_what_started_and_stopped_flowing_in(
    store: GraphStore, tmp_path: Path
) -> None:
    """`load` writes daily from a and b, then (hour 30) from a and c: daily's upstream set
    changed; report, below daily, is its blast radius. When b comes back and c goes (hour 32),
    daily's upstreams at the window's two ends are the same again: no alert."""
    daily, report = "s3://out/daily", "s3://out/report"
    load = "openlineage://airflow/load"

    def runs(name: str, hour: float, inputs: tuple[str, ...]) -> None:
        lines = [
            event("COMPLETE", "load", f"l{hour}", hour, ("daily",), inputs),
            event("COMPLETE", "report", f"r{hour}", hour, ("report",), ("daily",)),
        ]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        harvest_openlineage(store, tmp_path / name)

    runs("h0.jsonl", 0, ("a", "b"))
    runs("h30.jsonl", 30, ("a", "c"))
    settings = AlertSettings(learn_freshness=False, owners={"s3://out/report": "bi@acme"})
    alerts = evaluate(store, settings, T0 + 31 * HOUR_MS)
    assert [(a.rule, a.key, a.severity, a.since) for a in alerts] == [
        ("upstream_drift", f"upstream_drift:{daily}", "warning", T0 + 30 * HOUR_MS)
    ]
    assert alerts[0].cause == (
        f"its upstream assets changed: added: s3://out/c via {load}; removed: s3://out/b via {load}"
    )
    assert (alerts[0].blast.assets, alerts[0].blast.names, alerts[0].blast.owners) == (
        1, (report,), ("bi@acme",),
    )  # fmt: skip
    # the change is older than the window, or the rule is off: nothing
    assert evaluate(store, AlertSettings(upstream_drift_hours=0.5), T0 + 31 * HOUR_MS) == []
    assert evaluate(store, AlertSettings(upstream_drift_hours=0), T0 + 31 * HOUR_MS) == []
    runs("h32.jsonl", 32, ("a", "b"))
    assert evaluate(store, settings, T0 + 33 * HOUR_MS) == []
    (both,) = evaluate(store, AlertSettings(upstream_drift_hours=1.5), T0 + 33 * HOUR_MS)
    assert both.cause.endswith(f"added: s3://out/b via {load}; removed: s3://out/c via {load}")


def test_a_retired_flow_is_neither_blast_radius_nor_folding(store: GraphStore) -> None:
    """Lineage that stopped holding (docs/history.md) carries no alert: M2 no longer reads M1."""
    late_chain(store)
    store.execute(
        "MATCH (:Asset {urn: $a})-[e:FLOWS_TO]->(:Asset {urn: $b}) SET e.retired_at = $at",
        {"a": MARTS[1], "b": MARTS[2], "at": T0 + 5 * HOUR_MS},
        write=True,
    )
    alerts = evaluate(store, AlertSettings(), T0 + 9 * HOUR_MS)
    assert [(a.subject, sorted(a.explains), a.blast.assets) for a in alerts] == [
        (RAW, MARTS[:2], 2),
        (MARTS[2], MARTS[3:], 2),
    ]


def test_a_stale_raw_table_with_fifty_assets_below_is_one_alert_naming_fifty(
    store: GraphStore,
) -> None:
    """Noise control at the size people meet: 50 marts read the raw table (ten directly, each
    the head of a chain of five), all written with it; when it stops, one alert explains all."""
    marts = [f"snowflake://acme/MARTS.PUBLIC.T{i:02d}" for i in range(50)]
    items: list[Item] = [Asset(RAW, "Dataset", "s3", "events", T0)]
    items += [Asset(m, "Table", "snowflake", m.rsplit(".", 1)[1], T0) for m in marts]
    for hour in range(6):
        at = T0 + hour * HOUR_MS
        items.append(Transformation("spark://load", "spark", "load", f"r{hour}", at, writes=(RAW,)))
        for i, mart in enumerate(marts):
            items.append(Flow(RAW if i % 5 == 0 else marts[i - 1], mart, at, via="dbt://m"))
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()
    alerts = evaluate(store, AlertSettings(), T0 + 5 * HOUR_MS + 3 * HOUR_MS + 1)
    assert [(a.rule, a.subject) for a in alerts] == [("freshness", RAW)]
    assert sorted(alerts[0].explains) == marts
    assert alerts[0].blast.assets == 50


def test_roots_searched_together_each_count_their_own_blast_radius(store: GraphStore) -> None:
    """Two late sources whose lineage meets in a shared mart, searched in one go: each root's
    blast radius and columns are its own (the shared mart counts in both), and the shared mart
    is folded into one of them only, the lower key."""
    a, b = "s3://raw/a", "s3://raw/b"
    only_a, shared = "snowflake://acme/MARTS.PUBLIC.ONLY_A", "snowflake://acme/MARTS.PUBLIC.SHARED"
    items: list[Item] = [Asset(u, "Dataset", "s3", u[-1], T0) for u in (a, b)]
    items += [Asset(m, "Table", "snowflake", m.rsplit(".", 1)[1], T0) for m in (only_a, shared)]
    items += [Column(f"{only_a}#{c}", only_a, c, T0) for c in ("x", "y", "z")]
    items += [Column(f"{shared}#{c}", shared, c, T0) for c in ("x", "y")]
    for hour in range(6):
        at = T0 + hour * HOUR_MS
        for source in (a, b):
            items.append(Transformation(f"spark://load-{source[-1]}", "spark", "load",
                                        f"{source}-{hour}", at, writes=(source,)))  # fmt: skip
            items.append(Flow(source, shared, at, via="dbt://m"))
        items.append(Flow(a, only_a, at, via="dbt://m"))
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()
    alerts = evaluate(store, AlertSettings(), T0 + 9 * HOUR_MS)
    assert [
        (x.subject, sorted(x.explains), x.blast.assets, x.blast.columns, x.blast.names)
        for x in alerts
    ] == [
        (a, sorted([only_a, shared]), 2, 5, tuple(sorted([only_a, shared]))),
        (b, [], 1, 2, (shared,)),
    ]
