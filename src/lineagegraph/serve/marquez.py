"""Marquez-compatible lineage: `GET /api/v1/lineage?nodeId=...&depth=N` answered from the graph.

Marquez's lineage graph has two kinds of node, datasets and jobs, with an edge from a dataset to
each job that reads it and from a job to each dataset it writes; node ids are
`dataset:{namespace}:{name}` and `job:{namespace}:{name}` in OpenLineage names. Here a dataset
is an :Asset, a job a :Transformation, and the edges its READS_FROM and WRITES_TO; names map to
urns and back through lineagegraph.identity. Like Marquez, the answer is everything connected to
the start within `depth` job levels, both ways.

Asset-to-asset lineage recorded without a transformation (a FLOWS_TO with an empty `via`: a
Snowflake view's OBJECT_DEPENDENCIES) has no :Transformation. It is shown as a job all the same
(a view is a job in OpenLineage terms), so that a Marquez client walks the chain that
`lineagegraph upstream` walks: one job per asset receiving such lineage, with the asset's own
namespace and name (`job:snowflake://acct:DB.S.V` for the view `snowflake://acct/DB.S.V`),
reading the asset's job-less inputs and writing the asset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from lineagegraph import identity
from lineagegraph.graph.store import GraphStore
from lineagegraph.identity import FoldRules
from lineagegraph.questions.lineage import suggest

NodeType = Literal["DATASET", "JOB"]
DEFAULT_DEPTH = 20
MAX_DEPTH = 100
MAX_SPLITS = 64  # colons tried when a node id's namespace and name are ambiguous
# Marquez's own reading of an id: the delimiter is a ':' not followed by '//' or a digit, so
# `s3://bucket` and `postgres://host:5432` stay whole namespaces.
_MARQUEZ_DELIMITER = re.compile(r":(?!//|\d)")


VIEW_JOB = "view-job:"
"""Prefix of the key of a job standing for job-less lineage into an asset (the asset's urn
follows). A transformation's urn starts with a scheme and `://`, so none starts so."""


def view_job(urn: str) -> str:
    """The key of the job standing for the job-less lineage into the asset `urn`."""
    return VIEW_JOB + urn


def view_of(job: str) -> str | None:
    """The asset whose job-less lineage the job key `job` stands for, or None (a real job)."""
    return job.removeprefix(VIEW_JOB) if job.startswith(VIEW_JOB) else None


class NodeNotFound(LookupError):
    """A node id that names nothing in the graph; `suggestions` are urns close to it."""

    def __init__(self, message: str, suggestions: list[str]) -> None:
        super().__init__(message)
        self.suggestions = suggestions


class BadNodeId(ValueError):
    """A node id that is not `dataset:NS:NAME` or `job:NS:NAME`."""


@dataclass(frozen=True)
class Node:
    """A node of the answer: its graph urn, its type and its Marquez id."""

    urn: str
    type: NodeType
    namespace: str
    name: str

    @property
    def id(self) -> str:
        return node_id(self.type, self.namespace, self.name)


def node_id(kind: NodeType, namespace: str, name: str) -> str:
    return f"{kind.lower()}:{namespace}:{name}"


def splits(rest: str) -> list[tuple[str, str]]:
    """Every (namespace, name) a node id's text may stand for, Marquez's reading first."""
    colons = [m.start() for m in re.finditer(":", rest)][:MAX_SPLITS]
    preferred = [m.start() for m in _MARQUEZ_DELIMITER.finditer(rest)][:1]
    order = preferred + [c for c in colons if c not in preferred]
    return [(rest[:c], rest[c + 1 :]) for c in order if 0 < c < len(rest) - 1]


