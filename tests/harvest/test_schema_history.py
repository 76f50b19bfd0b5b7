"""Schemas over time (docs/graph-model.md, schema versions): OpenLineage schema facets sent by
openlineage-python's real client, a version per change dated by the event, the same graph
however often and in whatever order the events come; the schema-change alert that names what
reads a dropped column; `lineagegraph schema-history`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from openlineage_fixtures import event_by_event
from snowflake_fixtures import (
    NOW,
    AccountUsage,
    Query,
    accessed,
    modified,
    snowflake_settings,
)
from snowflake_fixtures import urn as snowflake_urn_of

from lineagegraph.alerts_settings import AlertSettings
from lineagegraph.cli import cli
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.dbt import harvest_dbt
from lineagegraph.harvest.dbt.artifacts import iso_ms
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.harvest.snowflake.harvester import connect, harvest
from lineagegraph.output import FORMATS
from lineagegraph.questions.alerts import evaluate
from lineagegraph.questions.schemas import history_of

ORDERS_NAME = "shop.public.orders"
ORDERS = f"postgres://db:5432/{ORDERS_NAME}"
DAILY = "file:///data/mart/daily"
HOUR = 3_600_000


def day(n: int) -> int:
    return int(datetime(2024, 3, n, 6, tzinfo=UTC).timestamp() * 1000)


def emit(path: Path, days: list[int]) -> None:
    """A job reading orders into a daily mart, its total fed by orders.amount. On day 2 and
    later orders has dropped `amount`, retyped `id` and gained `region`."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent
    from openlineage.client.event_v2 import RunState as State
    from openlineage.client.facet_v2 import column_lineage_dataset as cl
    from openlineage.client.facet_v2 import schema_dataset as sd
    from openlineage.client.transport.file import FileConfig, FileTransport

    client = OpenLineageClient(
        transport=FileTransport(FileConfig(log_file_path=str(path), append=True))
    )

    def schema(*fields: tuple[str, str]) -> sd.SchemaDatasetFacet:
        return sd.SchemaDatasetFacet(fields=[sd.SchemaDatasetFacetFields(n, t) for n, t in fields])

    for n in days:
        orders = (
            [("id", "int"), ("amount", "decimal(10,2)"), ("note", "text")]
            if n == 1
            else [("id", "bigint"), ("note", "text"), ("region", "text")]
        )
        lineage = cl.ColumnLineageDatasetFacet(
            fields={
                "total": cl.Fields(
                    inputFields=[
                        cl.InputField("postgres://db:5432", "shop.public.orders", "amount")
                    ]
                )
            }
        )
        client.emit(
            RunEvent(
                eventType=State.COMPLETE,
                eventTime=datetime.fromtimestamp(day(n) / 1000, UTC).isoformat(),
                run=Run(runId=f"0191d9a4-0000-7000-8000-00000000000{n}"),
                job=Job(namespace="airflow", name="mart.daily"),
                producer="https://github.com/lineagegraph/tests",
                inputs=[
                    InputDataset(
                        "postgres://db:5432",
                        "shop.public.orders",
                        facets={"schema": schema(*orders)},
                    )
                ],
                outputs=[
                    OutputDataset(
                        "file",
                        "/data/mart/daily",
                        facets={
                            "schema": schema(("day", "date"), ("total", "decimal(20,2)")),
                            "columnLineage": lineage,
                        },
                    )
                ],
            )
        )


def versions(store: GraphStore) -> list[list[Any]]:
    return store.execute(
        "MATCH (a:Asset)-[:HAS_SCHEMA]->(v:SchemaVersion) RETURN a.urn, v.source, v.at,"
        " v.last_seen, v.fields ORDER BY a.urn, v.at",
        write=False,
    ).rows


