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
    lineage = cl.ColumnLineageDatasetFacet(
        fields={
            "customer": cl.Fields(
                inputFields=[
                    cl.InputField("postgres://db:5432", "shop.public.orders", "customer_id")
                ]
            ),
        }
    )
    symlinks = sl.SymlinksDatasetFacet(
        identifiers=[sl.Identifier("file", "mart.customers", "TABLE")]
    )
    for day, run_id in (
        (1, "0191d9a4-0000-7000-8000-000000000001"),
        (2, "0191d9a4-0000-7000-8000-000000000002"),
    ):
        for state in (RunState.START, RunState.COMPLETE):
            client.emit(
                RunEvent(
                    eventType=state,
                    eventTime=datetime(2024, 3, day, 6, 0, tzinfo=UTC).isoformat(),
                    run=Run(runId=run_id),
                    job=Job(namespace="airflow", name="mart.customers"),
                    producer="https://github.com/lineagegraph/tests",
                    inputs=[InputDataset("postgres://db:5432", "shop.public.orders")],
                    outputs=[
                        OutputDataset(
                            "file",
                            "/data/mart/customers/dt=2024-03-0" + str(day),
                            facets={"columnLineage": lineage, "symlinks": symlinks},
                        )
                    ],
                )
            )


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
        store,
        "MATCH (t:Transformation {urn: 'openlineage://airflow/mart.customers'}) "
        "RETURN t.runs, t.last_run_id",
    )
    assert (runs, last_run_id) == (2, "0191d9a4-0000-7000-8000-000000000002")
    [[alias, labels]] = rows(
        store, "MATCH (d {urn: $u}) RETURN d.ol_symlinks, labels(d)", u=customers
    )
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
    [[runs, at]] = rows(
        store, "MATCH (t:Transformation {urn: $u}) RETURN t.runs, t.last_run_at", u=JOB
    )
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
            store,
            "MATCH (r:HarvestRun {id: $id}) RETURN r.status, r.count_events_skipped",
            id=run.id,
        )
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


# --- hostile events, links out of a directory, events the store refuses ----------------------


def wide_event(job: str, inputs: int, outputs: int) -> dict[str, Any]:
    """One run reading `inputs` datasets and writing `outputs` (each named twice, as a
    producer may), the last output with column lineage from the first input."""
    event = small_event(job, "raw/0", "out/0")
    event["inputs"] = [{"namespace": LAKE, "name": f"raw/{i % inputs}"} for i in range(2 * inputs)]
    event["outputs"] = [{"namespace": LAKE, "name": f"out/{i}"} for i in range(outputs)] * 2
    event["outputs"].append({"namespace": LAKE, "name": f"out/{outputs - 1}", "facets": {
        "columnLineage": {"fields": {"id": {"inputFields": [
            {"namespace": LAKE, "name": "raw/0", "field": "id"}]}}}}})  # fmt: skip
    return event


def test_an_event_is_capped_by_its_flows_and_its_datasets(
    store: GraphStore, tmp_path: Path
) -> None:
    """Over max_event_flows an event keeps its datasets, the job's reads and writes and its
    column lineage, without FLOWS_TO, and says so; over max_event_datasets it is refused.
    Repeated datasets count once, and each output keeps its own facets."""
    from lineagegraph.settings import OpenLineageSettings

    path = tmp_path / "events.jsonl"
    events = [wide_event("fits", 3, 2), wide_event("wide", 5, 3), wide_event("huge", 6, 5)]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    limits = OpenLineageSettings(max_event_flows=10, max_event_datasets=22)
    run, report = harvest_openlineage(store, path, limits=limits)
    assert report.problems == [
        f"{path}:2: 5 inputs x 3 outputs would be 15 FLOWS_TO edges, over [openlineage] "
        "max_event_flows (10): kept its datasets and the job's reads and writes only",
        f"{path}:3: lists 23 datasets, over [openlineage] max_event_datasets (22): refused",
    ]
    assert report.complete == 2 and run.counts["events_skipped"] == 1
    assert flows(store) == {
        (f"{LAKE}/raw/{i}", f"{LAKE}/out/{o}") for i in range(3) for o in range(2)
    }
    jobs = rows(
        store,
        "MATCH (t:Transformation)-[r:READS_FROM|WRITES_TO]->(a) "
        "RETURN t.name, type(r), count(a) ORDER BY t.name, type(r)",
    )
    assert jobs == [
        ["fits", "READS_FROM", 3],
        ["fits", "WRITES_TO", 2],
        ["wide", "READS_FROM", 5],
        ["wide", "WRITES_TO", 3],
    ]
    assert feeds(store) == {(f"{LAKE}/raw/0#id", f"{LAKE}/out/{o}#id") for o in (1, 2)}