def resolve(store: GraphStore, text: str, rules: FoldRules) -> Node:
    """The graph node a Marquez node id names; NodeNotFound lists close urns."""
    kind, sep, rest = text.partition(":")
    if not sep or kind not in ("dataset", "job"):
        raise BadNodeId(f"nodeId {text!r} must start with 'dataset:' or 'job:'")
    candidates: list[tuple[str, str, str]] = []  # (urn, namespace, name)
    for namespace, name in splits(rest):
        if kind == "dataset":
            urns = identity.openlineage_urns(namespace, name, rules)
        else:
            urns = identity.openlineage_job_urns(namespace, name)
        candidates += [(urn, namespace, name) for urn in urns]
    if not candidates:
        raise BadNodeId(f"nodeId {text!r} must be {kind}:{{namespace}}:{{name}}")
    statement = "serve_assets" if kind == "dataset" else "serve_jobs"
    found = {row["urn"] for row in store.read(statement, {"urns": [c[0] for c in candidates]})}
    for urn, namespace, name in candidates:
        if urn in found:
            return Node(urn, "DATASET" if kind == "dataset" else "JOB", namespace, name)
    if kind == "job":  # no transformation: perhaps the job of an asset's job-less lineage
        views = [
            (urn, ns, name)
            for ns, name in splits(rest)
            for urn in identity.openlineage_urns(ns, name, rules)
        ]
        found = {
            row["urn"] for row in store.read("serve_view_jobs", {"urns": [v[0] for v in views]})
        }
        for urn, namespace, name in views:
            if urn in found:
                return Node(view_job(urn), "JOB", namespace, name)
    raise NodeNotFound(f"no {kind} {rest!r} in the graph", suggest(store, candidates[0][0]))


def lineage(
    store: GraphStore, text: str, depth: int, rules: FoldRules, as_of: int | None = None
) -> dict[str, Any]:
    """The answer to `GET /api/v1/lineage?nodeId=TEXT&depth=DEPTH[&asOf=TIME]`."""
    return lineage_graph(store, resolve(store, text, rules), depth, rules, as_of=as_of)


def lineage_graph(
    store: GraphStore,
    start: Node,
    depth: int,
    rules: FoldRules,
    *,
    include_deleted: bool = False,
    as_of: int | None = None,
) -> dict[str, Any]:
    """Marquez's LineageGraph: {"graph": [GraphNode]} with every node within `depth` job
    levels of `start`, from the edges that hold now or held at `as_of` (epoch ms)."""
    held = {"include_deleted": include_deleted, "as_of": as_of}
    assets: set[str] = set()
    jobs: set[str] = set()
    edges: set[tuple[str, str, str]] = set()  # (job, asset, READS_FROM | WRITES_TO)
    level_jobs: list[str] = []  # the jobs found at the last level
    if start.type == "DATASET":
        assets.add(start.urn)
        frontier, levels = [start.urn], 0
    else:
        level_jobs, levels = [start.urn], 1
        jobs.add(start.urn)
        edges = _job_edges(store, start.urn, held)
        frontier = sorted({a for _, a, _ in edges} - assets)
        assets.update(frontier)
    while frontier and levels < depth:
        params = {"urns": frontier, "jobs": level_jobs, **held}
        found = _edges(store.read("serve_lineage_level", params))
        views = sorted(v for v in map(view_of, jobs) if v is not None)
        params = {"urns": frontier, "views": views, **held}
        found |= _view_edges(store.read("serve_view_jobs_level", params))
        level_jobs = sorted({j for j, _, _ in found} - jobs)
        if not level_jobs:
            break
        jobs.update(level_jobs)
        levels += 1
        edges |= found
        frontier = sorted({a for _, a, _ in found} - assets)
        assets.update(frontier)
    return {"graph": _graph_nodes(store, assets, jobs, edges, rules)}


def _edges(rows: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(row["job"], row["asset"], row["rel"]) for row in rows}