def test_a_dropped_column_that_feeds_downstream_is_a_breaking_change(
    store: GraphStore, tmp_path: Path
) -> None:
    # Day 3 harvested first, then days 2 and 1: versions are dated by the events, not by
    # arrival (day 2's moves the version day 3 began back to day 2).
    for name, days in (("late", [3]), ("early", [2, 1])):
        (tmp_path / name).mkdir()
        emit(tmp_path / name / "events.jsonl", days)
        run, report = harvest_openlineage(store, tmp_path / name)
        assert run.status == "success" and not report.problems
    events = tmp_path / "all.jsonl"
    emit(events, [1, 2, 3])
    first = json.dumps([["id", "int"], ["amount", "decimal(10,2)"], ["note", "text"]])
    second = json.dumps([["id", "bigint"], ["note", "text"], ["region", "text"]])
    mart = json.dumps([["day", "date"], ["total", "decimal(20,2)"]])
    expected = [
        [DAILY, "openlineage", day(1), day(3), mart],
        [ORDERS, "openlineage", day(1), day(1), first],
        [ORDERS, "openlineage", day(2), day(3), second],
    ]
    assert versions(store) == expected
    # Again in full, and every event written on its own: the same versions.
    harvest_openlineage(store, events, full=True)
    event_by_event(store, events)
    assert versions(store) == expected

    history = history_of(store, ORDERS)
    (change,) = history.changes()
    assert (change.at, change.source) == (day(2), "openlineage")
    assert change.dropped == (("amount", "decimal(10,2)"),)
    assert change.retyped == (("id", "int", "bigint"),)
    assert change.added == (("region", "text"),)
    assert history.rows()[1][2:6] == ["breaking", "region", "amount", "id: int -> bigint"]

    alerts = evaluate(store, AlertSettings(), day(3))
    (alert,) = [a for a in alerts if a.rule == "schema_change"]
    assert (alert.key, alert.severity, alert.since) == (
        f"schema_change:{ORDERS}",
        "critical",
        day(2),
    )
    assert alert.cause.startswith("breaking: openlineage at 2024-03-02 06:00:00Z: +region text")
    assert alert.cause.endswith(f"feeds {DAILY}#total")
    assert (alert.blast.assets, alert.blast.columns, alert.blast.names) == (1, 2, (DAILY,))
    # Out of the window: nothing fires.
    later = evaluate(store, AlertSettings(schema_change_hours=1), day(3))
    assert [a for a in later if a.rule == "schema_change"] == []


def harvested_by_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Days 1 and 2 harvested by `lineagegraph harvest openlineage`; runs the CLI on them."""
    for name in list(os.environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    events = tmp_path / "events.jsonl"
    emit(events, [1, 2])
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(cli, ["--data-dir", str(tmp_path / "store"), *args])

    assert run("harvest", "openlineage", str(events)).exit_code == 0
    return run


def test_schema_history_command_prints_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`lineagegraph schema-history` after a harvest by the CLI, in each format."""
    run = harvested_by_cli(tmp_path, monkeypatch)
    for fmt in FORMATS:
        result = run("schema-history", ORDERS, "--format", fmt)
        assert result.exit_code == 0, result.output
        if fmt == "json":
            answer = json.loads(result.stdout)
            assert [c["dropped"] for c in answer["changes"]] == [
                [{"name": "amount", "type": "decimal(10,2)"}]
            ]
        else:
            assert "breaking" in result.output and "amount" in result.output
            assert "id: int -> bigint" in result.output


def _model(name: str, sql: str, *parents: str) -> dict[str, Any]:
    return {
        "unique_id": f"model.shop.{name}", "resource_type": "model", "name": name,
        "alias": name, "database": "shop", "schema": "main",
        "config": {"materialized": "table"}, "columns": {},
        "depends_on": {"nodes": [f"model.shop.{p}" for p in parents]}, "compiled_code": sql,
    }  # fmt: skip


