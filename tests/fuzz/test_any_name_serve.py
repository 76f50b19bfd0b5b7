"""Any name is data, over HTTP too: OpenLineage events whose namespaces, names, job, runId and
columns range over the whole character range are posted to one real `lineagegraph serve`, and
each either is refused with 400 and a clear reason (a lone surrogate, a namespace that is no URI
or platform: the rules' own refusals) or comes back exactly through the Marquez-compatible reads,
the API's questions and the CLI's beside the running serve (a column holding '#' is left out by
the column rule, as every harvester leaves it out). A refused event
never holds up the good one posted after it, and nothing serve accepted is dead-lettered.

One server for the module (hypothesis examples reuse it); each example names its own
namespaces. The examples are derandomized, so a run is reproducible.
"""

from __future__ import annotations

import gzip
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from hypothesis import Phase, event, example, given, note
from hypothesis import strategies as st
from names import chars, fuzz
from serve_fixtures import Server

from lineagegraph import identity
from lineagegraph.cli import cli

RULES = identity.FoldRules()  # serve's, with no [identity] settings
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]
text = st.lists(chars, min_size=1, max_size=8).map("".join)
# A namespace is a URI whose authority is any text but '/' (so its names come back exactly), a
# platform name, or any text at all (refused unless it is one of those).
namespace = st.one_of(
    st.tuples(st.just("uri"), text.map(lambda t: t.replace("/", ""))),
    st.tuples(st.just("platform"), st.sampled_from(["bigquery", "my-ns", "a.b+c"])),
    st.tuples(st.just("any"), text),
)
FIELDS = [
    "job_namespace",
    "job_name",
    "run_id",
    "dataset_namespace",
    "input",
    "output",
    "column_in",
    "column_out",
]


@dataclass(frozen=True)
class Case:
    """One generated event's names; `surrogate` (if any) is put into the field `spoiled`."""

    job_namespace: str
    job_name: str
    run_id: str
    namespace: tuple[str, str]
    input: str
    output: str
    column_in: str
    column_out: str
    surrogate: str | None
    spoiled: str
    body: str  # ascii (\\u escapes), utf-8, or gzip of utf-8


