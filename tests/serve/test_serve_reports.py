"""`GET /api/v1/orphans` and `/api/v1/cost` on a running server answer what the CLI's
`orphans` and `cost-report` print for the same options, as JSON or CSV."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from serve_fixtures import Server

from lineagegraph.cli import cli
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))
from lake import cli_lake

AS_OF = "2023-11-14T22:13:20Z"  # T0


@pytest.fixture(scope="module")
def lake_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server over the reports tests' lake (one per module: the routes only read)."""
    data_dir = tmp_path_factory.mktemp("reports") / "store"
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        cli_lake(store, ("other", "x/y.csv"))
    server = Server(data_dir)
    server.start()
    yield server
    server.kill(signal.SIGTERM)  # a clean stop also stops its embedded store's server


def cli_output(server: Server, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--data-dir", str(server.data_dir), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_orphans_json_is_the_cli_report(lake_server: Server) -> None:
    params = {
        "as_of": AS_OF,
        "by": "bucket",
        "exclude": "logs/**",
        "lookback_days": "30",
        "bucket": ["lake"],
    }
    r = lake_server.get("/api/v1/orphans", **params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    doc = r.json()
    [row] = doc["rows"]
    assert (row["bucket"], row["objects"], row["gib"]) == ("lake", 2, "3")
    assert doc["excludes"] == ["**/_SUCCESS", "**/_temporary/**", "logs/**"]
    assert doc["buckets"] == ["lake"]
    assert [d["dataset"] for d in doc["top_datasets"]] == [
        "s3://lake/raw/orders",
        "s3://lake/raw/events/2024",
    ]
    printed = cli_output(
        lake_server,
        "orphans",
        "--as-of",
        AS_OF,
        "--by",
        "bucket",
        "--exclude",
        "logs/**",
        "--lookback-days",
        "30",
        "--bucket",
        "lake",
        "--format",
        "json",
    )
    assert doc == json.loads(printed)


def test_cost_csv_by_query_or_accept_header(lake_server: Server) -> None:
    by_query = lake_server.get("/api/v1/cost", as_of=AS_OF, by="class", format="csv")
    assert by_query.status_code == 200, by_query.text
    assert by_query.headers["content-type"] == "text/csv; charset=utf-8"
    lines = by_query.text.splitlines()
    assert lines[0].startswith("storage_class,objects,bytes,gib,monthly_usd,orphaned_objects")
    assert lines[1].startswith("STANDARD,5,5368709120,5,")
    headers = {**lake_server.headers, "Accept": "text/csv"}
    by_accept = requests.get(
        f"{lake_server.url}/api/v1/cost",
        headers=headers,
        timeout=30,
        params={"as_of": AS_OF, "by": "class"},
    )
    assert by_accept.text == by_query.text
    printed = cli_output(
        lake_server, "cost-report", "--as-of", AS_OF, "--by", "class", "--format", "csv"
    )
    assert by_query.text.strip() == printed.strip()
    top = lake_server.get("/api/v1/cost", as_of=AS_OF, top="1").json()
    assert len(top["top_datasets"]) == 1 and top["report"] == "cost"
    oldest = lake_server.get("/api/v1/orphans", as_of=AS_OF, by="object", sort="oldest").json()
    printed = cli_output(
        lake_server,
        "orphans",
        "--as-of",
        AS_OF,
        "--by",
        "object",
        "--sort",
        "oldest",
        "--format",
        "json",
    )
    assert oldest == json.loads(printed) and oldest["sort"] == "oldest"


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"as_of": "yesterday"}, "as_of: not a time: 'yesterday'"),
        ({"lookback_days": "0"}, "lookback_days must be an integer from 1 to 36500 (got '0')"),
        ({"top": "x"}, "top must be an integer from 1 to 100000 (got 'x')"),
        ({"by": "owner"}, "by must be one of dataset-class, dataset, bucket, class"),
        ({"sort": "size"}, "sort must be one of cost, oldest (got 'size')"),
        ({"format": "xml"}, "format must be json or csv (got 'xml')"),
        ({"include_deleted": "maybe"}, "include_deleted must be true or false (got 'maybe')"),
        ({"buckets": "lake"}, "unknown query parameter 'buckets'"),
    ],
)
def test_bad_options_get_400_with_the_reason(
    lake_server: Server, params: dict[str, str], reason: str
) -> None:
    r = lake_server.get("/api/v1/orphans", **params)
    assert r.status_code == 400
    assert r.json()["reason"].startswith(reason), r.json()


def test_a_graph_without_s3_objects_is_404_with_a_reason(server: Server) -> None:
    r = server.get("/api/v1/orphans")
    assert r.status_code == 404
    assert "holds no S3 objects yet" in r.json()["reason"]
    assert server.get("/api/v1/cost", token="x").status_code == 400
