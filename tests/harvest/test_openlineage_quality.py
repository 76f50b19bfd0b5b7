"""OpenLineage dataQualityAssertions facets into :Check nodes, from events written by
openlineage-python's own client and file transport (what Great Expectations and dbt's
OpenLineage integration emit)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lineagegraph.cli import cli
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.questions.quality import asset_quality
from lineagegraph.settings import GraphSettings

ORDERS = "snowflake://acme/RAW.PUBLIC.ORDERS"
SALES = "snowflake://acme/MARTS.PUBLIC.SALES"


def client(path: Path) -> Any:
    """openlineage-python's real client, writing JSON lines with its file transport."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.file import FileConfig, FileTransport

    return OpenLineageClient(
        transport=FileTransport(FileConfig(log_file_path=str(path), append=True))
    )


def emit_run(path: Path, job: str, day: int, inputs: list[Any], outputs: list[Any]) -> None:
    """A START and a COMPLETE event of one run of `job` on 2024-03-`day`."""
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState

    emitter = client(path)
    for state in (RunState.START, RunState.COMPLETE):
        emitter.emit(
            RunEvent(
                eventType=state,
                eventTime=datetime(2024, 3, day, 6, 0, tzinfo=UTC).isoformat(),
                run=Run(runId=f"0191d9a4-0000-7000-8000-00000000000{day}"),
                job=Job(namespace="etl", name=job),
                producer="https://github.com/lineagegraph/tests",
                inputs=inputs,
                outputs=outputs,
            )
        )


def emit_validations(path: Path, runs: list[tuple[int, dict[str, bool]]]) -> None:
    """One validation job run per (day, {assertion: success}): the assertions on
    RAW.PUBLIC.ORDERS (ID not_null and unique, a row count on the table, and a warn-only
    freshness check), in the input facet where the spec puts them."""
    from openlineage.client.event_v2 import InputDataset
    from openlineage.client.facet_v2 import data_quality_assertions_dataset as dq

    for day, success in runs:
        facet = dq.DataQualityAssertionsDatasetFacet(assertions=[
            dq.Assertion("not_null", success["not_null"], column="ID"),
            dq.Assertion("unique", success["unique"], column="ID", severity="error",
                         name="orders_id_unique"),
            dq.Assertion("row_count", success["row_count"]),
            dq.Assertion("freshness", success["freshness"], severity="warn"),
        ])  # fmt: skip
        dataset = InputDataset(
            "snowflake://acme", "RAW.PUBLIC.ORDERS", inputFacets={"dataQualityAssertions": facet}
        )
        emit_run(path, "orders_suite", day, [dataset], [])


def emit_pipeline(path: Path) -> None:
    """RAW.PUBLIC.ORDERS -> STG.PUBLIC.ORDERS -> MARTS.PUBLIC.SALES, and an unrelated table."""
    from openlineage.client.event_v2 import InputDataset, OutputDataset

    for job, src, dst in (
        ("stage_orders", "RAW.PUBLIC.ORDERS", "STG.PUBLIC.ORDERS"),
        ("sales", "STG.PUBLIC.ORDERS", "MARTS.PUBLIC.SALES"),
        ("other", "RAW.PUBLIC.OTHER", "MARTS.PUBLIC.OTHER"),
    ):
        emit_run(
            path,
            job,
            1,
            [InputDataset("snowflake://acme", src)],
            [OutputDataset("snowflake://acme", dst)],
        )


def checks(store: GraphStore) -> dict[str, tuple[str, str, str, int]]:
    rows = store.execute(
        "MATCH (c:Check)-[:CHECKS]->(t) RETURN c.urn, c.name, c.status, t.urn, c.at, c.run_id",
        write=False,
    ).rows
    return {urn: (name, status, target, run[-1:]) for urn, name, status, target, _, run in rows}


ALL_PASS = {"not_null": True, "unique": True, "row_count": True, "freshness": True}