def _view_edges(rows: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """The edges of the jobs standing for job-less lineage (rows of serve_view_jobs_level)."""
    edges = set()
    for row in rows:
        job = view_job(row["view"])
        edges |= {(job, asset, "READS_FROM") for asset in row["reads"]}
        if row["shown"]:
            edges.add((job, row["view"], "WRITES_TO"))
    return edges


def _job_edges(store: GraphStore, job: str, held: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The datasets one job reads and writes: a transformation's, or those of the job standing
    for the job-less lineage into an asset. `held`: include_deleted and as_of."""
    view = view_of(job)
    if view is None:
        return _edges(store.read("serve_job_assets", {"urns": [job], **held}))
    params = {"urns": [view], "views": [], **held}
    rows = [r for r in store.read("serve_view_jobs_level", params) if r["view"] == view]
    (target,) = store.read("serve_assets", {"urns": [view]})
    shown = held["include_deleted"] or target["deleted_at"] is None
    return _view_edges([r | {"shown": shown} for r in rows])


def job_outputs(store: GraphStore, job: Node) -> list[str]:
    """The datasets present that a job writes: where Marquez's column lineage of a job starts."""
    held = {"include_deleted": False, "as_of": None}
    return sorted(a for _, a, rel in _job_edges(store, job.urn, held) if rel == "WRITES_TO")


def _graph_nodes(
    store: GraphStore,
    assets: set[str],
    jobs: set[str],
    edges: set[tuple[str, str, str]],
    rules: FoldRules,
) -> list[dict[str, Any]]:
    asset_rows = {r["urn"]: r for r in store.read("serve_assets", {"urns": sorted(assets)})}
    job_rows = {r["urn"]: r for r in store.read("serve_jobs", {"urns": sorted(jobs)})}
    views = sorted(v for v in map(view_of, jobs) if v is not None)
    job_rows.update(
        (view_job(r["urn"]), _view_job_row(r))
        for r in store.read("serve_view_jobs", {"urns": views})
    )
    ids = {urn: node_id("DATASET", *identity.openlineage_name(urn)) for urn in asset_rows}
    ids.update((urn, node_id("JOB", *job_name(row))) for urn, row in job_rows.items())
    inward: dict[str, list[dict[str, str]]] = {urn: [] for urn in ids}
    outward: dict[str, list[dict[str, str]]] = {urn: [] for urn in ids}
    reads: dict[str, list[str]] = {urn: [] for urn in job_rows}
    writes: dict[str, list[str]] = {urn: [] for urn in job_rows}
    for job, asset, rel in sorted(edges):
        if job not in ids or asset not in ids:
            continue  # an edge to a node past the depth
        origin, destination = (asset, job) if rel == "READS_FROM" else (job, asset)
        edge = {"origin": ids[origin], "destination": ids[destination]}
        outward[origin].append(edge)
        inward[destination].append(edge)
        (reads if rel == "READS_FROM" else writes)[job].append(asset)
    nodes = [
        _node(ids[urn], "DATASET", dataset_data(row), inward[urn], outward[urn])
        for urn, row in asset_rows.items()
    ]
    nodes += [
        _node(ids[urn], "JOB", job_data(row, reads[urn], writes[urn]), inward[urn], outward[urn])
        for urn, row in job_rows.items()
    ]
    return sorted(nodes, key=lambda n: n["id"])


def _node(
    id_: str, kind: NodeType, data: dict[str, Any], ins: list[Any], outs: list[Any]
) -> dict[str, Any]:
    return {"id": id_, "type": kind, "data": data, "inEdges": ins, "outEdges": outs}


def iso(ms: int | None) -> str | None:
    """Epoch milliseconds as the ISO-8601 text Marquez answers with."""
    if ms is None or ms < 0:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def dataset_data(row: dict[str, Any]) -> dict[str, Any]:
    namespace, name = identity.openlineage_name(row["urn"])
    return {
        "id": {"namespace": namespace, "name": name},
        "type": "DB_TABLE",
        "name": name,
        "physicalName": name,
        "namespace": namespace,
        "sourceName": namespace,
        "createdAt": iso(row["first_seen"]),
        "updatedAt": iso(row["last_seen"]),
        "lastModifiedAt": iso(row["last_seen"]),
        "fields": [],
        "tags": [],
        "description": None,
        "facets": {},
        "deleted": row["deleted_at"] is not None,
        # lineagegraph's own, beside Marquez's:
        "urn": row["urn"],
        "system": row["system"],
        "kind": row["kind"],
    }


def _view_job_row(row: dict[str, Any]) -> dict[str, Any]:
    """A serve_jobs row for the job standing for the job-less lineage into an asset: the
    asset's urn as `view`, and no urn, runs or last run of its own."""
    return {"urn": None, "view": row["urn"], "name": None, "system": row["system"],
            "first_seen": row["first_seen"], "last_seen": row["last_seen"], "runs": None,
            "last_run_id": None, "last_run_at": None}  # fmt: skip


def job_name(row: dict[str, Any]) -> tuple[str, str]:
    """A job's OpenLineage (namespace, name); the job of an asset's job-less lineage has the
    asset's."""
    if row.get("view"):
        return identity.openlineage_name(row["view"])
    return identity.openlineage_job_name(row["urn"], row["name"] or "")


def job_data(row: dict[str, Any], reads: Iterable[str], writes: Iterable[str]) -> dict[str, Any]:
    namespace, name = job_name(row)
    view = row.get("view")

    def named(urns: Iterable[str]) -> list[dict[str, str]]:
        return [
            dict(zip(("namespace", "name"), identity.openlineage_name(u), strict=True))
            for u in urns
        ]

    return {
        "id": {"namespace": namespace, "name": name},
        "type": "BATCH",
        "name": name,
        "simpleName": row["name"] or name,
        "namespace": namespace,
        "createdAt": iso(row["first_seen"]),
        "updatedAt": iso(row["last_seen"]),
        "inputs": named(reads),
        "outputs": named(writes),
        "location": None,
        "description": f"lineage into {view} recorded without a job" if view else None,
        "facets": {},
        "latestRun": None,
        # lineagegraph's own, beside Marquez's (`view`: the asset whose job-less lineage this
        # job stands for; it has no urn of its own):
        "urn": row["urn"],
        "view": view,
        "system": row["system"],
        "runs": row["runs"],
        "lastRunId": row["last_run_id"],
        "lastRunAt": iso(row["last_run_at"]),
    }


# --- Marquez's listings ---------------------------------------------------------------------

SEARCH_LIMIT = 10
MAX_SEARCH_LIMIT = 1000


def namespaces(store: GraphStore) -> dict[str, Any]:
    """Marquez's NamespaceList: every dataset namespace (scheme://authority) and job namespace,
    with when it was first and last seen."""
    spans: dict[str, list[int | None]] = {}

    def seen(name: str, first: int | None, last: int | None) -> None:
        span = spans.setdefault(name, [first, last])
        if first is not None and (span[0] is None or first < span[0]):
            span[0] = first
        if last is not None and (span[1] is None or last > span[1]):
            span[1] = last

    for row in store.read("serve_asset_namespaces"):
        # A urn with no authority (`file:///tmp/x`, `bigquery:///p.d.t`) is in a bare
        # namespace, as identity.openlineage_name names it: `file`, `bigquery`.
        name = row["namespace"].removesuffix("://")
        seen(name, row["first_seen"], row["last_seen"])
    for row in store.read("serve_job_names"):
        namespace, _ = identity.openlineage_job_name(row["urn"], row["name"] or "")
        seen(namespace, row["first_seen"], row["last_seen"])
    return {
        "namespaces": [
            {
                "name": name,
                "createdAt": iso(first),
                "updatedAt": iso(last),
                "ownerName": None,
                "description": None,
                "isHidden": False,
            }
            for name, (first, last) in sorted(spans.items())
        ]
    }


def search(store: GraphStore, text: str, kind: str | None, limit: int) -> dict[str, Any]:
    """Marquez's SearchResultList: datasets and jobs whose urn holds `text`, by name."""
    needle = text.lower()
    results: list[dict[str, Any]] = []
    if kind in (None, "DATASET"):
        for row in store.read("serve_search_assets", {"needle": needle, "limit": limit}):
            namespace, name = identity.openlineage_name(row["urn"])
            results.append(_hit("DATASET", namespace, name, row["last_seen"]))
    if kind in (None, "JOB"):
        for row in store.read("serve_search_jobs", {"needle": needle, "limit": limit}):
            namespace, name = identity.openlineage_job_name(row["urn"], row["name"] or "")
            results.append(_hit("JOB", namespace, name, row["last_seen"]))
    results = sorted(results, key=lambda r: (r["name"], r["namespace"]))[:limit]
    return {"totalCount": len(results), "results": results}


def _hit(kind: NodeType, namespace: str, name: str, last_seen: int | None) -> dict[str, Any]:
    return {
        "type": kind,
        "name": name,
        "namespace": namespace,
        "updatedAt": iso(last_seen),
        "nodeId": node_id(kind, namespace, name),
    }
