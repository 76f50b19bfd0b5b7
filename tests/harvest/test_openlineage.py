"""OpenLineage RunEvents into the graph: events from openlineage-python's own client and file
transport, recorded events of the Spark agent's shape, and bad input."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lineagegraph.cli import cli
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.openlineage import OpenLineageReport, harvest_openlineage, read_events
from lineagegraph.identity import FoldRules

DATA = Path(__file__).parent / "data" / "openlineage"
LAKE = "s3://lake"
ORDERS, CUSTOMERS, DAILY = (
    f"{LAKE}/raw/orders",
    f"{LAKE}/warehouse/sales.db/customers",
    f"{LAKE}/warehouse/sales.db/orders_daily",
)
JOB = (
    "openlineage://prod-spark/daily_orders.execute_insert_into_hadoop_fs_relation_command."
    "warehouse_sales_db_orders_daily"
)


def rows(store: GraphStore, cypher: str, **params: Any) -> list[list[Any]]:
    return store.execute(cypher, params, write=False).rows


def flows(store: GraphStore) -> set[tuple[str, str]]:
    return {(a, b) for a, b in rows(store, "MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn")}


def feeds(store: GraphStore) -> set[tuple[str, str]]:
    return {(a, b) for a, b in rows(store, "MATCH (a)-[:FEEDS]->(b) RETURN a.urn, b.urn")}


def emit_with_client(path: Path, append: bool) -> None:
    """Two runs of a job through openlineage-python's real client and file transport."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import (
        InputDataset,
        Job,
        OutputDataset,
        Run,
        RunEvent,
        RunState,
    )
    from openlineage.client.facet_v2 import column_lineage_dataset as cl
    from openlineage.client.facet_v2 import symlinks_dataset as sl
    from openlineage.client.transport.file import FileConfig, FileTransport

    client = OpenLineageClient(
        transport=FileTransport(FileConfig(log_file_path=str(path), append=append))
    )
    lineage = cl.ColumnLineageDatasetFacet(fields={
        "customer": cl.Fields(inputFields=[cl.InputField("postgres://db:5432", "shop.public.orders",
                                                         "customer_id")]),
    })  # fmt: skip
    symlinks = sl.SymlinksDatasetFacet(
        identifiers=[sl.Identifier("file", "mart.customers", "TABLE")]
    )
    for day, run_id in ((1, "0191d9a4-0000-7000-8000-000000000001"),
                        (2, "0191d9a4-0000-7000-8000-000000000002")):  # fmt: skip
        for state in (RunState.START, RunState.COMPLETE):
            client.emit(RunEvent(
                eventType=state,
                eventTime=datetime(2024, 3, day, 6, 0, tzinfo=UTC).isoformat(),
                run=Run(runId=run_id),
                job=Job(namespace="airflow", name="mart.customers"),
                producer="https://github.com/lineagegraph/tests",
                inputs=[InputDataset("postgres://db:5432", "shop.public.orders")],
                outputs=[OutputDataset("file", "/data/mart/customers/dt=2024-03-0" + str(day),
                                       facets={"columnLineage": lineage, "symlinks": symlinks})],
            ))  # fmt: skip


@pytest.mark.parametrize("append", [True, False], ids=["json-lines", "file-per-event"])
def test_events_from_the_openlineage_client_and_file_transport(
    store: GraphStore, tmp_path: Path, append: bool
) -> None:
    (tmp_path / "ol").mkdir()
    emit_with_client(tmp_path / "ol" / ("events.jsonl" if append else "events"), append)
    assert len(list((tmp_path / "ol").iterdir())) == (1 if append else 4)
    run, report = harvest_openlineage(store, tmp_path / "ol")

    assert (report.events, report.complete, report.skipped_not_complete) == (4, 2, 2)
    assert run.status == "success" and not report.problems
    orders, customers = "postgres://db:5432/shop.public.orders", "file:///data/mart/customers"
    assert flows(store) == {(orders, customers)}
    assert feeds(store) == {(f"{orders}#customer_id", f"{customers}#customer")}
    [[runs, last_run_id]] = rows(
        store, "MATCH (t:Transformation {urn: 'openlineage://airflow/mart.customers'}) "
        "RETURN t.runs, t.last_run_id",
    )  # fmt: skip
    assert (runs, last_run_id) == (2, "0191d9a4-0000-7000-8000-000000000002")
    [[alias, labels]] = rows(store, "MATCH (d {urn: $u}) RETURN d.ol_symlinks, labels(d)",
                             u=customers)  # fmt: skip
    assert alias == "mart.customers" and "Dataset" in labels
    [[table_labels]] = rows(store, "MATCH (d {urn: $u}) RETURN labels(d)", u=orders)
    assert "Table" in table_labels