def test_assertions_become_checks_on_the_dataset_and_its_columns(
    store: GraphStore, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    emit_validations(events, [(1, ALL_PASS), (2, ALL_PASS | {"unique": False, "freshness": False})])
    run, report = harvest_openlineage(store, events)
    assert report.problems == [] and run.error is None
    assert checks(store) == {
        f"{ORDERS}#ID::not_null": ("not_null", "pass", f"{ORDERS}#ID", "2"),
        f"{ORDERS}#ID::orders_id_unique": ("orders_id_unique", "fail", f"{ORDERS}#ID", "2"),
        f"{ORDERS}::row_count": ("row_count", "pass", ORDERS, "2"),
        f"{ORDERS}::freshness": ("freshness", "warn", ORDERS, "2"),
    }
    assert run.counts["merge_checks"] == 4  # the window kept each check's latest result
    assert asset_quality(store, [ORDERS]) == {ORDERS: "fail"}


def test_an_older_validation_read_later_changes_nothing(store: GraphStore, tmp_path: Path) -> None:
    newer, older = tmp_path / "newer.jsonl", tmp_path / "older.jsonl"
    emit_validations(newer, [(5, ALL_PASS)])
    emit_validations(older, [(4, ALL_PASS | {"not_null": False})])
    harvest_openlineage(store, newer)
    harvest_openlineage(store, older)
    assert {status for _, status, _, _ in checks(store).values()} == {"pass"}
    assert {run for _, _, _, run in checks(store).values()} == {"5"}


def test_a_broken_facet_is_reported_and_the_event_kept(store: GraphStore, tmp_path: Path) -> None:
    event: dict[str, Any] = {
        "eventType": "COMPLETE", "eventTime": "2024-03-01T06:00:00Z",
        "run": {"runId": "r1"}, "job": {"namespace": "ge", "name": "suite"},
        "inputs": [{"namespace": "snowflake://acme", "name": "RAW.PUBLIC.ORDERS",
                    "facets": {"dataQualityAssertions": {"assertions": [{"success": "yes"}]}}}],
        "outputs": [{"namespace": "snowflake://acme", "name": "MARTS.PUBLIC.SALES"}],
    }  # fmt: skip
    legacy = json.loads(json.dumps(event))  # the facet among `facets`, as older producers do
    legacy["inputs"][0]["facets"]["dataQualityAssertions"] = {
        "assertions": [{"assertion": "not_null", "success": False, "column": "ID"}]
    }
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(event) + "\n" + json.dumps(legacy) + "\n")
    _, report = harvest_openlineage(store, path)
    assert report.problems == [
        f"{path}:1 inputs[0]: facet dataQualityAssertions skipped: "
        "assertions must be [{assertion, success, column?, severity?, name?}]"
    ]
    assert report.complete == 2
    assert checks(store) == {f"{ORDERS}#ID::not_null": ("not_null", "fail", f"{ORDERS}#ID", "1")}
    flows = store.execute("MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn", write=False).rows
    assert flows == [[ORDERS, SALES]]


# --- the gate and the answers that show quality ---------------------------------------------


class Platform:
    """The pipeline's events in a directory, harvested by the command into its own store."""

    def __init__(self, root: Path) -> None:
        self.events, self.data = root / "events", root / "store"
        self.events.mkdir()
        emit_pipeline(self.events / "etl.jsonl")
        self.runner = CliRunner()

    def invoke(self, *args: str) -> Any:
        return self.runner.invoke(cli, ["--data-dir", str(self.data), *args])

    def harvest(self) -> None:
        result = self.invoke("harvest", "openlineage", str(self.events))
        assert result.exit_code == 0, result.output


