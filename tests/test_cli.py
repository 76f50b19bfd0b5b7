"""The CLI as a user meets it: help, exit codes, one-line errors, read-only queries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from lineagegraph import __version__
from lineagegraph.cli import cli
from lineagegraph.errors import WRITE_REFUSED
from lineagegraph.settings import load_settings, redact, secret_values

SECRET = "s3cr3t-pa55word"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    for name in list(__import__("os").environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    runner = CliRunner()

    def invoke(*args: str, **env: str):  # type: ignore[no-untyped-def]
        return runner.invoke(cli, ["--data-dir", str(tmp_path / "store"), *args], env=env)

    return invoke


@pytest.fixture
def ready(run):  # type: ignore[no-untyped-def]
    """`run`, on a store that exists (read commands refuse a missing one)."""
    created = run("init")
    assert created.exit_code == 0, created.output
    return run


def all_commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, cmd in group.commands.items():
        found.append((f"{prefix}{name}", cmd))
        if isinstance(cmd, click.Group):
            found += all_commands(cmd, f"{prefix}{name} ")
    return found


def test_every_command_explains_itself() -> None:
    missing = [name for name, cmd in all_commands(cli) if not (cmd.help or "").strip()]
    assert missing == [], f"commands without help text: {missing}"
    for name, cmd in all_commands(cli):
        for param in cmd.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert param.help, f"option {param.opts} of `{name}` has no help text"


def test_version(run) -> None:  # type: ignore[no-untyped-def]
    result = run("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_init_status_and_query_roundtrip(run) -> None:  # type: ignore[no-untyped-def]
    assert run("init").exit_code == 0
    status = run("status")
    assert status.exit_code == 0 and "no assets yet" in status.output
    made = run(
        "query",
        "--write",
        "CREATE (:Asset:Table {urn: $u, system: 'snowflake'})",
        "-p",
        'u="snowflake://a/D.S.T"',
    )
    assert made.exit_code == 0, made.output
    status = run("status")
    assert "Table" in status.output and "snowflake" in status.output
    out = run(
        "query",
        "MATCH (t:Table) RETURN t.urn AS urn, 1 + $n AS n",
        "-p",
        "n=41",
        "--format",
        "json",
    )
    assert json.loads(out.stdout) == [{"urn": "snowflake://a/D.S.T", "n": 42}]
    csv_out = run("query", "MATCH (t:Table) RETURN t.urn AS urn", "--format", "csv")
    assert csv_out.output.splitlines() == ["urn", "snowflake://a/D.S.T"]


def test_query_from_file_name_and_list(ready, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    q = tmp_path / "q.cypher"
    q.write_text("RETURN 'from file' AS x")
    assert "from file" in ready("query", "-f", str(q)).output
    assert "status_assets" in ready("query", "--list").output
    named = ready("query", "--name", "status_runs", "-p", "limit=5")
    assert named.exit_code == 0 and "(0 rows)" in named.output


def test_output_file(ready, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "out.md"
    result = ready("query", "RETURN 1 AS one", "--format", "markdown", "-o", str(target))
    assert result.exit_code == 0
    assert target.read_text().splitlines() == ["| one |", "|---|", "| 1 |"]


def test_writes_need_write_and_change_nothing(ready) -> None:  # type: ignore[no-untyped-def]
    result = ready("query", "CREATE (:Asset {urn: 'x'})")
    assert result.exit_code == 4
    assert result.output.strip() == f"error: {WRITE_REFUSED}"
    count = ready("query", "MATCH (n:Asset) RETURN count(n) AS n", "--format", "json")
    assert json.loads(count.stdout) == [{"n": 0}]


def test_invalid_cypher_is_one_line_without_traceback(ready) -> None:  # type: ignore[no-untyped-def]
    result = ready("query", "MATCH (n RETURN n")
    assert result.exit_code == 4
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the embedded store rejected the query")
    assert "Traceback" not in result.output


def test_debug_shows_the_traceback_and_keeps_the_exit_code(ready) -> None:  # type: ignore[no-untyped-def]
    plain = ready("query", "MATCH (n RETURN n")
    result = ready("--debug", "query", "MATCH (n RETURN n")
    assert plain.exit_code == result.exit_code == 4
    assert "Traceback" in result.output and "QueryError" in result.output
    assert result.output.strip().splitlines()[-1] == plain.output.strip()


def test_query_argument_rules(run) -> None:  # type: ignore[no-untyped-def]
    assert run("query").exit_code == 2
    bad = run("query", "RETURN 1", "-p", "novalue")
    assert bad.exit_code == 2 and "expected KEY=VALUE" in bad.output


@pytest.mark.parametrize("command", [["status"], ["query", "RETURN 1"]])
def test_reads_refuse_a_missing_store_and_create_nothing(run, tmp_path: Path, command) -> None:  # type: ignore[no-untyped-def]
    result = run(*command)
    assert result.exit_code == 3, result.output
    assert "no graph store at" in result.output and "does not exist" in result.output
    assert not (tmp_path / "store").exists()
    (tmp_path / "store").mkdir()
    empty = run(*command)
    assert empty.exit_code == 3 and "holds no store files" in empty.output
    assert list((tmp_path / "store").iterdir()) == []


def test_a_write_query_creates_the_store(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    made = run("query", "--write", "CREATE (:Asset {urn: 'u'}) RETURN 1 AS one")
    assert made.exit_code == 0, made.output
    assert run("status").exit_code == 0


def test_unreachable_neo4j_is_clear_and_keeps_secrets(run) -> None:  # type: ignore[no-untyped-def]
    result = run("--graph", "bolt://127.0.0.1:9", "status", LINEAGEGRAPH_GRAPH__PASSWORD=SECRET)
    assert result.exit_code == 3
    assert "cannot reach Neo4j at bolt://127.0.0.1:9" in result.output
    assert SECRET not in result.output


def test_bad_setting_exits_2(run) -> None:  # type: ignore[no-untyped-def]
    result = run("status", LINEAGEGRAPH_GRAPH__BATCH_SIZE="lots")
    assert result.exit_code == 2
    assert "graph.batch_size / LINEAGEGRAPH_GRAPH__BATCH_SIZE" in result.output


def test_help_never_shows_secrets(run) -> None:  # type: ignore[no-untyped-def]
    for name, _ in [("", None), *all_commands(cli)]:
        result = run(*name.split(), "--help", LINEAGEGRAPH_GRAPH__PASSWORD=SECRET)
        assert result.exit_code == 0 and SECRET not in result.output


@pytest.mark.parametrize("debug", [[], ["--debug"]])
def test_a_password_in_a_uri_is_never_printed(run, debug: list[str]) -> None:  # type: ignore[no-untyped-def]
    in_uri = run(*debug, "--graph", f"bolt://neo:{SECRET}@127.0.0.1:9", "status")
    assert in_uri.exit_code == 2, in_uri.output
    assert "bolt://neo:***@127.0.0.1:9" in in_uri.output
    assert "set [graph] user and password" in in_uri.output
    invalid = run(*debug, "status", LINEAGEGRAPH_GRAPH__URI=f"http://neo:{SECRET}@db:7687")
    assert invalid.exit_code == 2, invalid.output
    assert "http://neo:***@db:7687" in invalid.output
    for result in (in_uri, invalid):
        assert SECRET not in result.output
        assert ("Traceback" in result.output) == bool(debug)


@pytest.mark.parametrize("debug", [[], ["--debug"]])
@pytest.mark.parametrize(
    ("uri", "code", "shown"),
    [
        (f"bolt://127.0.0.1:9?password={SECRET}", 2, "bolt://127.0.0.1:9?password=***"),
        (f"bolt://127.0.0.1:9?password=a@{SECRET}", 2, "bolt://127.0.0.1:9?password=***"),
        (f"neo4j://127.0.0.1:9/?auth={SECRET}&x=1", 2, "neo4j://127.0.0.1:9/?auth=***&x=***"),
        (f"bolt://127.0.0.1:9?x={SECRET}", 2, "a bolt:// URI takes no query string"),
        (f"http://127.0.0.1:9?password={SECRET}", 2, "http://127.0.0.1:9?password=***"),
        # a routing context is allowed, but no value of it is printed or logged
        (f"neo4j://127.0.0.1:9/?region={SECRET}", 3, "at neo4j://127.0.0.1:9/?region=*** ("),
    ],
)
def test_a_secret_in_a_uri_query_is_never_printed_or_logged(
    run, debug: list[str], uri: str, code: int, shown: str
) -> None:  # type: ignore[no-untyped-def]
    result = run(*debug, "status", LINEAGEGRAPH_GRAPH__URI=uri)
    assert result.exit_code == code, result.output
    assert shown in result.output
    assert SECRET not in result.output  # stdout, stderr and the log lines (debug: the driver's)
    assert ("Traceback" in result.output) == bool(debug)


def test_a_graph_uri_repr_masks_its_query() -> None:
    settings = load_settings(graph={"uri": f"neo4j://db:7687/?region={SECRET}"})
    assert SECRET not in repr(settings) and SECRET not in repr(settings.graph)
    assert "neo4j://db:7687/?region=***" in repr(settings.graph)
    assert settings.graph.uri == f"neo4j://db:7687/?region={SECRET}"  # the driver gets it all


def test_secret_values_are_masked_wherever_they_leak() -> None:
    settings = load_settings(
        graph={"password": SECRET},
        snowflake={"password": "pw2"},
        spark={"kafka_properties": {"sasl.password": "pw3"}},  # a dict of secrets too
    )
    message = f"login failed for {SECRET} via neo4j://u:p@h and pw2, pw3"
    assert (
        redact(message, secret_values(settings))
        == "login failed for *** via neo4j://u:***@h and ***, ***"
    )


@pytest.mark.parametrize("command", [["status"], ["query", "RETURN 1"]])
def test_a_closed_stdout_ends_quietly_with_sigpipe_status(
    ready, tmp_path: Path, command: list[str]
) -> None:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line, like a `| head -0`
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "lineagegraph.cli",
                "--data-dir",
                str(tmp_path / "store"),
                *command,
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
            text=True,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141, result.stderr
    assert result.stderr == ""


def test_unknown_environment_variables_are_named_with_the_closest_setting(ready) -> None:  # type: ignore[no-untyped-def]
    result = ready(
        "status",
        LINEAGEGRAPH_GRAPH__DATADIR="/elsewhere",
        LINEAGEGRAPH_GRAPHS="x",
        LINEAGEGRAPH_CONFIG="",
        LINEAGEGRAPH_TEST_RGW="",
    )
    assert result.exit_code == 0, result.output
    assert (
        "ignoring unknown environment variable LINEAGEGRAPH_GRAPH__DATADIR; "
        "did you mean LINEAGEGRAPH_GRAPH__DATA_DIR?" in result.output
    )
    assert (
        "unknown environment variable LINEAGEGRAPH_GRAPHS; did you mean LINEAGEGRAPH_GRAPH?"
        in result.output
    )
    assert "LINEAGEGRAPH_CONFIG" not in result.output and "TEST_RGW" not in result.output


# --- the first hour (issue 22) --------------------------------------------------------------


@pytest.mark.parametrize("command", [["init"], ["harvest"], ["query"], ["status"]])
def test_help_of_the_first_commands_has_examples(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    examples = result.output.split("Example")[1] if "Example" in result.output else ""
    assert f"lineagegraph {command[0]}" in examples or " harvest " in examples, result.output


def test_query_shows_times_as_utc_in_a_table(ready) -> None:  # type: ignore[no-untyped-def]
    made = ready(
        "query", "--write", "CREATE (:Asset:Table {urn: 'u', last_seen: 1717200000000, runs: 3})"
    )
    assert made.exit_code == 0, made.output
    read = "MATCH (t:Table) RETURN t.urn, t.last_seen, t.runs"
    table = ready("query", read)
    assert table.exit_code == 0, table.output
    assert table.output.splitlines()[2].split() == ["u", "2024-06-01", "00:00:00Z", "3"]
    raw = ready("query", read, "--epoch-ms")
    assert raw.output.splitlines()[2].split() == ["u", "1717200000000", "3"]
    data = json.loads(ready("query", read, "--format", "json").stdout)
    assert data == [{"t.urn": "u", "t.last_seen": 1717200000000, "t.runs": 3}]


def test_status_freshness_columns_all_have_headers(ready) -> None:  # type: ignore[no-untyped-def]
    made = ready(
        "query",
        "--write",
        "CREATE (:HarvestRun {id: 'r', system: 's3', scope: 's3://b/', status: 'success',"
        " started: 1, finished: 2, watermark: 2})",
    )
    assert made.exit_code == 0, made.output
    status = ready("status")
    assert status.exit_code == 0, status.output
    lines = status.stdout.splitlines()
    lines = lines[lines.index("freshness (stale after 26 h):") :]
    header, rule = lines[1], lines[2]
    assert header.split() == ["system", "scope", "last", "success", "age", "h", "state"]
    assert len(header) >= len(rule.rstrip())  # no column without a header
    assert lines[3].split()[-1] == "STALE"


def test_a_missing_store_names_the_store_nearby(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """After the demo, plain `lineagegraph status` looks in ./.lineagegraph: the error names
    the demo's store beside it and how to use it."""
    demo = tmp_path / "lineagegraph-demo" / "graph"
    made = run("--data-dir", str(demo), "init")
    assert made.exit_code == 0, made.output
    result = CliRunner().invoke(cli, ["status"], env={"LINEAGEGRAPH_GRAPH__DATA_DIR": None})
    assert result.exit_code == 3, result.output
    assert "Found a store nearby: lineagegraph-demo/graph" in result.stderr
    assert "--data-dir lineagegraph-demo/graph" in result.stderr
    assert f"export LINEAGEGRAPH_GRAPH__DATA_DIR={demo}" in result.stderr
    pointed = CliRunner().invoke(cli, ["status"], env={"LINEAGEGRAPH_GRAPH__DATA_DIR": str(demo)})
    assert pointed.exit_code == 0, pointed.output


def test_a_missing_store_with_none_nearby_says_nothing_more(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("status")
    assert result.exit_code == 3 and "nearby" not in result.stderr