def test_recorded_spark_agent_events(store: GraphStore, tmp_path: Path) -> None:
    run, report = harvest_openlineage(store, DATA / "spark_agent.jsonl")

    assert (report.complete, report.failed_runs, report.skipped_not_complete) == (1, 1, 1)
    assert run.status == "success" and run.counts["runs_failed"] == 1
    # s3a:// meets the S3 listing's s3://, and the partition folds into its dataset.
    assert flows(store) == {(ORDERS, DAILY), (CUSTOMERS, DAILY)}
    assert feeds(store) == {
        (f"{ORDERS}#ts", f"{DAILY}#order_day"),
        (f"{ORDERS}#amount", f"{DAILY}#total"),
        (f"{CUSTOMERS}#region", f"{DAILY}#region"),
    }
    [[runs, at]] = rows(store, "MATCH (t:Transformation {urn: $u}) RETURN t.runs, t.last_run_at",
                        u=JOB)  # fmt: skip
    assert runs == 1  # START repeats the run's datasets; only COMPLETE counts
    assert at == int(datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC).timestamp() * 1000)
    [[alias]] = rows(store, "MATCH (d:Dataset {urn: $u}) RETURN d.ol_symlinks", u=DAILY)
    assert alias == "sales.orders_daily"
    assert report.problems == [] and run.counts["facets_ignored"] > 0  # dataSource, ...


def test_bad_input_is_skipped_and_reported_by_file_and_line(
    store: GraphStore, tmp_path: Path
) -> None:
    path = DATA / "bad_input.jsonl"
    run, report = harvest_openlineage(store, path)

    assert run.status == "partial"
    assert [p.split(": ", 1)[0] for p in report.problems] == [
        f"{path}:2", f"{path}:3", f"{path}:4 output 'warehouse/sales.db/orders_daily'"
    ]  # fmt: skip
    assert "malformed JSON" in report.problems[0]
    assert "no 'runId'" in report.problems[1]
    assert "facet columnLineage skipped" in report.problems[2]
    # Line 1 (with an unknown facet) and line 4 (without its broken facet) are in the graph.
    assert report.complete == 2
    assert (ORDERS, DAILY) in flows(store)
    [[runs]] = rows(store, "MATCH (t:Transformation {urn: $u}) RETURN t.runs", u=JOB)
    assert runs == 2


