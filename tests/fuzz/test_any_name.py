"""Any name is data: arbitrary S3 keys, Snowflake identifiers and OpenLineage names go through
the real harvesters into the real embedded store, and every question and format carries them
exactly.

One store for the module; each example uses its own bucket, account or namespace, and many
names at once, over the whole character range: NUL, \\x01 and whitespace at either end of a
name or of a folder (`raw/Q1 /x.csv`) included, which the embedded store holds in a stored form
its index finds (lineagegraph.graph.text). S3 keys leave NUL out: S3 lists keys in XML 1.0,
which cannot carry it.
"""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import json
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from names import chars, fuzz
from s3_fixtures import client_for, new_bucket, s3_settings
from snowflake_fixtures import Query, accessed, modified

from lineagegraph import identity
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.harvest.reducer import RunReducer
from lineagegraph.harvest.s3.harvester import harvest_s3
from lineagegraph.harvest.snowflake.access_history import RowConverter, parse_row
from lineagegraph.harvest.snowflake.harvester import finish_run
from lineagegraph.harvest.snowflake.stages import StageResolver
from lineagegraph.model import Asset, Flow
from lineagegraph.questions import lineage
from lineagegraph.questions.lineage import Reached
from lineagegraph.render.as_json import to_json
from lineagegraph.render.diagrams import to_dot, to_mermaid
from lineagegraph.render.html_page import to_html
from lineagegraph.render.text import reached_table, tree
from lineagegraph.render.views import View, impact_view, paths_view, traversal_view
from lineagegraph.reports.options import ReportOptions
from lineagegraph.reports.orphans import run_report
from lineagegraph.settings import GraphSettings
from lineagegraph.values.globs import exclusion_globs
from lineagegraph.values.pricing import default_price_table, load_prices

T0 = 1_700_000_000_000


# --- names ------------------------------------------------------------------------------------

segment = st.lists(chars, min_size=1, max_size=8).map("".join)
# Dot segments are left out (an HTTP server may resolve `a/../b` in the request path), and so
# is '\n', which moto's routing cannot take in a key; test_s3_rgw.py puts CR/LF into Ceph RGW.
s3_key = (
    st.lists(segment, min_size=1, max_size=4)
    .map("/".join)
    .filter(lambda k: len(k.encode()) <= 1024 and not {".", ".."} & set(k.split("/")))
)
moto_key = s3_key.filter(lambda k: "\n" not in k and "\x00" not in k)
# Every key, and one with a folder ending in a space beside it.
findable_key = moto_key | moto_key.map(lambda k: f"raw/Q1 /{k}")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    data_dir = tmp_path_factory.mktemp("any-name")
    with open_store(GraphSettings(data_dir=data_dir, graph_name="names", batch_size=50)) as s:
        yield s


def read(store: GraphStore, cypher: str, **params: Any) -> list[list[Any]]:
    return store.execute(cypher, params, write=False).rows


# --- S3 keys through the harvester, every question and every format ---------------------------


def harvested(store: GraphStore, endpoint: str, keys: list[str]) -> tuple[str, Any]:
    """The keys put into a new bucket and harvested; the bucket and the harvest's report."""
    client = client_for(endpoint)
    bucket = new_bucket(client, "names")
    for key in keys:
        client.put_object(Bucket=bucket, Key=key, Body=b"data")
    report = harvest_s3(store, s3_settings(endpoint), bucket)
    assert report.status == "success", report.errors
    return bucket, report


@fuzz(15)
@given(keys=st.lists(findable_key, min_size=1, max_size=10, unique=True))
def test_s3_keys_round_trip_through_every_question(
    store: GraphStore, moto_endpoint: str, keys: list[str]
) -> None:
    bucket, report = harvested(store, moto_endpoint, keys)
    dataset_of = {key: identity.s3_dataset_urn_for_key(bucket, key) for key in keys}
    folders = set(dataset_of.values())
    # A key named like another key's folder (`a` beside `a/b`) is skipped and counted.
    reachable = [k for k in keys if identity.s3_file_urn(bucket, k) not in folders]
    assert report.stats.urn_clashes == len(keys) - len(reachable)
    root = f"s3://{bucket}/"  # an object's urn is its key after this: keys are not stored twice
    found = read(store, "MATCH (f:File) WHERE f.urn STARTS WITH $root RETURN f.urn", root=root)
    assert sorted(urn for [urn] in found) == sorted(
        identity.s3_file_urn(bucket, k) for k in reachable
    )
    part_of = read(
        store,
        "MATCH (f:File)-[:PART_OF]->(d:Dataset) WHERE f.urn STARTS WITH $root RETURN f.urn, d.urn",
        root=root,
    )
    assert sorted((urn[len(root) :], d) for urn, d in part_of) == sorted(
        (k, dataset_of[k]) for k in reachable
    )

    # Lineage: every dataset feeds one table, which feeds a file of the bucket.
    target = f"snowflake://acct/DB.S.{bucket}"
    datasets = sorted({dataset_of[k] for k in reachable})
    writer = GraphWriter(store)
    writer.add(Asset(target, "Table", "snowflake", bucket, T0))
    writer.add_all(Flow(d, target, T0, "snowflake://acct/query/q") for d in datasets)
    files = [identity.s3_file_urn(bucket, k) for k in reachable]
    ends = files
    writer.add_all(Flow(target, f, T0) for f in ends)
    writer.flush()
    up = lineage.traverse(store, target, "upstream")
    assert sorted(r.urn for r in up) == datasets
    for dataset in datasets[:3]:  # each question per dataset costs ~0.1 s
        down = lineage.traverse(store, dataset, "downstream")
        assert [r.urn for r in down if r.distance == 1] == [target]
        start = lineage.start_asset(store, dataset)
        check_views(traversal_view(start, down, "downstream"), [dataset, target])
        result = lineage.impact(store, dataset)
        assert {a.urn for a in result.assets} == {target, *ends}
        check_views(impact_view(result), [dataset, *ends])
        json.loads(to_json(result))
    for end in ends[:2]:
        found_paths = lineage.paths(store, datasets[0], end)
        assert [p.assets[-1].urn for p in found_paths] == [end]
        view = paths_view(found_paths, found_paths[0].assets[0], found_paths[0].assets[-1])
        check_views(view, [datasets[0], end])
    check_views(traversal_view(lineage.start_asset(store, target), up, "upstream"), datasets)

    # Orphan report: the table read every dataset, the files are left over.
    document = orphans(store, bucket)
    assert {r["dataset"] for r in document["rows"]} <= folders


