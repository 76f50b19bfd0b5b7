"""History against a reference model: random sequences of OpenLineage runs whose inputs and
outputs change, deletions and returns, harvested in windows of several runs; every --as-of
answer (downstream, upstream, column lineage, impact's readers) and every diff equals a
brute-force replay of the same sequence. Then the CLI's --as-of, diff and history."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lineagegraph.cli import cli
from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.history import delete_assets
from lineagegraph.graph.statements import statement
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.openlineage import EventMapper, Located
from lineagegraph.harvest.reducer import RunReducer
from lineagegraph.identity import NO_FOLD_RULES
from lineagegraph.questions import history, lineage

T0 = 1_700_000_000_000
STEP = 1000
SOURCES = ("a", "b")
JOBS = {"j1": ("o1", "o2"), "j2": ("o1", "o2"), "j3": ("d",)}  # job -> what it may write
READS = {"j1": SOURCES, "j2": SOURCES, "j3": ("o1", "o2")}
DATASETS = (*SOURCES, "o1", "o2", "d")


def urn(name: str) -> str:
    return f"s3://lake/{name}"


def job_urn(job: str) -> str:
    return f"openlineage://etl/{job}"


def event(at: int, job: str, inputs: Iterable[str], outputs: Iterable[str]) -> dict[str, Any]:
    """A COMPLETE event; each output's column x comes from each input's column x."""
    ins = [{"namespace": "s3://lake", "name": n} for n in inputs]
    fields = {"x": {"inputFields": [{**i, "field": "x"} for i in ins]}}
    return {
        "eventType": "COMPLETE", "eventTime": f"{at / 1000:.3f}",  # replaced below
        "producer": "https://example.com/test", "run": {"runId": f"{job}-{at}"},
        "job": {"namespace": "etl", "name": job}, "inputs": ins,
        "outputs": [{"namespace": "s3://lake", "name": n,
                     "facets": {"columnLineage": {"fields": fields}}} for n in outputs],
    }  # fmt: skip


def iso(at: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(at / 1000, UTC).isoformat(timespec="milliseconds")


# --- the reference: replay the steps up to a time -------------------------------------------

Edge = tuple[str, str, str]  # (kind, src, dst)


class Model:
    """The graph at a time, by replaying every step up to it."""

    def __init__(self, steps: list[tuple[Any, ...]], at: int) -> None:
        self.present: set[str] = set()  # asset urns
        self.columns: set[str] = set()  # column urns ever seen
        self.live: dict[Edge, set[str]] = {}  # edge -> the jobs producing it now
        for time, step in timed(steps):
            if time > at:
                break
            if step[0] == "run":
                self._run(*step[1:])
            elif step[0] == "delete" and urn(step[1]) in self.present:
                gone = urn(step[1])
                self.present.discard(gone)
                for (_kind, src, dst), vias in self.live.items():
                    if gone in (_owner(src), _owner(dst)):
                        vias.clear()

    def _run(self, job: str, inputs: tuple[str, ...], outputs: tuple[str, ...]) -> None:
        t = job_urn(job)
        produced: set[Edge] = set()
        for i in inputs:
            produced.add(("READS_FROM", t, urn(i)))
            for o in outputs:
                if i != o:
                    produced.add(("FLOWS_TO", urn(i), urn(o)))
                    produced.add(("FEEDS", urn(i) + "#x", urn(o) + "#x"))
        for o in outputs:
            produced.add(("WRITES_TO", t, urn(o)))
        self.present |= {urn(n) for n in (*inputs, *outputs)}
        self.columns |= {urn(n) + "#x" for n in (*inputs, *outputs) if inputs and outputs}
        column_run = bool(inputs and outputs)  # a run with column lineage (FEEDS drift)
        for edge, vias in self.live.items():
            if t in vias and edge not in produced and (edge[0] != "FEEDS" or column_run):
                vias.discard(t)
        for edge in produced:
            self.live.setdefault(edge, set()).add(t)

    def held(self, kind: str) -> set[tuple[str, str]]:
        return {(s, d) for (k, s, d), vias in self.live.items() if k == kind and vias}

    def reach(self, start: str, kind: str, down: bool) -> set[str]:
        edges = self.held(kind)
        found, frontier = set(), {start}
        while frontier:
            step = (
                {d for s, d in edges if s in frontier}
                if down
                else {s for s, d in edges if d in frontier}
            )
            frontier = step - found - {start}
            found |= frontier
        return found

    def things(self) -> set[tuple[str, str, str | None]]:
        out: set[tuple[str, str, str | None]] = {("Asset", a, None) for a in self.present}
        out |= {("Column", c, None) for c in self.columns if _owner(c) in self.present}
        for kind in ("FLOWS_TO", "FEEDS", "READS_FROM", "WRITES_TO"):
            out |= {(kind, s, d) for s, d in self.held(kind)}
        return out


def _owner(node: str) -> str:
    return node.partition("#")[0]


def timed(steps: list[tuple[Any, ...]]) -> list[tuple[int, tuple[Any, ...]]]:
    return [(T0 + STEP * (n + 1), step) for n, step in enumerate(steps)]


# --- the system: harvest the same steps -----------------------------------------------------


def play(store: GraphStore, steps: list[tuple[Any, ...]], seed: int = 0) -> None:
    """Runs are harvested in windows (a reducer each) ended by a flush or a deletion; a
    deletion is applied as a DROP is. `seed`: 0, the steps arrive in time order; else in an
    order shuffled by it (late events, late drops, windows harvested out of order)."""
    mapper = EventMapper(NO_FOLD_RULES, [])
    reducer = RunReducer()
    pending = False
    arrival = timed(steps)
    if seed:
        random.Random(seed).shuffle(arrival)

    def flush() -> None:
        nonlocal reducer, pending
        if pending:
            writer = GraphWriter(store)
            reducer.write_run(writer)
            writer.finish()
        reducer, pending = RunReducer(), False

    for at, step in arrival:
        if step[0] == "run":
            ev = event(at, *step[1:])
            ev["eventTime"] = iso(at)
            sighting = mapper.pieces(Located("test", ev))
            reducer.add(sighting.pieces, sighting.at, sighting.run_id)
            pending = True
        elif step[0] == "delete":
            flush()
            delete_assets(store, [{"urn": urn(step[1]), "at": at}])
        else:
            flush()
    flush()


runs = st.builds(
    lambda job, ins, outs: ("run", job, tuple(sorted(ins)), tuple(sorted(outs))),
    st.sampled_from(sorted(JOBS)),
    st.sets(st.sampled_from(SOURCES), min_size=1),
    st.sets(st.sampled_from(("o1", "o2")), min_size=1, max_size=1),
).map(lambda s: s if s[1] != "j3" else ("run", "j3", s[3], ("d",)))
step_strategy = st.one_of(
    runs,
    runs,
    runs,
    st.tuples(st.just("delete"), st.sampled_from(DATASETS)),
    st.tuples(st.just("flush")),
)


def answered(store: GraphStore, start: str, direction: lineage.Direction, at: int) -> set[str]:
    try:
        found = lineage.traverse(store, start, direction, as_of=at)
    except (lineage.AssetNotFound, lineage.AssetDeleted):
        return {"(not there)"}
    return {r.urn for r in found}


def diff_things(store: GraphStore, since: int, until: int) -> tuple[set[Any], set[Any]]:
    changes = history.diff(store, since, until).changes
    return (
        {(c.what, c.urn, c.to) for c in changes if c.change == "added"},
        {(c.what, c.urn, c.to) for c in changes if c.change == "removed"},
    )


@pytest.mark.parametrize("store", ["falkordb"], indirect=True)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(step_strategy, min_size=1, max_size=8),
    seed=st.one_of(st.just(0), st.integers(1, 2**32)),
)
# a late older run: j1 stopped reading b at 3s, an event of 2s (reading b) arrives after
@example(steps=[("run", "j1", ("a", "b"), ("o1",)), ("run", "j1", ("a", "b"), ("o1",)),
                ("run", "j1", ("a",), ("o1",))], seed=7)  # fmt: skip
# a late drop: a dropped between two runs reading it, harvested after both
@example(steps=[("run", "j1", ("a", "b"), ("o1",)), ("delete", "a"),
                ("run", "j1", ("a", "b"), ("o1",)), ("run", "j3", ("o1",), ("d",))],
         seed=3)  # fmt: skip
# an edge that stops and comes back within one window
@example(steps=[("run", "j1", ("a",), ("o1",)), ("run", "j1", ("b",), ("o1",)),
                ("run", "j1", ("a",), ("o1",))], seed=0)  # fmt: skip
# two jobs produce a -> o1: it stops when the last of them stops producing it, across windows
@example(steps=[("run", "j1", ("a",), ("o1",)), ("run", "j2", ("a",), ("o1",)),
                ("run", "j1", ("b",), ("o1",)), ("flush",), ("run", "j2", ("b",), ("o1",)),
                ("run", "j3", ("o1",), ("d",))], seed=0)  # fmt: skip
# a deleted source stops its lineage; a run that reads it again brings both back
@example(steps=[("run", "j1", ("a", "b"), ("o1",)), ("delete", "a"),
                ("run", "j1", ("b",), ("o1",)), ("run", "j1", ("a", "b"), ("o1",)),
                ("delete", "o1"), ("run", "j3", ("o1",), ("d",))], seed=0)  # fmt: skip
def test_as_of_and_diff_equal_a_replay(
    store: GraphStore, steps: list[tuple[Any, ...]], seed: int
) -> None:
    """Whatever order the steps arrive in, the answers are those of a replay in time order."""
    store.execute("MATCH (n) DETACH DELETE n", write=True)
    play(store, steps, seed)
    times = [T0, *(at for at, _ in timed(steps)), T0 + STEP * (len(steps) + 1)]
    models = {at: Model(steps, at) for at in times}
    for at, model in models.items():
        for name in DATASETS:
            start = urn(name)
            for direction in lineage.DIRECTIONS:
                want = (
                    model.reach(start, "FLOWS_TO", direction == "downstream")
                    if start in model.present
                    else {"(not there)"}
                )
                assert answered(store, start, direction, at) == want, (at, name, direction)
        for name in ("a", "o1"):
            column = urn(name) + "#x"
            if _owner(column) in model.present and column in model.columns:
                found = lineage.column_lineage(store, column, "downstream", as_of=at)
                assert {r.urn for r in found} == model.reach(column, "FEEDS", True), (at, name)
        if urn("a") in model.present:
            readers = lineage.impact(store, urn("a"), as_of=at).transformations
            assert {r.urn for r in readers} == {
                job_urn(j)
                for j in JOBS
                if any(("READS_FROM", job_urn(j), u) in model.things() for u in
                       [urn("a"), *(x for x in model.reach(urn("a"), "FLOWS_TO", True))])
            }  # fmt: skip
    for since in times:
        for until in times:
            if until > since:
                before, after = models[since].things(), models[until].things()
                assert diff_things(store, since, until) == (after - before, before - after), (
                    since,
                    until,
                )
    # now (no --as-of) is the end of the sequence
    end = models[times[-1]]
    for name in DATASETS:
        want = end.reach(urn(name), "FLOWS_TO", True) if urn(name) in end.present else None
        if want is not None:
            assert {r.urn for r in lineage.traverse(store, urn(name), "downstream")} == want


def changed_at_of(store: GraphStore, kind: str, src: str, dst: str) -> Any:
    rows = store.execute(
        f"MATCH ({{urn: $src}})-[e:{kind}]->({{urn: $dst}}) RETURN e.changed_at",
        {"src": src, "dst": dst},
        write=False,
    ).rows
    return rows[0][0]


@pytest.mark.parametrize("store", ["falkordb"], indirect=True)
def test_diff_finds_an_edge_whose_only_change_is_a_stop(store: GraphStore) -> None:
    """`diff` picks what changed through `changed_at`: an edge first seen before the window
    whose only change in it is a stop (b no longer read) has its changed_at, and its source's,
    moved to the stop, so it is listed; without changed_at it would not be."""
    play(store, [("run", "j1", ("a", "b"), ("o1",)), ("flush",), ("run", "j1", ("a",), ("o1",))])
    first, stop = T0 + STEP, T0 + 3 * STEP
    flow = ("FLOWS_TO", urn("b"), urn("o1"))
    assert changed_at_of(store, *flow) == stop
    assert changed_at_of(store, "FLOWS_TO", urn("a"), urn("o1")) == first
    nodes = "MATCH (n {urn: $urn}) RETURN n.changed_at"
    assert store.execute(nodes, {"urn": urn("b")}, write=False).rows == [[stop]]  # its edge's
    assert store.execute(nodes, {"urn": urn("a")}, write=False).rows == [[first]]
    added, removed = diff_things(store, stop - 1, stop)
    assert added == set()
    assert removed == {flow, ("READS_FROM", job_urn("j1"), urn("b")),
                       ("FEEDS", urn("b") + "#x", urn("o1") + "#x")}  # fmt: skip
    store.execute(
        "MATCH ({urn: $src})-[e:FLOWS_TO]->({urn: $dst}) SET e.changed_at = $first",
        {"src": flow[1], "dst": flow[2], "first": first},
        write=True,
    )
    assert flow not in diff_things(store, stop - 1, stop)[1]  # found through changed_at only


@pytest.mark.parametrize("store", ["falkordb"], indirect=True)
def test_the_diff_statements_start_from_range_indexes(store: GraphStore) -> None:
    """Each part of the diff's statements starts from a range index on the embedded store
    (edges from their source nodes' changed_at), never from a scan of every asset or edge."""
    assert isinstance(store, FalkorDBStore)
    window = {"since": T0, "until": T0 + STEP}
    names = ("history_changed_assets", "history_changed_columns", "history_changed_edges",
             "history_schema_changes")  # fmt: skip
    plans = {name: "\n".join(store._graph.explain(statement(name), window).plan) for name in names}
    for name, plan in plans.items():
        assert "Label Scan" not in plan and "All Node Scan" not in plan, (name, plan)
    assert plans["history_changed_edges"].count("Node By Index Scan") == 3  # one per source
    assert plans["history_changed_columns"].count("Node By Index Scan") == 2
    assert "Node By Index Scan" in plans["history_changed_assets"]
    assert "Node By Index Scan" in plans["history_schema_changes"]


@pytest.mark.parametrize("store", ["falkordb"], indirect=True)
def test_s3_deletion_and_return_move_changed_at(store: GraphStore) -> None:
    """The S3 writers keep changed_at too: an object deleted by a complete scan, and back on a
    later one, is listed by diff in both windows."""
    obj, dataset = "s3://lake/t/part-0", "s3://lake/t/"
    row = {"urn": obj, "dataset": dataset, "name": "part-0", "size": 1,
           "storage_class": "STANDARD", "last_modified": T0, "access_tier": None}  # fmt: skip
    params = {"bucket": "lake", "region": None}
    store.run("s3_merge_datasets", {**params, "rows": [{"urn": dataset, "name": "t/", "seen": T0}]})
    store.run("s3_merge_files", {"rows": [{**row, "seen": T0}]})
    store.run("s3_soft_delete", {"root": "s3://lake/t/", "started": T0 + STEP})
    store.run("s3_merge_files", {"rows": [{**row, "seen": T0 + 2 * STEP}]})
    assert diff_things(store, T0, T0 + STEP) == (set(), {("Asset", obj, None)})
    assert diff_things(store, T0 + STEP, T0 + 2 * STEP) == ({("Asset", obj, None)}, set())


# --- the CLI ---------------------------------------------------------------------------------


DAY = 86_400_000
DAY1 = 1709251200000  # 2024-03-01


@pytest.fixture(scope="module")
def drifted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A job that read a and b into o1, then only a (b stopped on day 2), then both again
    (day 3); then c is harvested on day 4 into d by another job. A graph harvested by the CLI."""
    lines = []
    runs = [(1, "daily", ["a", "b"], "o1"), (2, "daily", ["a"], "o1"),
            (3, "daily", ["a", "b"], "o1"), (4, "other", ["c"], "d")]  # fmt: skip
    for day, job, inputs, output in runs:
        ev = event(0, job, inputs, [output])
        ev["eventTime"] = f"2024-03-0{day}T00:00:00Z"
        ev["run"] = {"runId": f"run-{day}"}
        lines.append(json.dumps(ev))
    root = tmp_path_factory.mktemp("history")
    (root / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    harvested = CliRunner().invoke(
        cli, ["--data-dir", str(root / "g"), "harvest", "openlineage", str(root / "events.jsonl")]
    )
    assert harvested.exit_code == 0, harvested.output
    return root / "g"


def run(data_dir: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--data-dir", str(data_dir), *args])
    assert result.exit_code == 0, result.output
    return result


def test_cli_as_of_answers_the_graph_of_that_time(drifted: Path) -> None:
    def upstream(*args: str) -> set[str]:
        answer = json.loads(run(drifted, "upstream", urn("o1"), "--format", "json", *args).stdout)
        return {a["urn"] for a in answer["assets"]}

    assert upstream() == {urn("a"), urn("b")}  # now: b came back on day 3
    assert upstream("--as-of", "2024-03-01") == {urn("a"), urn("b")}
    assert upstream("--as-of", "2024-03-02T12:00:00Z") == {urn("a")}
    assert upstream("--as-of", str(DAY1 + 2 * DAY)) == {urn("a"), urn("b")}
    text = run(drifted, "upstream", urn("o1"), "--as-of", "2024-03-02").output
    assert text.splitlines()[0] == (
        f"upstream of {urn('o1')}: 1 asset(s) within 20 hop(s) as of 2024-03-02 00:00:00Z"
    )
    path = run(drifted, "path", urn("b"), urn("o1"), "--as-of", "2024-03-02").output
    assert path.startswith(f"no path from {urn('b')} to {urn('o1')} within 10 hop(s) as of")
    assert "1 hop" in run(drifted, "path", urn("b"), urn("o1"), "--as-of", "2024-03-03").output
    impact = run(drifted, "impact", urn("b"), "--as-of", "2024-03-02", "--format", "json")
    assert json.loads(impact.stdout)["assets"] == []
    columns = run(drifted, "columns", urn("b") + "#x", "--as-of", "2024-03-02", "--format", "json")
    assert json.loads(columns.stdout)["downstream"] == []
    before = CliRunner().invoke(
        cli, ["--data-dir", str(drifted), "upstream", urn("d"), "--as-of", "2024-03-03"]
    )
    assert before.exit_code != 0
    assert "was first seen at 2024-03-04 00:00:00Z, after 2024-03-03 00:00:00Z" in before.output


def test_cli_diff_lists_what_was_added_and_removed(drifted: Path) -> None:
    removed = json.loads(
        run(drifted, "diff", "--since", "2024-03-01", "--until", "2024-03-02", "--format",
            "json").output
    )  # fmt: skip
    assert removed["added"] == []
    assert {(c["what"], c["urn"], c["to"]) for c in removed["removed"]} == {
        ("FLOWS_TO", urn("b"), urn("o1")),
        ("READS_FROM", job_urn("daily"), urn("b")),
        ("FEEDS", urn("b") + "#x", urn("o1") + "#x"),
    }
    assert {c["at"] for c in removed["removed"]} == {DAY1 + DAY}
    text = run(drifted, "diff", "--since", "2024-03-02", "--until", "2024-03-03").output
    assert text.splitlines()[0] == (
        "3 added, 0 removed between 2024-03-02 00:00:00Z and 2024-03-03 00:00:00Z"
    )
    # around an asset: c and d (day 4) are elsewhere
    around = run(drifted, "diff", urn("o1"), "--since", "2024-02-01", "--depth", "1",
                 "--format", "json")  # fmt: skip
    assert {c["urn"] for c in json.loads(around.stdout)["added"] if c["what"] == "Asset"} == {
        urn("a"),
        urn("b"),
        urn("o1"),
    }
    whole = json.loads(run(drifted, "diff", "--since", "2024-02-01", "--format", "json").stdout)
    assert {urn("c"), urn("d")} <= {c["urn"] for c in whole["added"]}
    for fmt, mark in (("mermaid", "flowchart"), ("dot", "digraph"), ("tree", "added:")):
        out = run(
            drifted, "diff", "--since", "2024-03-01", "--until", "2024-03-02", "--format", fmt
        )
        assert mark in out.output
    empty = run(drifted, "diff", "--since", "2024-03-04T01:00:00Z").output
    assert empty.startswith("no changes between 2024-03-04 01:00:00Z and ")


def test_cli_history_is_an_assets_timeline(drifted: Path) -> None:
    answer = json.loads(run(drifted, "history", urn("b"), "--format", "json").stdout)
    events = [(e["at"], e["subject"], e["what"], e["other"]) for e in answer["events"]]
    assert (DAY1, urn("b"), "first seen", None) in events
    assert (DAY1, urn("b"), "flows to", urn("o1")) in events
    assert (DAY1 + DAY, urn("b"), "stopped: flows to", urn("o1")) in events
    assert (DAY1 + 2 * DAY, urn("b"), "resumed: flows to", urn("o1")) in events
    assert (DAY1 + DAY, urn("b"), "stopped: read by", job_urn("daily")) in events
    assert (DAY1 + DAY, urn("b") + "#x", "stopped: feeds", urn("o1") + "#x") in events
    assert [e[0] for e in events] == sorted(e[0] for e in events)
    text = run(drifted, "history", urn("b")).output
    assert text.startswith(f"history of {urn('b')}: {len(events)} event(s)")