def test_the_caps_are_settings_and_serve_refuses_an_event_over_them(tmp_path: Path) -> None:
    from lineagegraph.serve.events import BadRequest, EventChecker
    from lineagegraph.settings import OpenLineageSettings

    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(wide_event("wide", 4, 3)) + "\n")
    config = tmp_path / "lineagegraph.toml"
    config.write_text(
        f'[graph]\ndata_dir = "{tmp_path / "g"}"\n[openlineage]\nmax_event_flows = 11\n'
    )
    result = CliRunner().invoke(cli, ["--config", str(config), "harvest", "openlineage", str(path)])
    assert result.exit_code == 0, result.output
    assert "12 FLOWS_TO edges, over [openlineage] max_event_flows (11)" in result.output

    checker = EventChecker(FoldRules(), OpenLineageSettings(max_event_datasets=15))
    assert len(checker.events(json.dumps(wide_event("ok", 4, 3)))) == 1  # 15 datasets
    with pytest.raises(BadRequest) as refused:
        checker.events(json.dumps([small_event("a", "x", "y"), wide_event("wide", 5, 3)]))
    assert refused.value.status == 413
    assert str(refused.value) == (
        "event [1]: lists 17 datasets, over [openlineage] max_event_datasets (15): refused"
    )


def test_a_name_the_store_could_not_find_again_is_refused_not_dropped(
    store: GraphStore, tmp_path: Path
) -> None:
    """A key over the store's limit was stored but never found again (its edges dropped in
    silence): the event naming it is skipped and named; the events around it are written."""
    path = tmp_path / "events.jsonl"
    long_column = small_event("c", "raw/c", "out/c")
    long_column["outputs"][0]["facets"] = {
        "schema": {"fields": [{"name": "y" * 5000, "type": "string"}]}
    }
    events = [
        small_event("a", "raw/a", "out/a"),
        small_event("l", "x" * 5000, "out/l"),
        small_event("j", "raw/j", "out/j"),
        long_column,
    ]
    events[2]["job"]["name"] = "j" * 5000
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    _, report = harvest_openlineage(store, path)
    assert len(report.problems) == 3, report.problems
    for line, problem in zip((2, 3, 4), report.problems, strict=True):
        assert problem.startswith(f"{path}:{line}: ") and "name too long: " in problem
        assert "over the store's 4,096-byte limit for a key" in problem
    assert flows(store) == {(f"{LAKE}/raw/a", f"{LAKE}/out/a")}


def test_links_out_of_the_directory_are_read_only_when_asked(
    store: GraphStore, tmp_path: Path
) -> None:
    from lineagegraph.settings import OpenLineageSettings

    events, elsewhere = tmp_path / "events", tmp_path / "elsewhere"
    events.mkdir(), elsewhere.mkdir()
    (events / "a.jsonl").write_text(json.dumps(small_event("a", "raw/a", "out/a")) + "\n")
    (elsewhere / "secret.jsonl").write_text(json.dumps(small_event("s", "raw/s", "out/s")) + "\n")
    (events / "inside.jsonl").symlink_to(events / "a.jsonl")  # a link within: read
    (events / "out.jsonl").symlink_to(elsewhere / "secret.jsonl")
    run, report = harvest_openlineage(store, events)
    assert report.problems == [
        f"{events / 'out.jsonl'}: a link to {str(elsewhere / 'secret.jsonl')!r}, outside "
        f"{str(events)!r}: skipped ([openlineage] follow_links reads it)"
    ]
    assert report.files == 2 and run.counts["events_skipped"] == 1
    assert flows(store) == {(f"{LAKE}/raw/a", f"{LAKE}/out/a")}
    _, report = harvest_openlineage(
        store, events, full=True, limits=OpenLineageSettings(follow_links=True)
    )
    assert report.problems == [] and report.files == 3
    assert (f"{LAKE}/raw/s", f"{LAKE}/out/s") in flows(store)