def _dbt_target(path: Path, generated: str, orders: dict[str, str]) -> Path:
    """A dbt target: orders, and revenue built from it; the catalog lists their columns as the
    warehouse had them at `generated` (orders' given, in order)."""
    path.mkdir()
    (path / "manifest.json").write_text(json.dumps({
        "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
                     "adapter_type": "duckdb", "project_name": "shop", "generated_at": generated},
        "nodes": {
            "model.shop.orders": _model("orders", "select 1 as id, 2.5 as amount"),
            "model.shop.revenue": _model(
                "revenue", "select id, amount as total from shop.main.orders", "orders"
            ),
        },
        "sources": {},
    }))  # fmt: skip

    def columns(listed: dict[str, str]) -> dict[str, Any]:
        return {
            n: {"name": n, "type": t, "index": i + 1} for i, (n, t) in enumerate(listed.items())
        }

    (path / "catalog.json").write_text(json.dumps({
        "metadata": {"generated_at": generated},
        "nodes": {
            "model.shop.orders": {"columns": columns(orders)},
            "model.shop.revenue": {"columns": columns({"id": "INTEGER", "total": "DOUBLE"})},
        },
        "sources": {},
    }))  # fmt: skip
    return path


def test_dbt_catalogs_before_and_after_an_alter_give_a_dated_retype(
    store: GraphStore, tmp_path: Path
) -> None:
    """Two catalog.json of the same project, before and after `ALTER TABLE orders ALTER id
    TYPE BIGINT`: a retype of a column that feeds revenue.id, dated by the second catalog."""
    before = "2024-05-01T00:00:00Z"
    after = "2024-05-02T00:00:00Z"
    orders = {"id": "INTEGER", "amount": "DECIMAL(10,2)"}
    namespace = "duckdb://shop.duckdb"
    harvest_dbt(store, _dbt_target(tmp_path / "before", before, orders), namespace=namespace)
    target = _dbt_target(tmp_path / "after", after, orders | {"id": "BIGINT"})
    harvest_dbt(store, target, namespace=namespace)
    harvest_dbt(store, target, namespace=namespace)  # again: nothing new
    urn = "duckdb://shop.duckdb/shop.main.orders"
    history = history_of(store, urn)
    assert [(v.at, v.hash == history.versions["dbt"][0].hash) for v in history.versions["dbt"]] == [
        (iso_ms(before, ""), True),
        (iso_ms(after, ""), False),
    ]
    (change,) = history.changes()
    assert (change.source, change.at, change.retyped) == (
        "dbt",
        iso_ms(after, ""),
        (("id", "INTEGER", "BIGINT"),),
    )
    assert change.added == change.dropped == ()
    (alert,) = [
        a for a in evaluate(store, AlertSettings(), iso_ms(after, "")) if a.rule == "schema_change"
    ]
    assert alert.severity == "critical"
    assert alert.cause.endswith("feeds duckdb://shop.duckdb/shop.main.revenue#id")
    # revenue's schema did not change: one version, no alert about it
    assert len(history_of(store, "duckdb://shop.duckdb/shop.main.revenue").versions["dbt"]) == 1