@fuzz(15)
@given(keys=st.lists(moto_key, min_size=1, max_size=10, unique=True))
def test_s3_keys_of_any_characters_are_stored_exactly(
    store: GraphStore, moto_endpoint: str, keys: list[str]
) -> None:
    """Keys the index cannot find (see the module's docstring) are still harvested without
    error and never stored mangled; every format draws them."""
    bucket, _ = harvested(store, moto_endpoint, keys)
    folders = {identity.s3_dataset_urn_for_key(bucket, key) for key in keys}
    root = f"s3://{bucket}/"  # an object's urn is its key after this: keys are not stored twice
    found = read(
        store, "MATCH (f:File) WHERE f.urn STARTS WITH $root RETURN f.urn, f.name", root=root
    )
    for urn, name in found:
        key = urn[len(root) :]
        assert key in keys and urn == identity.s3_file_urn(bucket, key)
        assert name == identity.name_of(urn)
    part_of = read(
        store,
        "MATCH (f:File)-[:PART_OF]->(d:Dataset) WHERE f.urn STARTS WITH $root RETURN d.urn",
        root=root,
    )
    assert {d for [d] in part_of} <= folders
    start = Reached(f"s3://{bucket}", bucket, "s3", "Dataset", 0)
    reached = [Reached(urn, name, "s3", "File", 1, (), (start.urn,)) for urn, name in found]
    check_views(traversal_view(start, reached, "downstream"), [u for u, _ in found])
    reached_table(reached, "downstream")
    assert json.loads(to_json(reached)) == json.loads(
        json.dumps([dataclasses.asdict(r) for r in reached])
    )
    orphans(store, bucket)
    assert read(store, "RETURN 1") == [[1]], "the server still answers"


def orphans(store: GraphStore, bucket: str) -> dict[str, Any]:
    """The orphan report of one bucket in every format; its JSON document."""
    report = run_report(
        store,
        ReportOptions(
            kind="orphans",
            as_of=T0 + 86_400_000,
            lookback_days=1,
            excludes=exclusion_globs([]),
            prices=load_prices(),
            price_table=default_price_table(),
            buckets=[bucket],
            by="dataset",
        ),
    )
    document: dict[str, Any] = json.loads(report.render("json"))
    as_csv = list(csv.reader(io.StringIO(report.render("csv"))))
    assert [r[1] for r in as_csv[1:]] == [r["dataset"] for r in document["rows"]]
    for fmt in ("table", "markdown"):
        report.render(fmt)
    return document


def check_views(view: View, urns: list[str]) -> None:
    """Every format draws the view; the urns arrive exactly (JSON), escaped (HTML), as valid
    Graphviz and Mermaid."""
    assert set(urns) <= set(view.by_urn)
    page = to_html(view)
    for urn in urns:
        assert f"<td>{html.escape(urn)}</td>" in page
    assert not re.search(r"<(?!/?[a-z]|!DOCTYPE)", page), "a '<' from a name is escaped"
    dot = to_dot(view)
    if shutil.which("dot"):
        svg = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True)
        assert svg.returncode == 0, svg.stderr.decode(errors="replace")
    mermaid = to_mermaid(view)
    node_line = re.compile(r'  n\d+(\["[^"\n\r]*"\]|\(\["[^"\n\r]*"\]\))')
    for line in mermaid.split("\n")[1:]:
        assert line.startswith(("  n", "  classDef ", "  class ", "  style ", "%% ")), line
        if re.match(r"  n\d+[\[(]", line):
            assert node_line.fullmatch(line), line
    tree(view)


# --- Snowflake identifiers through ACCESS_HISTORY rows -----------------------------------------