def test_check_gates_a_job_on_failing_checks_upstream(tmp_path: Path) -> None:
    platform = Platform(tmp_path)
    emit_validations(platform.events / "ge.jsonl", [(1, ALL_PASS | {"unique": False})])
    platform.harvest()
    invoke = platform.invoke
    failed = invoke("check", SALES)
    assert failed.exit_code == 6, failed.output
    lines = failed.stdout.splitlines()
    assert lines[0] == (
        f"FAILED: 1 failing check(s) on 1 asset(s) among {SALES} or the 2 asset(s) upstream of it"
    )
    assert lines[1].split() == ["distance", "status", "check", "system", "failures", "at", "tested"]
    assert lines[3].split() == [
        "2",
        "fail",
        "orders_id_unique",
        "openlineage",
        "2024-03-01",
        "06:00:00Z",
        f"{ORDERS}#ID",
    ]
    assert failed.stderr == (
        f"error: 1 failing check(s) at or upstream of {SALES}: "
        f"orders_id_unique (fail) on {ORDERS}#ID\n"
    )
    as_json = json.loads(invoke("check", SALES, "--format", "json").stdout)
    assert as_json["passed"] is False and as_json["assets"] == 3
    assert [g["check"]["urn"] for g in as_json["failing"]] == [f"{ORDERS}#ID::orders_id_unique"]
    other = invoke("check", "snowflake://acme/MARTS.PUBLIC.OTHER")
    assert other.exit_code == 0
    assert other.stdout == (
        "passed: no check results on snowflake://acme/MARTS.PUBLIC.OTHER "
        "or the 1 asset(s) upstream of it\n"
    )

    emit_validations(platform.events / "ge-2.jsonl", [(2, ALL_PASS | {"freshness": False})])
    platform.harvest()
    passed = invoke("check", SALES)
    assert passed.exit_code == 0, passed.output
    assert passed.stdout.splitlines()[0] == (
        f"passed: no failing check on {SALES} or the 2 asset(s) upstream of it "
        "(4 check(s), 1 warning(s))"
    )


def test_check_names_an_unknown_asset_as_other_commands_do(tmp_path: Path) -> None:
    platform = Platform(tmp_path)
    platform.harvest()
    answers = [
        platform.invoke(command, "snowflake://acme/NO.SUCH") for command in ("check", "upstream")
    ]
    assert [a.exit_code for a in answers] == [7, 7]  # no such asset
    assert answers[0].stderr == answers[1].stderr
    assert answers[0].stderr.startswith("error: no asset matches 'snowflake://acme/NO.SUCH'")


def test_upstream_status_and_pictures_show_quality(tmp_path: Path) -> None:
    platform = Platform(tmp_path)
    emit_validations(platform.events / "ge.jsonl", [(1, ALL_PASS | {"row_count": False})])
    platform.harvest()

    def invoke(*args: str) -> Any:
        result = platform.invoke(*args)
        assert result.exit_code == 0, result.output
        return result.stdout

    up = json.loads(invoke("upstream", SALES, "--format", "json"))
    assert up["start"]["quality"] == "unknown"
    assert {a["urn"]: a["quality"] for a in up["assets"]} == {
        ORDERS: "fail",
        "snowflake://acme/STG.PUBLIC.ORDERS": "unknown",
    }
    table = invoke("upstream", SALES).splitlines()
    assert table[1].split() == ["distance", "system", "kind", "quality", "urn", "read_by"]
    assert {line.split()[4]: line.split()[3] for line in table[3:-1]} == {
        ORDERS: "fail",
        "snowflake://acme/STG.PUBLIC.ORDERS": "unknown",
    }
    assert invoke("impact", ORDERS).startswith(f"impact of {ORDERS} (quality fail): 2 downstream")
    impact = json.loads(invoke("impact", ORDERS, "--format", "json"))
    assert impact["start"]["quality"] == "fail"
    assert {a["quality"] for a in impact["assets"]} == {"unknown"}
    mermaid = invoke("upstream", SALES, "--format", "mermaid")
    assert "  classDef q_fail fill:#ef4444,color:#111,stroke:#333" in mermaid
    assert "  classDef q_unknown fill:#d1d5db,color:#111,stroke:#333" in mermaid
    dot = invoke("upstream", SALES, "--format", "dot")
    assert dot.count('fillcolor="#ef4444"') == 1 and dot.count('fillcolor="#d1d5db"') == 2
    page = invoke("upstream", SALES, "--format", "html")
    assert page.count('fill="#ef4444"') == 1 and "</i>fail</span>" in page
    path = json.loads(invoke("path", ORDERS, SALES, "--format", "json"))
    assert [a["quality"] for a in path["paths"][0]["assets"]] == ["fail", "unknown", "unknown"]
    status = json.loads(invoke("status", "--format", "json"))
    assert status["failing_assets"] == 1
    assert status["quality"] == {"unknown": 0, "pass": 0, "warn": 0, "error": 0, "fail": 1}
    assert "data quality: 1 failing asset(s) (fail or error)" in invoke("status")


