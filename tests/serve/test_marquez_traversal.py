"""The Marquez lineage traversal (one round trip per job level) against a plain breadth-first
search over the same generated graph, kept in Python: cycles, a job that reads and writes one
dataset, deleted datasets (also as the start), job starts, depths 0, 1, 2 and 20."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from lineagegraph import identity
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import NO_FOLD_RULES
from lineagegraph.model import Asset, Transformation
from lineagegraph.serve import marquez

T0 = 1_700_000_000_000
Edge = tuple[str, str, str]  # (job urn, asset urn, READS_FROM | WRITES_TO)


@dataclass
class Generated:
    """A random lineage graph as the test knows it, independent of the store."""

    assets: list[str]
    jobs: list[str]
    edges: set[Edge] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)


def generate(seed: int) -> Generated:
    rnd = random.Random(seed)
    graph = Generated([f"s3://ref/a{i}" for i in range(40)], [])
    for i in range(35):
        job = f"openlineage://ref/j{i}"
        graph.jobs.append(job)
        # any asset, earlier or later: cycles through jobs are common
        for asset in rnd.sample(graph.assets, rnd.randint(0, 3)):
            graph.edges.add((job, asset, "READS_FROM"))
        for asset in rnd.sample(graph.assets, rnd.randint(0, 2)):
            graph.edges.add((job, asset, "WRITES_TO"))
    loop = graph.jobs[0], graph.assets[0]  # reads and writes the same dataset
    graph.edges |= {(*loop, "READS_FROM"), (*loop, "WRITES_TO")}
    graph.deleted = set(rnd.sample(graph.assets, 8))
    return graph


def load(store: GraphStore, graph: Generated) -> None:
    writer = GraphWriter(store)
    writer.add_all(Asset(a, "Dataset", "s3", a.rsplit("/", 1)[1], T0) for a in graph.assets)
    for job in graph.jobs:
        reads = tuple(a for j, a, rel in sorted(graph.edges) if j == job and rel == "READS_FROM")
        writes = tuple(a for j, a, rel in sorted(graph.edges) if j == job and rel == "WRITES_TO")
        name = job.rsplit("/", 1)[1]
        writer.add(
            Transformation(job, "openlineage", name, f"run-{name}", T0, reads=reads, writes=writes)
        )
    writer.flush()
    for asset in graph.deleted:
        store.execute(
            "MATCH (a:Asset {urn: $u}) SET a.deleted_at = $t", {"u": asset, "t": T0}, write=True
        )


def reference(graph: Generated, start: marquez.Node, depth: int, deleted: bool) -> set[Edge]:
    """Marquez's answer by its definition: jobs within `depth` job levels of the start, both
    ways, the datasets they touch (present ones unless `deleted`), and every edge between
    them. Returns the edges, plus (urn, "", "") for each node so lone nodes count too."""

    def present(asset: str) -> bool:
        return deleted or asset not in graph.deleted

    def touching(jobs: set[str]) -> set[str]:
        return {a for j, a, _ in graph.edges if j in jobs and present(a)}

    if start.type == "DATASET":
        jobs: set[str] = set()
        assets = frontier = {start.urn}
        levels = 0
    else:
        jobs, levels = {start.urn}, 1
        assets = frontier = touching(jobs)
    while frontier and levels < depth:
        new_jobs = {j for j, a, _ in graph.edges if a in frontier} - jobs
        if not new_jobs:
            break
        jobs, levels = jobs | new_jobs, levels + 1
        frontier = touching(new_jobs) - assets
        assets = assets | frontier
    edges = {e for e in graph.edges if e[0] in jobs and e[1] in assets}
    return edges | {(urn, "", "") for urn in jobs | assets}


def answered(answer: dict[str, object], graph: Generated) -> set[Edge]:
    """The same form as `reference`, read back from the API's answer."""
    urn_of = {_id("DATASET", a): a for a in graph.assets}
    urn_of.update((_id("JOB", j), j) for j in graph.jobs)
    found: set[Edge] = set()
    nodes = answer["graph"]
    assert isinstance(nodes, list)
    for node in nodes:
        found.add((urn_of[node["id"]], "", ""))
        for edge in node["outEdges"]:
            origin, destination = urn_of[edge["origin"]], urn_of[edge["destination"]]
            job_first = node["type"] == "JOB"
            found.add(
                (origin, destination, "WRITES_TO")
                if job_first
                else (destination, origin, "READS_FROM")
            )
            assert edge in next(n for n in nodes if n["id"] == edge["destination"])["inEdges"]
    return found


def _id(kind: marquez.NodeType, urn: str) -> str:
    if kind == "DATASET":
        return marquez.node_id(kind, *identity.openlineage_name(urn))
    return marquez.node_id(kind, *identity.openlineage_job_name(urn, urn.rsplit("/", 1)[1]))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_traversal_matches_a_plain_search(store: GraphStore, seed: int) -> None:
    graph = generate(seed)
    load(store, graph)
    starts = [marquez.Node(a, "DATASET", *identity.openlineage_name(a)) for a in graph.assets]
    starts += [marquez.Node(j, "JOB", "ref", j.rsplit("/", 1)[1]) for j in graph.jobs]
    checked = 0
    for start in starts[::3]:
        for depth in (0, 1, 2, 20):
            for deleted in (False, True):
                answer = marquez.lineage_graph(
                    store, start, depth, NO_FOLD_RULES, include_deleted=deleted
                )
                expected = reference(graph, start, depth, deleted)
                assert answered(answer, graph) == expected, (start.urn, depth, deleted)
                checked += len(expected)
    assert checked > 500  # the graphs are not trivially small
    # the generated graphs hold what the test is about
    assert graph.deleted and any(s.urn in graph.deleted for s in starts[::3])