def test_the_command_warns_and_exits_by_strictness(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["--data-dir", str(tmp_path / "g"), "harvest", "openlineage"]
    result = runner.invoke(cli, [*args, str(DATA / "bad_input.jsonl")])
    assert result.exit_code == 0, result.output
    assert f"warning: {DATA / 'bad_input.jsonl'}:2: malformed JSON" in result.output
    assert "2 complete" in result.output and "partial" in result.output

    strict = runner.invoke(cli, [*args, "--strict", "--full", str(DATA / "bad_input.jsonl")])
    assert strict.exit_code == 5
    assert "error: 3 events or facets were skipped (--strict)" in strict.output

    missing = runner.invoke(cli, [*args, str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_a_second_harvest_reads_only_changed_files(store: GraphStore, tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    shutil.copy(DATA / "spark_agent.jsonl", events / "a.jsonl")
    _, first = harvest_openlineage(store, events)
    _, second = harvest_openlineage(store, events)
    assert (first.files, second.files) == (1, 1)  # same mtime as the watermark: read again

    old = (events / "a.jsonl").stat().st_mtime - 3600
    import os

    os.utime(events / "a.jsonl", (old, old))
    shutil.copy(DATA / "spark_agent.jsonl", events / "b.jsonl")
    _, third = harvest_openlineage(store, events)
    assert third.files == 1
    _, full = harvest_openlineage(store, events, full=True)
    assert full.files == 2


def test_a_pretty_printed_single_event_file(tmp_path: Path) -> None:
    event = json.loads((DATA / "spark_agent.jsonl").read_text().splitlines()[1])
    path = tmp_path / "ol-240102T030405.678-daily_orders-COMPLETE.json"
    path.write_text(json.dumps(event, indent=2))
    report = OpenLineageReport()
    [located] = list(read_events(path, report))
    assert located.event["eventType"] == "COMPLETE" and report.problems == []

    path.write_text(json.dumps(event, indent=2)[:-40])
    assert list(read_events(path, report)) == []
    assert report.problems and report.problems[0].startswith(f"{path}:")


def test_json_lines_keep_unicode_line_separators_inside_strings(tmp_path: Path) -> None:
    """U+2028/U+2029 may stand unescaped in JSON strings; they must not split a line."""
    lines = (DATA / "spark_agent.jsonl").read_text().splitlines()
    event = json.loads(lines[1])
    event["job"]["name"] = "daily\u2028orders\u2029v2"
    path = tmp_path / "events.jsonl"
    path.write_text(lines[0] + "\n" + json.dumps(event, ensure_ascii=False) + "\r\n" + "{oops\n")
    report = OpenLineageReport()
    located = list(read_events(path, report))
    assert [x.where for x in located] == [f"{path}:1", f"{path}:2"]
    assert located[1].event["job"]["name"] == "daily\u2028orders\u2029v2"
    assert report.problems == [
        f"{path}:3: malformed JSON: Expecting property name enclosed in double quotes"
    ]


def test_fold_patterns_apply_to_openlineage_names(store: GraphStore, tmp_path: Path) -> None:
    event = json.loads((DATA / "spark_agent.jsonl").read_text().splitlines()[1])
    event["inputs"] = [{"namespace": "s3://logs", "name": "app/2024/01/02"}]
    event["outputs"] = [{"namespace": "s3://logs", "name": "daily"}]
    (tmp_path / "e.jsonl").write_text(json.dumps(event) + "\n")
    harvest_openlineage(store, tmp_path / "e.jsonl", FoldRules((r"\d{4}/\d{2}/\d{2}",)))
    assert flows(store) == {("s3://logs/app", "s3://logs/daily")}


def small_event(job: str, source: str, target: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE", "eventTime": "2024-05-01T00:00:00Z",
        "run": {"runId": f"run-{job}"}, "job": {"namespace": "ns", "name": job},
        "inputs": [{"namespace": "s3://lake", "name": source}],
        "outputs": [{"namespace": "s3://lake", "name": target}],
    }  # fmt: skip


def test_no_bad_line_or_file_stops_the_harvest(
    store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every kind of bad line is skipped, reported as file:line and counted; every good line of
    the same file and of the other files is written; the run is partial, never failed."""
    monkeypatch.setattr("lineagegraph.jsonlines.MAX_TEXT_CHARS", 300_000)
    events = tmp_path / "events"
    events.mkdir()
    deep_facets = small_event("deep", "raw/x", "out/x")
    deep_facets["outputs"][0]["facets"] = {"custom": {"v": 0}}
    deep_line = json.dumps(deep_facets).replace('{"v": 0}', '{"v": ' * 10_000 + "0" + "}" * 10_000)
    wrong_facets = small_event("wrong", "raw/w", "out/w")
    wrong_facets["outputs"][0]["facets"] = "columnLineage"
    broken_schema = small_event("schema", "raw/s", "out/s")
    broken_schema["outputs"][0]["facets"] = {"schema": {"fields": "a,b"}}
    lines = [
        json.dumps(small_event("good1", "raw/a", "out/a")).encode(),  # 1
        b"[" * 100_000,  # 2
        deep_line.encode(),  # 3
        json.dumps(small_event("latin", "raw/\xe9", "out/b"), ensure_ascii=False).encode(
            "latin-1"
        ),  # 4
        b"42",  # 5
        b'{"foo": 1}',  # 6
        json.dumps(wrong_facets).encode(),  # 7
        json.dumps(broken_schema).encode(),  # 8: its event is kept, without the facet
        b'{"eventType": "COMPLETE", "x": "' + b"y" * 400_000 + b'"}',  # 9
        json.dumps(small_event("lone", "raw/\ud800", "out/c")).encode(),  # 10
        b'{"eventType": "COMPLETE", "n": ' + b"7" * 5000 + b"}",  # 11
        json.dumps(small_event("good2", "raw/d", "out/d")).encode(),  # 12
        json.dumps(small_event("cut", "raw/e", "out/e")).encode()[:-9],  # 13: a killed writer
    ]
    (events / "a.jsonl").write_bytes(b"\n".join(lines))
    (events / "b.jsonl").write_text(json.dumps(small_event("other", "raw/f", "out/f")) + "\n")
    (events / "c.json").write_bytes(b"[" * 100_000)  # a whole-file document
    (events / "d.json").write_bytes(b'{\n  "eventType": "COMPLETE",\n  "job": "\xff"\n}')

    for _ in range(2):  # the next run meets the same lines and does the same
        run, report = harvest_openlineage(store, events)
        a, c, d = events / "a.jsonl", events / "c.json", events / "d.json"
        assert report.problems == [
            f"{a}:2: malformed JSON: nested too deep",
            f"{a}:3: malformed JSON: nested too deep",
            f"{a}:4: not UTF-8: byte 0xe9 at column {lines[3].index(0xE9) + 1}",
            f"{a}:5: not a JSON object",
            f"{a}:6: not an OpenLineage event (eventType None)",
            f"{a}:7: outputs[0]: facets is not an object",
            f"{a}:8 outputs[0]: facet schema skipped: fields must be [{{name, type}}]",
            f"{a}:9: line longer than 300,000 characters: skipped unread",
            f"{a}:10: malformed JSON: a \\u escape names a lone surrogate",
            f"{a}:11: malformed JSON: a number too long to read",
            f"{a}:13: malformed JSON: Unterminated string starting at",
            f"{c}:1: malformed JSON: nested too deep",
            f"{d}:3: not UTF-8: byte 0xff at column 11",
        ]
        assert run.status == "partial" and run.counts["events_skipped"] == 12
        assert report.complete == 4 and report.files == 4
        assert flows(store) == {
            (f"{LAKE}/raw/{x}", f"{LAKE}/out/{x}") for x in ("a", "s", "d", "f")
        }
        [[status, skipped]] = rows(
            store, "MATCH (r:HarvestRun {id: $id}) RETURN r.status, r.count_events_skipped",
            id=run.id,
        )  # fmt: skip
        assert (status, skipped) == ("partial", 12)


def test_the_command_goes_on_past_bad_lines(tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    good = json.dumps(small_event("good", "raw/a", "out/a")).encode()
    (events / "a.jsonl").write_bytes(good + b"\n" + b"[" * 100_000 + b"\n\xff\xfe\n")
    args = ["--data-dir", str(tmp_path / "g"), "harvest", "openlineage", str(events)]
    for _ in range(2):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert f"warning: {events / 'a.jsonl'}:2: malformed JSON: nested too deep" in result.output
        assert f"warning: {events / 'a.jsonl'}:3: not UTF-8: byte 0xff at column 1" in result.output
        assert "1 complete" in result.output and "partial" in result.output


def test_bare_namespaces_make_urns_and_a_namespace_that_cannot_is_skipped(
    store: GraphStore, tmp_path: Path
) -> None:
    """OpenLineage's BigQuery namespace is the bare word `bigquery`, and Marquez's examples use
    plain names such as `my-namespace`: both make urns (an empty authority); a namespace with a
    space makes none, and only its event is skipped."""
    bigquery = small_event("bq", "raw/a", "out/a")
    bigquery["inputs"][0] = {"namespace": "bigquery", "name": "proj.sales.orders"}
    plain = small_event("plain", "raw/b", "out/b")
    plain["inputs"][0] = {"namespace": "my-namespace", "name": "raw/orders"}
    spaced = small_event("spaced", "raw/c", "out/c")
    spaced["inputs"][0] = {"namespace": "my namespace", "name": "raw/orders"}
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in (bigquery, plain, spaced)))
    run, report = harvest_openlineage(store, events)
    assert run.status == "partial"
    assert len(report.problems) == 1 and f"{events}:3" in report.problems[0]
    assert "'my namespace'" in report.problems[0]
    assert flows(store) == {
        ("bigquery:///proj.sales.orders", f"{LAKE}/out/a"),
        ("my-namespace:///raw/orders", f"{LAKE}/out/b"),
    }
    [[system]] = rows(
        store, "MATCH (a:Asset {urn: 'bigquery:///proj.sales.orders'}) RETURN a.system"
    )
    assert system == "bigquery"