def test_snowflake_columns_date_a_drop_by_deleted(
    store: GraphStore, account_usage: AccountUsage, fakesnow_server: dict[str, Any]
) -> None:
    """ACCOUNT_USAGE.COLUMNS with a DELETED row: the drop is dated by it, the schema as it
    stands by the harvest; a table no lineage names gets no versions."""
    orders, daily = "RAW.PUBLIC.ORDERS", "ANALYTICS.CORE.ORDERS_DAILY"
    account_usage.add(
        Query(
            "q1",
            NOW - 5 * HOUR,
            direct=[accessed(orders, "AMOUNT")],
            modified=[modified(daily, {"TOTAL": [(orders, "AMOUNT")]})],
            query_type="INSERT",
        )
    )
    dropped = NOW - 2 * HOUR
    account_usage.add_column(orders, "ID", "NUMBER", 1, precision=38, scale=0)
    account_usage.add_column(
        orders, "AMOUNT", "NUMBER", 2, precision=10, scale=2, deleted_at=dropped
    )
    account_usage.add_column(orders, "NOTE", "TEXT", 3, length=100)
    account_usage.add_column(daily, "TOTAL", "NUMBER", 1, precision=12, scale=2)
    account_usage.add_column("OTHER.X.UNSEEN", "A", "TEXT", 1, length=1)
    settings = snowflake_settings(fakesnow_server)
    for now in (NOW, NOW + HOUR):  # a second harvest changes nothing but the last sighting
        connection = connect(settings.snowflake)
        try:
            report = harvest(store, settings, connection, now=now)
        finally:
            connection.close()
        assert report.status == "success", report.warnings
    with_amount = [["ID", "NUMBER(38,0)"], ["AMOUNT", "NUMBER(10,2)"], ["NOTE", "TEXT(100)"]]
    total = [["TOTAL", "NUMBER(12,2)"]]
    assert versions(store) == [
        [snowflake_urn_of(daily), "snowflake", NOW, NOW + HOUR, json.dumps(total)],
        [snowflake_urn_of(orders), "snowflake", dropped - 1, dropped - 1, json.dumps(with_amount)],
        [snowflake_urn_of(orders), "snowflake", dropped, NOW + HOUR,
         json.dumps([with_amount[0], with_amount[2]])],
    ]  # fmt: skip
    (alert,) = [a for a in evaluate(store, AlertSettings(), NOW) if a.rule == "schema_change"]
    assert alert.subject == snowflake_urn_of(orders) and alert.severity == "critical"
    assert alert.since == dropped
    assert alert.cause.endswith(f"-AMOUNT; feeds {snowflake_urn_of(daily)}#TOTAL")


def test_diff_and_history_show_schema_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`lineagegraph diff` lists orders' day-2 schema change in every format, only in a window
    that holds it; `lineagegraph history` puts it on orders' timeline."""
    cli_run = harvested_by_cli(tmp_path, monkeypatch)

    def run(*args: str) -> str:
        result = cli_run(*args)
        assert result.exit_code == 0, result.output
        return result.output

    window = ("diff", "--since", "2024-03-02", "--until", "2024-03-03")
    answer = json.loads(run(*window, "--format", "json"))
    assert [(c["what"], c["urn"]) for c in answer["added"]] == [("Column", f"{ORDERS}#region")]
    (change,) = answer["schemas"]
    assert (change["asset"], change["source"], change["at"], change["breaking"]) == (
        ORDERS, "openlineage", day(2), True,
    )  # fmt: skip
    assert change["dropped"] == [{"name": "amount", "type": "decimal(10,2)"}]
    assert change["retyped"] == [{"name": "id", "from": "int", "to": "bigint"}]
    assert change["added"] == [{"name": "region", "type": "text"}]
    table = run(*window)
    assert table.splitlines()[0] == (
        "1 added, 0 removed, 1 schema change(s) between 2024-03-02 00:00:00Z and "
        "2024-03-03 00:00:00Z"
    )
    summary = "+region text, -amount, id: int -> bigint"
    assert "breaking" in table and summary in table
    assert f"{ORDERS} (openlineage): breaking: {summary}" in run(*window, "--format", "tree")
    for fmt in ("mermaid", "dot", "html"):
        assert "-amount" in run(*window, "--format", fmt)
    # day 1's versions are no change; a window around the mart reaches orders (1 hop)
    assert json.loads(run("diff", "--since", "2024-03-03", "--format", "json"))["schemas"] == []
    around = json.loads(run(*window, DAILY, "--depth", "1", "--format", "json"))
    assert [c["asset"] for c in around["schemas"]] == [ORDERS]

    timeline = json.loads(run("history", ORDERS, "--format", "json"))["events"]
    assert {
        "at": day(2), "subject": ORDERS, "what": "schema changed (openlineage)",
        "other": f"breaking: {summary}",
    } in timeline  # fmt: skip