cases = st.builds(
    Case,
    job_namespace=text,
    job_name=text,
    run_id=text,
    namespace=namespace,
    input=text,
    output=text,
    column_in=text,
    column_out=text,
    surrogate=st.sampled_from([None] * 12 + SURROGATES),
    spoiled=st.sampled_from(FIELDS),
    body=st.sampled_from(["ascii", "utf-8", "gzip"]),
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for every example (ingesting every 0.1 s, so each waits less)."""
    data_dir = tmp_path_factory.mktemp("serve-names") / "store"
    with Server(data_dir, extra_env={"LINEAGEGRAPH_SERVE__INGEST_SECONDS": "0.1"}).running() as s:
        yield s


@dataclass(frozen=True)
class Names:
    """The names an example's event carries, as posted."""

    job_namespace: str
    job_name: str
    run_id: str
    namespace: str
    input: str
    output: str
    column_in: str
    column_out: str
    exact: bool  # whether the dataset names are the ones the graph's urns give back

    def event(self) -> dict[str, Any]:
        lineage = {
            self.column_out: {
                "inputFields": [
                    {"namespace": self.namespace, "name": self.input, "field": self.column_in}
                ]
            }
        }
        return {"eventType": "COMPLETE", "eventTime": "2024-03-01T06:00:00Z",
                "producer": "https://example.com/fuzz", "run": {"runId": self.run_id},
                "job": {"namespace": self.job_namespace, "name": self.job_name},
                "inputs": [{"namespace": self.namespace, "name": self.input,
                            "facets": {"schema": {"fields": [{"name": self.column_in}]}}}],
                "outputs": [{"namespace": self.namespace, "name": self.output,
                             "facets": {"columnLineage": {"fields": lineage}}}]}  # fmt: skip


def names_of(case: Case, tag: str) -> Names:
    """The case's names, each made this example's own by `tag`, the surrogate put in."""
    kind, ns = case.namespace
    namespace = {"uri": f"postgres://h{tag}{ns}", "platform": f"{ns}-{tag}", "any": f"{ns}{tag}"}
    values = {"job_namespace": f"{case.job_namespace}{tag}", "job_name": case.job_name,
              "run_id": case.run_id, "dataset_namespace": namespace[kind], "input": case.input,
              "output": case.output, "column_in": case.column_in,
              "column_out": case.column_out}  # fmt: skip
    if case.surrogate:
        values[case.spoiled] += case.surrogate
    exact = kind != "any" and not values["input"].startswith("/")
    exact = exact and not values["output"].startswith("/")
    values["namespace"] = values.pop("dataset_namespace")
    return Names(**values, exact=exact)


def body_of(event: dict[str, Any], how: str) -> tuple[bytes, dict[str, str]]:
    if how == "ascii":
        return json.dumps(event).encode("ascii"), {}
    raw = json.dumps(event, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return (gzip.compress(raw), {"Content-Encoding": "gzip"}) if how == "gzip" else (raw, {})


def refusal(names: Names, case: Case) -> str | None:
    """What the reason for refusing the event must say, or None when it must be accepted. (A
    column holding '#' is not refused: the column rule leaves that column out.)"""
    if case.surrogate:
        return "not UTF-8" if case.body != "ascii" else "a \\u escape names a lone surrogate"
    for key, name in (("inputs", names.input), ("outputs", names.output)):
        try:
            identity.openlineage_urn(names.namespace, name, RULES)
        except identity.IdentityError as exc:
            return f"event: {key}[0]: {exc}"
    return None


def health(server: Server) -> dict[str, Any]:
    answer: dict[str, Any] = server.get("/healthz").json()
    return answer


def ingested(server: Server, seconds: float = 30) -> dict[str, Any]:
    """/healthz once serve has ingested (or dead-lettered) every event it accepted."""
    deadline = time.monotonic() + seconds
    while True:
        h = health(server)
        done = h["events_ingested"] + h["events_dead_lettered"] >= h["events_accepted"]
        if done and h["events_waiting"] == 0:
            return h
        assert time.monotonic() < deadline, f"serve did not ingest within {seconds} s: {h}"
        time.sleep(0.05)


def ask(server: Server, *args: str) -> Any:
    """A CLI question, in-process (a name may hold NUL, which no process argument can), on
    serve's data directory: it joins serve's running embedded server."""
    result = CliRunner().invoke(
        cli, ["--data-dir", str(server.data_dir), *args, "--format", "json"]
    )
    assert result.exit_code == 0, (args, result.output)
    return json.loads(result.stdout)


def case(**names: Any) -> Case:
    """An explicit example: every name `x` unless given."""
    plain = {**dict.fromkeys(FIELDS, "x"), "input": "in", "output": "out"}
    del plain["dataset_namespace"]
    return Case(
        **{
            "namespace": ("uri", ""),
            "surrogate": None,
            "spoiled": "job_name",
            "body": "ascii",
            **plain,
            **names,
        }
    )


# No shrinking: against a live server it ran over five minutes; the failing names are noted.
@fuzz(40, derandomize=True, phases=[Phase.explicit, Phase.generate])
@given(case=cases)
@example(case(**dict.fromkeys(FIELDS[:3] + FIELDS[4:], "\x00")))  # NUL everywhere
@example(
    case(
        job_namespace=" \n\t",
        job_name="\tload ",
        run_id=" r\n",
        namespace=("uri", "h "),
        input=" in\t",
        output="out ",
        column_in="\ta",
        column_out="b ",
    )
)
@example(case(input="a/\x85b/", output="/lead", job_name="\x9f/#", column_in="\x01:c"))
@example(case(namespace=("platform", "bigquery"), output="p.ds.t\x00", input="p.ds.s\x1f"))
@example(case(column_out="a#b"))  # the column rule leaves that column out
@example(case(column_in="a#b"))
@example(case(namespace=("any", "plain namespace")))  # neither a URI nor a platform: 400
@example(case(surrogate="\ud800", spoiled="job_name"))  # a \\u escape: 400
@example(case(surrogate="\udfff", spoiled="output", body="gzip"))  # not UTF-8: 400
def test_any_name_round_trips_through_serve(server: Server, case: Case) -> None:
    tag = uuid.uuid4().hex[:8]
    names = names_of(case, tag)
    note(repr(names))  # printed on a failure (without shrinking, hypothesis shows no arguments)
    body, headers = body_of(names.event(), case.body)
    answer = server.post(body, **headers)
    assert answer.status_code in (201, 400), answer.text
    expected = refusal(names, case)
    if answer.status_code == 400:
        reason = answer.json()["reason"]
        assert expected is not None, f"refused {names}: {reason}"
        assert reason.startswith(("event: ", "body is not")), reason
        assert expected in reason, reason
    else:
        assert expected is None, f"accepted {names}, which should be refused for {expected}"
    tally(case, names, answer.status_code, answer.json().get("reason"))

    # A good event right behind it is ingested whatever happened to this one.
    good = Names(
        f"control-{tag}",
        "load",
        tag,
        f"postgres://control-{tag}",
        "in",
        "out",
        "a",
        "b",
        exact=True,
    )
    assert server.post(json.dumps(good.event())).status_code == 201
    h = ingested(server)
    assert h["status"] == "ok" and h["events_dead_lettered"] == 0, h
    for each in [names, good] if answer.status_code == 201 else [good]:
        read_back(server, each)


def read_back(server: Server, names: Names) -> None:
    """Every name of an accepted event, read back through the Marquez-compatible API and the
    CLI."""
    out = identity.openlineage_urn(names.namespace, names.output, RULES)
    source = identity.openlineage_urn(names.namespace, names.input, RULES)
    job = identity.openlineage_job_urn(names.job_namespace, names.job_name)

    # Marquez's lineage graph, asked for in the names as posted.
    answer = server.get("/api/v1/lineage", nodeId=f"dataset:{names.namespace}:{names.output}")
    assert answer.status_code == 200, answer.text
    graph = {node["data"]["urn"]: node for node in answer.json()["graph"]}
    assert set(graph) == {out, source, job}
    jobs = [n["data"] for n in graph.values() if n["type"] == "JOB"]
    assert [(j["namespace"], j["name"]) for j in jobs] == [(names.job_namespace, names.job_name)]
    assert graph[job]["id"] == f"job:{names.job_namespace}:{names.job_name}"
    if names.exact:
        for urn, name in ((out, names.output), (source, names.input)):
            data = graph[urn]["data"]
            assert (data["namespace"], data["name"]) == (names.namespace, name)
            assert graph[urn]["id"] == f"dataset:{names.namespace}:{name}"
    # The same through the job's id, and the listings.
    by_job = server.get("/api/v1/lineage", nodeId=f"job:{names.job_namespace}:{names.job_name}")
    assert by_job.status_code == 200, by_job.text
    assert {n["data"]["urn"] for n in by_job.json()["graph"]} == {out, source, job}
    ns, name = identity.openlineage_name(out)
    listed = server.get(f"/api/v1/namespaces/{quote(ns, safe='')}/datasets")
    assert listed.status_code == 200, listed.text
    assert {(d["namespace"], d["name"]) for d in listed.json()["datasets"]} == {
        identity.openlineage_name(out),
        identity.openlineage_name(source),
    }
    spaces = {n["name"] for n in server.get("/api/v1/namespaces").json()["namespaces"]}
    assert {ns, names.job_namespace} <= spaces
    one = server.get(f"/api/v1/namespaces/{quote(ns, safe='')}/datasets/{quote(name, safe='')}")
    assert one.status_code == 200 and one.json()["name"] == name, one.text
    path = f"/api/v1/namespaces/{quote(names.job_namespace, safe='')}/jobs/"
    found = server.get(path + quote(names.job_name, safe=""))
    assert found.status_code == 200, found.text
    assert (found.json()["name"], found.json()["lastRunId"]) == (names.job_name, names.run_id)

    # Column lineage: both columns by name, but one holding '#' (the column rule leaves it out:
    # no column urn can hold it).
    col_in = {(source, names.column_in)} if "#" not in names.column_in else set()
    col_out = {(out, names.column_out)} if "#" not in names.column_out else set()
    feeds = col_in if col_out else set()
    if col_in:
        start = f"datasetField:{names.namespace}:{names.input}:{names.column_in}"
        assert column_fields(server, start, withDownstream="true") == col_in | col_out
    start = f"dataset:{names.namespace}:{names.output}"
    if col_out or source == out:
        assert column_fields(server, start) == col_out | feeds | (
            col_in if source == out else set()
        )
    else:
        missing = server.get("/api/v1/column-lineage", nodeId=start)
        assert missing.status_code == 404 and "has no columns" in missing.json()["reason"]

    # The CLI beside the running serve, given the exact urns (a job reading and writing one
    # dataset is no lineage of it).
    up = ask(server, "upstream", out)
    assert [a["urn"] for a in up["assets"]] == ([source] if source != out else [])
    assert server.get("/api/v1/upstream", name=out).json() == up  # the same function and JSON
    down = ask(server, "downstream", source)
    assert [a["urn"] for a in down["assets"]] == ([out] if source != out else [])


def column_fields(server: Server, node: str, **params: str) -> set[tuple[str, str]]:
    """The (dataset urn, field) of every field of a column-lineage answer."""
    answer = server.get("/api/v1/column-lineage", nodeId=node, **params)
    assert answer.status_code == 200, answer.text
    return {
        (n["data"]["urn"].rpartition("#")[0], n["data"]["field"]) for n in answer.json()["graph"]
    }


def tally(case: Case, names: Names, status: int, reason: str | None) -> None:
    """What the example covered (`pytest --hypothesis-show-statistics` counts it)."""
    event(f"{status} {case.namespace[0]}")
    if reason:
        event(reason[:40])
    names_of_data = [v for k, v in vars(names).items() if k != "namespace" and type(v) is str]
    for label, holds in (("NUL", "\x00"), ("'/'", "/"), ("C1", "\x85")):
        if any(holds in v for v in names_of_data):
            event(f"a name holds {label}")
    if "#" in names.column_in + names.column_out:
        event("a column holds '#'")
    if any(v != v.strip() for v in names_of_data):
        event("a name begins or ends with whitespace")
