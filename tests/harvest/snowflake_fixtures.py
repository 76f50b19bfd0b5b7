"""Snowflake test server: fakesnow's HTTP server (session-wide) holding ACCOUNT_USAGE views
filled with rows shaped as Snowflake documents them, reached by the real connector.

fakesnow shares one in-memory database between connections, so the harvester's own connection
(made from settings: host, port, protocol=http) sees the rows a test inserts. Each test starts
from empty views (`account_usage` fixture). Times are epoch milliseconds around `NOW`.

Also a login stub: a loopback HTTP server that answers the connector's login request the way
Snowflake answers bad credentials (code 390100), since fakesnow accepts any password.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import snowflake.connector
from snowflake.connector import SnowflakeConnection

from lineagegraph.demo.account_usage import (  # noqa: F401  (re-exported for the tests)
    VIEWS,
    AccountUsage,
    Query,
    accessed,
    ddl,
    masked_by_policy,
    modified,
    object_id,
    stage,
)
from lineagegraph.graph.store import GraphStore
from lineagegraph.settings import Settings

NOW = 1_750_000_000_000  # 2025-06-15T15:06:40Z, the harvest time of most tests
HOUR = 3_600_000
DAY = 24 * HOUR
ACCOUNT = "acme-prod"
PREFIX = f"snowflake://{ACCOUNT}/"


def urn(name: str) -> str:
    return PREFIX + name


@pytest.fixture(scope="session")
def fakesnow_server() -> Iterator[dict[str, Any]]:
    """fakesnow's HTTP server on a free loopback port; connection kwargs for the connector."""
    fakesnow = pytest.importorskip("fakesnow")
    pytest.importorskip("uvicorn", reason="fakesnow's server needs fakesnow[server]")
    with fakesnow.server() as kwargs:
        yield kwargs


@pytest.fixture(scope="session")
def sf_connection(fakesnow_server: dict[str, Any]) -> Iterator[SnowflakeConnection]:
    """The tests' own connection, used to fill the views."""
    connection = snowflake.connector.connect(**fakesnow_server)
    yield connection
    connection.close()


@pytest.fixture
def account_usage(sf_connection: SnowflakeConnection) -> AccountUsage:
    """Empty ACCESS_HISTORY, QUERY_HISTORY and OBJECT_DEPENDENCIES, no stages."""
    usage = AccountUsage(sf_connection)
    usage.reset()
    return usage


def snowflake_settings(
    server: dict[str, Any], tmp_data_dir: Any = None, **snowflake: Any
) -> Settings:
    """Settings that connect the harvester to the fake server (password auth over http)."""
    section = {
        "account": server["account"],
        "user": server["user"],
        "password": server["password"],
        "host": server["host"],
        "port": server["port"],
        "protocol": server["protocol"],
        "warehouse": "ETL_WH",
        # fakesnow finds its TO_TIMESTAMP_LTZ macro only in the session's database
        "database": "SNOWFLAKE",
        "role": "LINEAGE_ROLE",
        "login_timeout": 10,
        **snowflake,
    }
    extra: dict[str, Any] = {}
    if tmp_data_dir is not None:
        extra["graph"] = {"data_dir": tmp_data_dir}
    return Settings.model_validate(
        {"snowflake": section, "identity": {"snowflake_account": ACCOUNT}, **extra}
    )


HISTORY = (
    "stopped",
    "resumed",
    "retired_at",
    "live",
    "deleted",
    "restored",
    "changed_at",
    "held_by",
    "held_from",
    "held_until",
    "run_times",
    "column_run_times",
    "drops",
)
"""The history of edges and assets and the facts it comes from (docs/history.md): written by
windows of runs (graph.history), so none when values are written one at a time; so are the
drops kept for assets not known yet (:PendingDrop)."""


def _without_history(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in HISTORY}


def dump_graph(store: GraphStore, *, history: bool = True) -> tuple[list[Any], list[Any]]:
    """Every node but :HarvestRun (and Neo4j's schema marker, which a test's DETACH DELETE
    removes) and every edge, with all properties, in a stable order; without the history of
    nodes and edges unless `history`."""
    nodes = store.execute(
        "MATCH (n) WHERE NOT n:HarvestRun AND NOT n:LineagegraphSchema "
        "RETURN labels(n) AS l, properties(n) AS p",
        write=False,
    ).rows
    edges = store.execute(
        "MATCH (a)-[e]->(b) RETURN a.urn AS a, type(e) AS t, b.urn AS b, properties(e) AS p",
        write=False,
    ).rows
    if not history:
        nodes = [[labels, _without_history(p)] for labels, p in nodes if labels != ["PendingDrop"]]
        edges = [[a, t, b, _without_history(p)] for a, t, b, p in edges]
    return sorted(nodes, key=json.dumps), sorted(edges, key=json.dumps)


# --- a login that Snowflake refuses --------------------------------------------------------


class _RejectLogin(BaseHTTPRequestHandler):
    """Answers every login request as Snowflake answers a wrong password."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps(
            {
                "data": {"nextAction": "RETRY_LOGIN", "authnMethod": "USERNAME_PASSWORD"},
                "code": "390100",
                "message": "Incorrect username or password was specified.",
                "success": False,
                "headers": None,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


@pytest.fixture
def rejecting_login() -> Iterator[dict[str, Any]]:
    """Connection kwargs of a loopback server that refuses every login with code 390100."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RejectLogin)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {
            "host": "127.0.0.1",
            "port": server.server_address[1],
            "protocol": "http",
            "account": "fakesnow",
            "user": "fake",
            "password": "wrong",
        }
    finally:
        server.shutdown()
        server.server_close()
