"""With `lineagegraph serve` running, a CLI question on the same data directory joins serve's
embedded server (the graph already loaded) instead of loading the store into a server of its
own, answers what serve ingested a moment ago, leaves serve running, and gives the same answer
as a cold run once serve is gone."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from serve_fixtures import SRC, Server, client, run_event, wait_for

SF = "snowflake://org-acct"
JOINED = re.compile(r"joined the running embedded server in .* \(pid (\d+)\)")


def ask(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`lineagegraph --debug ARGS` in a process of its own, as a user runs it."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "LINEAGEGRAPH_GRAPH__DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "lineagegraph.cli", "--debug", *args],
        env=env,
        cwd=data_dir.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


def upstream_urns(data_dir: Path) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    result = ask(data_dir, "upstream", f"{SF}/DB.S.DAILY", "--format", "json")
    assert result.returncode == 0, result.stderr
    return [a["urn"] for a in json.loads(result.stdout)["assets"]], result


def test_a_cli_question_answers_through_the_running_serve(server: Server) -> None:
    ol = client(server)
    ol.emit(run_event("load", [("s3://raw", "sales")], [(SF, "DB.S.ORDERS")]))
    ol.emit(run_event("mart", [(SF, "DB.S.ORDERS")], [(SF, "DB.S.DAILY")]))
    expected = [f"{SF}/DB.S.ORDERS", "s3://raw/sales"]
    assert wait_for(lambda: len(ingested(server)) == 2), "serve did not ingest the events"

    urns, warm = upstream_urns(server.data_dir)
    assert urns == expected
    joined = JOINED.search(warm.stderr)
    assert joined, warm.stderr
    assert "loading the embedded store" not in warm.stderr
    server_pid = int(joined[1])
    assert Path(f"/proc/{server_pid}/cwd").resolve() == server.data_dir.resolve()
    # The CLI left: serve's embedded server runs on, and serve keeps answering from it.
    assert Path(f"/proc/{server_pid}").exists()
    assert len(ingested(server)) == 2

    server.kill(signal.SIGTERM)  # serve stops its embedded server as it exits
    cold_urns, cold = upstream_urns(server.data_dir)
    assert "started an embedded server" in cold.stderr, cold.stderr
    assert json.loads(cold.stdout) == json.loads(warm.stdout)
    assert cold_urns == expected


def ingested(server: Server) -> list[object]:
    """The upstream assets serve's own API finds (none until its ingester has run)."""
    answer = server.get("/api/v1/upstream", name=f"{SF}/DB.S.DAILY")
    return answer.json()["assets"] if answer.ok else []