def test_one_window_keeps_what_the_graph_would(store: GraphStore, tmp_path: Path) -> None:
    """Two assertions with one name on one column at one time are one check, the worse result
    kept, as cypher/merge_checks.cypher keeps it across harvests; a replayed run adds nothing."""
    events = tmp_path / "events.jsonl"
    twice = {"assertions": [
        {"assertion": "not_null", "success": False, "column": "ID", "severity": "warn"},
        {"assertion": "not_null", "success": False, "column": "ID"},
        {"assertion": "not_null", "success": True, "column": "ID"},
    ]}  # fmt: skip
    event = {
        "eventType": "COMPLETE", "eventTime": "2024-03-01T06:00:00Z",
        "run": {"runId": "r1"}, "job": {"namespace": "ge", "name": "suite"},
        "inputs": [{"namespace": "snowflake://acme", "name": "RAW.PUBLIC.ORDERS",
                    "inputFacets": {"dataQualityAssertions": twice}}],
    }  # fmt: skip
    events.write_text((json.dumps(event) + "\n") * 2)
    run, _ = harvest_openlineage(store, events)
    assert checks(store) == {f"{ORDERS}#ID::not_null": ("not_null", "fail", f"{ORDERS}#ID", "1")}
    assert run.counts["merge_checks"] == 1


def emit_dbt_test_run(path: Path, day: int, unique: bool) -> None:
    """One run of a dbt test as dbt-ol (openlineage-dbt 1.54) sends it: the assertions on its
    START event and on the event that ends it, which is FAIL when the test failed."""
    from openlineage.client.event_v2 import InputDataset, Job, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import data_quality_assertions_dataset as dq

    facet = dq.DataQualityAssertionsDatasetFacet(
        assertions=[
            dq.Assertion("unique", unique, column="ID", name="orders_id_unique"),
        ]
    )
    dataset = InputDataset(
        "snowflake://acme", "RAW.PUBLIC.ORDERS", inputFacets={"dataQualityAssertions": facet}
    )
    end = RunState.COMPLETE if unique else RunState.FAIL
    emitter = client(path)
    for minute, state in ((0, RunState.START), (1, end)):
        emitter.emit(
            RunEvent(
                eventType=state,
                eventTime=datetime(2024, 3, day, 6, minute, tzinfo=UTC).isoformat(),
                run=Run(runId=f"0191d9a4-0000-7000-8000-00000000000{day}"),
                job=Job(namespace="dbt", name="test.shop.unique_orders_id"),
                producer="https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
                inputs=[dataset],
            )
        )


def test_a_failing_test_on_start_and_fail_events_fails_its_check(tmp_path: Path) -> None:
    """Assertions come from every event type, the newest by event time kept whatever the
    order read: a later failing run fails the check, an older passing one read after it
    changes nothing, and `check` blocks what is downstream."""
    platform = Platform(tmp_path)
    emit_dbt_test_run(platform.events / "a-failed.jsonl", 2, unique=False)
    emit_dbt_test_run(platform.events / "b-passed.jsonl", 1, unique=True)
    platform.harvest()
    failed = platform.invoke("check", SALES)
    assert failed.exit_code == 6, failed.output
    assert failed.stderr == (
        f"error: 1 failing check(s) at or upstream of {SALES}: "
        f"orders_id_unique (fail) on {ORDERS}#ID\n"
    )
    with open_store(GraphSettings(data_dir=platform.data)) as store:
        assert checks(store) == {
            f"{ORDERS}#ID::orders_id_unique": ("orders_id_unique", "fail", f"{ORDERS}#ID", "2")
        }
        [[failed_runs]] = store.execute(
            "MATCH (r:HarvestRun) RETURN r.count_runs_failed", write=False
        ).rows
    assert failed_runs == 1
