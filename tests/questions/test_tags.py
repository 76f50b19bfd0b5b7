"""Classifications along lineage (lineagegraph.questions.tags) on a real store, and the tag,
untag and tags commands: a tag follows plain copies, stops at masking, aggregates and blocks
with the reason, crosses to assets without column lineage, and leaves no copy once untagged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineagegraph.cli import cli
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Column, ColumnFeed, Flow, Item, TagFact
from lineagegraph.questions.policy import check_policies
from lineagegraph.questions.tags import Propagation, derive_all, derive_at
from lineagegraph.settings import GraphSettings
from lineagegraph.tags_settings import TagSettings

T0 = 1_700_000_000_000
RAW = "snowflake://acme/RAW.PUBLIC.USERS"
STG = "snowflake://acme/STG.PUBLIC.USERS"
MART = "snowflake://acme/MART.PUBLIC.USER_COUNTS"
LAKE = "s3://lake/users export"  # a space: names are data
EMAIL, ID = RAW + "#EMAIL", RAW + "#ID"
STG_EMAIL, STG_HASH, STG_N = STG + "#E-Mail ✉", STG + "#EMAIL_HASH", STG + "#N"
MART_EMAIL = MART + "#EMAIL"


def graph() -> list[Item]:
    """RAW.USERS -> STG.USERS (email copied, hashed, counted) -> MART (email copied) and
    STG.USERS -> an S3 export with no column lineage."""
    assets = [
        Asset(RAW, "Table", "snowflake", "USERS", T0),
        Asset(STG, "Table", "snowflake", "USERS", T0),
        Asset(MART, "Table", "snowflake", "USER_COUNTS", T0),
        Asset(LAKE, "Dataset", "s3", "users export", T0),
    ]
    columns = [
        Column(urn, urn.rpartition("#")[0], urn.rpartition("#")[2], T0)
        for urn in (EMAIL, ID, STG_EMAIL, STG_HASH, STG_N, MART_EMAIL)
    ]
    return [
        *assets,
        *columns,
        ColumnFeed(EMAIL, STG_EMAIL, T0, "q1"),
        ColumnFeed(EMAIL, STG_HASH, T0, "q1", ("SHA2",)),
        ColumnFeed(ID, STG_N, T0, "q1", ("COUNT",)),
        ColumnFeed(STG_EMAIL, MART_EMAIL, T0, "q2"),
        Flow(RAW, STG, T0, "q1"),
        Flow(STG, MART, T0, "q2"),
        Flow(STG, LAKE, T0, "spark"),
    ]


def write(store: GraphStore, items: list[Item]) -> None:
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.finish()


def fact(target: str, tag: str, *, at: int = T0, removed: bool = False) -> TagFact:
    key, _, value = tag.partition("=")
    return TagFact(target, key, value or None, "manual", "ana", at, "test", removed)


def derived(found: Propagation, urn: str) -> dict[str, tuple[str, ...]]:
    """tag -> path of every tag derived at urn."""
    return {d.tag: d.path for d in found.derived(found.piece.index[urn])}


def stops(found: Propagation) -> set[tuple[str, str, str]]:
    return {(s.key, s.dst, s.reason) for s in found.stops()}


@pytest.fixture
def users(store: GraphStore) -> GraphStore:
    write(store, [*graph(), fact(EMAIL, "pii=email"), fact(ID, "pii=id")])
    return store


def test_a_column_tag_follows_plain_copies_and_stops_at_masks(users: GraphStore) -> None:
    found = derive_all(users, TagSettings())
    assert derived(found, STG_EMAIL) == {"pii=email": (EMAIL, STG_EMAIL)}
    assert derived(found, MART_EMAIL) == {"pii=email": (EMAIL, STG_EMAIL, MART_EMAIL)}
    assert STG_HASH not in found.piece.index or not derived(found, STG_HASH)
    assert stops(found) == {
        ("pii", STG_HASH, "masked by SHA2"),
        ("pii", STG_N, "masked by COUNT"),
    }


def test_a_column_tag_reaches_an_asset_without_column_lineage(users: GraphStore) -> None:
    found = derive_all(users, TagSettings())
    assert derived(found, LAKE) == {"pii=email": (EMAIL, STG_EMAIL, LAKE)}
    assert derived(found, MART) == {}  # MART has column lineage from STG: its columns carry it


def test_one_column_asked_for_gets_the_same_answer(users: GraphStore) -> None:
    everything = derive_all(users, TagSettings())
    for urn, asset in [(MART_EMAIL, MART), (STG_HASH, STG), (LAKE, None), (STG_N, STG)]:
        one = derive_at(users, TagSettings(), [(urn, asset)])
        assert derived(one, urn) == (
            derived(everything, urn) if urn in everything.piece.index else {}
        )


def test_an_asset_tag_follows_flows_unless_every_column_feed_is_masked(
    store: GraphStore,
) -> None:
    only_hashed = [i for i in graph() if not (isinstance(i, ColumnFeed) and not i.masked_by)]
    write(store, [*only_hashed, fact(RAW, "sensitivity=restricted")])
    found = derive_all(store, TagSettings())
    assert derived(found, STG) == {}
    assert ("sensitivity", STG, "every column feed masked by COUNT, SHA2") in stops(found) or (
        "sensitivity",
        STG,
        "every column feed masked by SHA2, COUNT",
    ) in stops(found)
    write(store, [ColumnFeed(EMAIL, STG_EMAIL, T0 + 1, "q3")])  # one plain copy: it carries
    assert derived(derive_all(store, TagSettings()), LAKE) == {
        "sensitivity=restricted": (RAW, STG, LAKE)
    }


def test_a_block_stops_one_key_on_one_edge(users: GraphStore) -> None:
    block = TagFact(MART_EMAIL, "pii", STG_EMAIL, "block", "bo", T0, "aggregated upstream")
    write(users, [block, fact(STG_EMAIL, "owner=crm")])
    found = derive_all(users, TagSettings())
    assert derived(found, MART_EMAIL) == {"owner=crm": (STG_EMAIL, MART_EMAIL)}
    assert ("pii", MART_EMAIL, "blocked by bo: aggregated upstream") in stops(found)


def test_untagging_the_origin_removes_every_derived_copy(users: GraphStore) -> None:
    write(users, [fact(EMAIL, "pii=email", at=T0 + 1, removed=True)])
    found = derive_all(users, TagSettings())
    assert {t for urn in found.piece.names for t in derived(found, urn)} == set()
    assert {(s.key, s.value, s.dst) for s in found.stops()} == {("pii", "id", STG_N)}


def test_several_origins_each_kept_and_the_highest_level_wins(users: GraphStore) -> None:
    write(
        users,
        [
            fact(EMAIL, "sensitivity=internal"),
            fact(STG_EMAIL, "sensitivity=public"),
            fact(STG_EMAIL, "pii=contact"),
            TagFact(STG_EMAIL, "sensitivity", "restricted", "dbt", "run 7", T0),
        ],
    )
    levels = {"sensitivity": ["public", "internal", "confidential", "restricted"]}
    found = derive_all(users, TagSettings(levels=levels))
    assert set(derived(found, MART_EMAIL)) == {"pii=email", "pii=contact", "sensitivity=restricted"}


def test_settings_globs_tag_assets_when_tags_are_computed(users: GraphStore) -> None:
    settings = TagSettings(globs=[{"pattern": "s3://lake/**", "tag": "zone=lake"}])
    for found in (derive_all(users, settings), derive_at(users, settings, [(LAKE, None)])):
        assert [(o.tag, o.source) for o in found.own(found.piece.index[LAKE])] == [
            ("zone=lake", "settings")
        ]
    assert LAKE not in derive_all(users, TagSettings(globs=[])).groups


def test_the_python_api(users: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import lineagegraph

    monkeypatch.delenv("LINEAGEGRAPH_CONFIG", raising=False)
    settings = lineagegraph.load_settings(identity={"snowflake_account": "acme"})
    answer = lineagegraph.tags(users, settings, "MART.PUBLIC.USER_COUNTS#EMAIL")
    assert [(d.tag, d.hops) for d in answer.derived] == [("pii=email", 2)]
    assert isinstance(answer, lineagegraph.TagsAnswer)


# --- the commands ---------------------------------------------------------------------------


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    data_dir = tmp_path / "store"
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        store.init_schema()
        write(store, graph())
    config = tmp_path / "lineagegraph.toml"
    config.write_text(
        '[tags]\nlevels = {sensitivity = ["public", "internal", "restricted"]}\n'
        '[[tags.globs]]\npattern = "s3://lake/**"\ntag = "zone=lake"\nreason = "the lake"\n'
        '[identity]\nsnowflake_account = "acme"\n'
    )
    runner = CliRunner()

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(
            cli,
            ["--config", str(config), "--data-dir", str(data_dir), *args],
            catch_exceptions=False,
        )

    return invoke


def test_cli_tag_tags_and_untag(run) -> None:  # type: ignore[no-untyped-def]
    tagged = run("tag", "RAW.PUBLIC.USERS#email", "pii=email", "--reason", "e-mail", "--by", "ana")
    assert tagged.exit_code == 0, tagged.output
    assert f"tagged pii=email on {EMAIL}" in tagged.output
    shown = run("tags", "MART.PUBLIC.USER_COUNTS#EMAIL", "--format", "json")
    assert shown.exit_code == 0, shown.output
    answer = json.loads(shown.stdout)
    [tag] = answer["derived"]
    assert (tag["key"], tag["value"], tag["hops"]) == ("pii", "email", 2)
    assert tag["path"] == [EMAIL, STG_EMAIL, MART_EMAIL]
    assert (tag["origin"]["source"], tag["origin"]["by"], tag["origin"]["reason"]) == (
        "manual",
        "ana",
        "e-mail",
    )
    table = run("tags", "STG.PUBLIC.USERS#EMAIL_HASH")
    assert table.exit_code == 0, table.output
    assert "0 own, 0 derived" in table.output and "masked by SHA2" in table.output
    lake = run("tags", "s3://lake/users export", "--format", "csv")
    assert "zone=lake,own,settings" in lake.output and "pii=email,derived,manual" in lake.output
    for fmt in ("markdown", "tree", "mermaid", "dot"):
        drawn = run("tags", "MART.PUBLIC.USER_COUNTS#EMAIL", "--format", fmt)
        assert drawn.exit_code == 0 and "USERS" in drawn.output, (fmt, drawn.output)
    untagged = run("untag", "RAW.PUBLIC.USERS#EMAIL", "pii", "--reason", "gone")
    assert untagged.exit_code == 0, untagged.output
    after = json.loads(run("tags", "MART.PUBLIC.USER_COUNTS#EMAIL", "--format", "json").stdout)
    assert after["derived"] == [] and after["own"] == []


def test_cli_block_and_unblock(run) -> None:  # type: ignore[no-untyped-def]
    run("tag", "RAW.PUBLIC.USERS#EMAIL", "pii")
    blocked = run(
        "tag", "MART.PUBLIC.USER_COUNTS#EMAIL", "pii", "--block", "--from",
        "STG.PUBLIC.USERS#E-Mail ✉", "--reason", "reviewed",
    )  # fmt: skip
    assert blocked.exit_code == 0, blocked.output
    shown = json.loads(run("tags", "MART.PUBLIC.USER_COUNTS#EMAIL", "--format", "json").stdout)
    assert shown["derived"] == []
    assert any("reviewed" in s["reason"] for s in shown["stops"])
    assert run("untag", "MART.PUBLIC.USER_COUNTS#EMAIL", "pii", "--block").exit_code == 0
    shown = json.loads(run("tags", "MART.PUBLIC.USER_COUNTS#EMAIL", "--format", "json").stdout)
    assert [d["key"] for d in shown["derived"]] == ["pii"]


def test_cli_errors(run) -> None:  # type: ignore[no-untyped-def]
    missing = run("tag", "RAW.PUBLIC.NOPE#EMAIL", "pii")
    assert missing.exit_code == 7 and "no asset matches" in missing.output
    no_column = run("tag", "RAW.PUBLIC.USERS#NOPE", "pii")
    assert no_column.exit_code == 7 and "has no column 'NOPE'" in no_column.output
    never = run("untag", "RAW.PUBLIC.USERS#EMAIL", "pii")
    assert never.exit_code == 7 and "no tag 'pii' stated by hand" in never.output
    empty = run("tag", "RAW.PUBLIC.USERS#EMAIL", "=x")
    assert empty.exit_code == 2 and "a tag is KEY or KEY=VALUE" in empty.output
    valued_block = run("tag", "RAW.PUBLIC.USERS#EMAIL", "pii=x", "--block")
    assert valued_block.exit_code == 2 and "a block names a KEY" in valued_block.output


# --- policies -------------------------------------------------------------------------------

POLICIES = [
    {"name": "pii in raw and staging", "tag": "pii", "databases": ["RAW", "STG"]},
    {"name": "pii in the vault", "tag": "pii=email", "buckets": ["vault"]},
    {"name": "pii in the EU", "tag": "pii", "regions": ["eu-west-1"],
     "storage_classes": ["GLACIER"], "not_tagged": ["exposure=public"]},
]  # fmt: skip


def test_policy_violations_name_the_path(users: GraphStore) -> None:
    write(users, [fact(LAKE, "exposure=public")])
    users.execute("MATCH (d:Dataset {urn: $u}) SET d.region = 'us-east-1'", {"u": LAKE}, write=True)
    users.execute(
        "MATCH (d:Dataset {urn: $u}) CREATE (:Asset:File {urn: $u + '/x', storage_class:"
        " 'GLACIER'})-[:PART_OF]->(d)",
        {"u": LAKE},
        write=True,
    )
    answer = check_policies(users, TagSettings(policies=POLICIES))
    found = {(v.policy, v.asset, v.rule, v.path) for v in answer.violations}
    to_lake = (EMAIL, STG_EMAIL, LAKE)
    assert found == {
        ("pii in raw and staging", MART, "database MART not among RAW, STG",
         (EMAIL, STG_EMAIL, MART_EMAIL)),
        ("pii in the vault", LAKE, "bucket lake not among vault", to_lake),
        ("pii in the EU", LAKE, "region us-east-1 not among eu-west-1", to_lake),
        ("pii in the EU", LAKE, "storage class GLACIER", to_lake),
        ("pii in the EU", LAKE, "reaches an asset tagged exposure=public", to_lake),
    }  # fmt: skip
    assert not answer.passed
    one = check_policies(users, TagSettings(policies=POLICIES), STG)
    assert one.passed and one.scope == STG
    write(users, [fact(EMAIL, "pii=email", at=T0 + 1, removed=True)])
    assert check_policies(users, TagSettings(policies=POLICIES)).passed


def test_cli_check_policy(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "lineagegraph.toml"
    config.write_text(
        config.read_text()
        + '[[tags.policies]]\nname = "pii stays in snowflake"\ntag = "pii"\nbuckets = []\n'
    )
    assert run("check", "--policy").exit_code == 0
    run("tag", "RAW.PUBLIC.USERS#EMAIL", "pii=email")
    failed = run("check", "--policy")
    assert failed.exit_code == 8, failed.output
    assert "FAILED: 1 violation(s)" in failed.output
    assert f"{EMAIL} -> {STG_EMAIL} -> {LAKE}" in failed.output
    assert "error: 1 policy violation(s); first: pii stays in snowflake" in failed.output
    assert run("check", "--policy", "STG.PUBLIC.USERS").exit_code == 0
    as_json = json.loads(run("check", "--policy", "--format", "json").stdout)
    assert as_json["violations"][0]["path"] == [EMAIL, STG_EMAIL, LAKE]
    assert run("check").exit_code == 2


def test_the_named_statements_for_pii_paths_and_unauthorized_places(users: GraphStore) -> None:
    paths = [(r["origin"], r["path"]) for r in users.read("tags_pii_flow_paths", {"limit": 10})]
    assert paths == [(EMAIL, [EMAIL, STG_EMAIL]), (EMAIL, [EMAIL, STG_EMAIL, MART_EMAIL])]
    users.execute("MATCH (d:Dataset {urn: $u}) SET d.region = 'us-east-1'", {"u": LAKE}, write=True)
    params = {"regions": ["eu-west-1"], "storage_classes": ["GLACIER"]}
    rows = users.read("tags_unauthorized_places", params)
    assert [(r["source"], r["target"], r["region"]) for r in rows] == [(STG, LAKE, "us-east-1")]
    assert users.read("tags_unauthorized_places", {**params, "regions": ["us-east-1"]}) == []
