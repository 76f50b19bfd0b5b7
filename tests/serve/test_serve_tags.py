"""Classifications through the Marquez API of a running server: `tags` on datasets and on
their fields as Marquez shapes them, own and derived along lineage, and GET /api/v1/tags."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from serve_fixtures import Server
from tag_fixtures import tagged_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "questions"))
from test_tags import LAKE  # the graph of the tag tests

T0 = 1_700_000_000_000
EMAIL = "snowflake://acme/RAW.PUBLIC.USERS#EMAIL"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with tagged_server(tmp_path_factory, "serve-tags") as running:
        yield running


def dataset(server: Server, namespace: str, name: str) -> dict[str, object]:
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/datasets/{quote(name, safe='')}"
    got = server.get(path)
    assert got.status_code == 200, got.text
    return got.json()  # type: ignore[no-any-return]


def test_datasets_and_fields_carry_their_tags(server: Server) -> None:
    lake = dataset(server, "s3://lake", LAKE.split("/", 3)[3])
    assert (lake["urn"], lake["tags"], lake["fields"]) == (LAKE, ["pii=email"], [])
    mart = dataset(server, "snowflake://acme", "MART.PUBLIC.USER_COUNTS")
    assert mart["tags"] == []
    assert mart["fields"] == [
        {"name": "EMAIL", "type": None, "tags": ["pii=email"], "description": None}
    ]
    stg = dataset(server, "snowflake://acme", "STG.PUBLIC.USERS")
    assert {f["name"]: f["tags"] for f in stg["fields"]} == {  # type: ignore[attr-defined]
        "E-Mail ✉": ["pii=email"],
        "EMAIL_HASH": [],
        "N": [],
    }
    listed = server.get(f"/api/v1/namespaces/{quote('snowflake://acme', safe='')}/datasets")
    assert stg in listed.json()["datasets"]


def test_the_tag_list(server: Server) -> None:
    got = server.get("/api/v1/tags")
    assert got.status_code == 200, got.text
    assert got.json() == {"tags": [{"name": "pii=email", "description": "e-mail"}]}