def test_an_event_the_store_refuses_keeps_no_other_event_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window holding it is written again in halves down to the event at fault; it is
    reported by file and line, counted on the run, and the command exits 5 (a partial
    harvest); every other event of its window and of the others is written."""
    from lineagegraph.errors import QueryError
    from lineagegraph.graph.falkordb import FalkorDBStore
    from lineagegraph.graph.store import open_store
    from lineagegraph.settings import GraphSettings

    # The embedded store now takes every string (NUL included), so the refusal is provoked: a
    # write statement naming `poison` fails as a statement the server rejects would.
    run = FalkorDBStore._run

    def refusing(self: FalkorDBStore, command: str, query: str, **kw: Any) -> Any:
        if "poison" in query and command == "GRAPH.QUERY":
            raise QueryError("query failed: the server refused a value")
        return run(self, command, query, **kw)

    monkeypatch.setattr(FalkorDBStore, "_run", refusing)
    monkeypatch.setattr("lineagegraph.harvest.openlineage.WINDOW_EVENTS", 8)
    path = tmp_path / "events.jsonl"
    bad = {2, 13}
    names = [f"raw/{i}" + ("poison" if i in bad else "") for i in range(1, 21)]
    path.write_text(
        "".join(
            json.dumps(small_event(f"j{i}", n, f"out/{i}")) + "\n" for i, n in enumerate(names, 1)
        )
    )
    args = ["--data-dir", str(tmp_path / "g"), "harvest", "openlineage", str(path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 5, result.output
    for line in bad:
        assert f"warning: {path}:{line}: not written, the store refused it: " in result.output
    assert f"error: 2 events not written (the store refused them); first: {path}:2:" in (
        result.output
    )
    with open_store(GraphSettings(data_dir=tmp_path / "g")) as store:
        assert flows(store) == {
            (f"{LAKE}/raw/{i}", f"{LAKE}/out/{i}") for i in range(1, 21) if i not in bad
        }
        [[status, refused]] = rows(
            store, "MATCH (r:HarvestRun) RETURN r.status, r.count_events_not_written"
        )
    assert (status, refused) == ("partial", 2)


def test_one_call_says_whether_serve_takes_an_event() -> None:
    """EventMapper.sighting: an event's values, None for one that draws nothing, or the reason
    it is refused; the facet problems it meets are not kept (ingestion reports them)."""
    from lineagegraph.harvest.openlineage import EventError, EventMapper, EventTooLarge
    from lineagegraph.settings import OpenLineageSettings

    problems: list[str] = []
    mapper = EventMapper(FoldRules(), problems, OpenLineageSettings(max_event_datasets=2))
    complete = small_event("copy", "raw/a", "out/b")
    complete["outputs"][0]["facets"] = {"schema": {"fields": "not a list"}}
    taken = mapper.sighting(complete)
    assert taken is not None and taken.run_id == "run-copy"
    assert problems == []
    job_event = {"eventTime": "2024-05-01T00:00:00Z", "job": {"namespace": "ns", "name": "j"}}
    assert mapper.sighting(job_event) is None
    start = {**small_event("copy", "raw/a", "out/b"), "eventType": "START", "run": {}}
    with pytest.raises(EventError, match="run has no 'runId'"):
        mapper.sighting(start)
    with pytest.raises(EventError, match="is not a JSON object"):
        mapper.sighting([complete])
    with pytest.raises(EventTooLarge):
        mapper.sighting(wide_event("wide", 2, 1))