ident = st.lists(
    st.one_of(st.sampled_from([" ", ".", '"', "a", "Z", "é", "İ", "\t", "$", "@"]), chars),
    min_size=1,
    max_size=6,
).map("".join)
column = ident.filter(lambda c: "#" not in c)  # a column urn splits at its last '#'


@fuzz(60)
@given(
    tables=st.lists(st.tuples(ident, ident, ident), min_size=2, max_size=8, unique=True), col=column
)
def test_snowflake_identifiers_round_trip(
    store: GraphStore, tables: list[tuple[str, str, str]], col: str
) -> None:
    account = f"acct-{uuid.uuid4().hex[:8]}"
    names = [identity.quote_snowflake_name(parts) for parts in tables]
    urns = [identity.snowflake_urn_from_parts(account, *parts) for parts in tables]
    target = names[0]
    query = Query(
        "q1",
        T0,
        direct=[accessed(n, col) for n in names[1:]],
        modified=[modified(target, {col: [(n, col) for n in names[1:]]})],
        query_type="INSERT",
        parameterized_hash="h",
    )
    converter = RowConverter(
        account, StageResolver.from_settings(None, {}), identity.FoldRules(), set()
    )
    reducer, writer = RunReducer(), GraphWriter(store)
    reducer.add(converter.convert(parse_row(row_of(query))), T0, "q1", "ETL")
    finish_run(reducer, writer)

    stored = read(
        store,
        "MATCH (t:Table) WHERE t.urn STARTS WITH $p RETURN t.urn, t.name",
        p=f"snowflake://{account}/",
    )
    assert sorted(map(tuple, stored)) == sorted(zip(urns, [p[2] for p in tables], strict=True))
    flows = read(
        store,
        "MATCH (a:Table)-[:FLOWS_TO]->(b:Table) WHERE b.urn STARTS WITH $p RETURN a.urn, b.urn",
        p=f"snowflake://{account}/",
    )
    want = {(u, urns[0]) for u in urns[1:] if u != urns[0]}
    assert {tuple(f) for f in flows} == want
    ups = lineage.traverse(store, urns[0], "upstream")
    assert {r.urn for r in ups} == {u for u, _ in want}
    start = lineage.start_asset(store, urns[0])
    check_views(traversal_view(start, ups, "upstream"), [urns[0]])


def row_of(q: Query) -> tuple[Any, ...]:
    """The cursor row of ACCESS_HISTORY_SINCE (as tests/harvest/test_snowflake_rows.py)."""
    return (q.query_id, q.at, q.user, json.dumps(q.direct), json.dumps(q.direct),
            json.dumps(q.modified), None, q.parameterized_hash, q.query_type, q.database,
            q.schema, None, None)  # fmt: skip


# --- OpenLineage namespaces and names from a JSON-lines file ---------------------------------


@fuzz(60)
@given(
    job=st.sampled_from(["nightly load ", " x", "a\x01b", "t\tz\t", "j\x7f"]) | segment,
    names=st.lists(s3_key, min_size=2, max_size=6, unique=True),
    other=segment,
)
def test_openlineage_names_round_trip(
    store: GraphStore,
    tmp_path_factory: pytest.TempPathFactory,
    job: str,
    names: list[str],
    other: str,
) -> None:
    namespace = f"ns-{uuid.uuid4().hex[:8]}{other}"
    lake = f"s3://{uuid.uuid4().hex[:10]}"
    inputs = [{"namespace": lake, "name": n} for n in names[1:]]
    outputs = [{"namespace": f"postgres://{namespace}", "name": names[0]}]
    event = {"eventType": "COMPLETE", "eventTime": "2024-03-01T06:00:00Z",
             "producer": "https://example.com/fuzz", "run": {"runId": str(uuid.uuid4())},
             "job": {"namespace": namespace, "name": job}, "inputs": inputs,
             "outputs": outputs}  # fmt: skip
    path = tmp_path_factory.mktemp("ol") / "events.jsonl"
    path.write_text(json.dumps(event) + "\n", encoding="utf-8")
    run, report = harvest_openlineage(store, path, full=True)
    job_urn = identity.openlineage_job_urn(namespace, job)
    out = identity.openlineage_urn(f"postgres://{namespace}", names[0])
    ins = {identity.openlineage_urn(lake, n) for n in names[1:]} - {out}
    assert run.status == "success", report
    assert not run.warnings, run.warnings

    jobs = read(
        store,
        "MATCH (t:Transformation) WHERE t.urn STARTS WITH $p RETURN t.urn, t.name",
        p=f"openlineage://{namespace}/",
    )
    assert jobs == [[job_urn, job]]
    stored = read(
        store,
        "MATCH (a:Asset) WHERE a.urn STARTS WITH $l OR a.urn = $o RETURN a.urn",
        l=lake,
        o=out,
    )
    assert {u for [u] in stored} >= ins
    feeding = read(store, "MATCH (a)-[:FLOWS_TO]->(b:Asset {urn: $o}) RETURN a.urn", o=out)
    assert {u for [u] in feeding} == ins
