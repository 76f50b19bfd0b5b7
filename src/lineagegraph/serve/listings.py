"""Marquez's listings and column lineage, which its UI and client libraries call first:

    GET /api/v1/namespaces/{namespace}                    a Namespace
    GET /api/v1/namespaces/{namespace}/datasets           a DatasetList (limit, offset)
    GET /api/v1/namespaces/{namespace}/datasets/{name}    a Dataset (asOf)
    GET .../datasets/{name}/versions                      a DatasetVersionList: a version per
                                                          schema change (limit, offset, asOf)
    GET /api/v1/namespaces/{namespace}/jobs               a JobList (limit, offset)
    GET /api/v1/namespaces/{namespace}/jobs/{name}        a Job
    GET /api/v1/namespaces/{namespace}/jobs/{name}/runs   a RunList (limit, offset; serve.runs)
    GET /api/v1/jobs/runs/{id}                            a Run
    GET /api/v1/column-lineage?nodeId=datasetField:NS:NAME:FIELD&depth=N&withDownstream=false
                                    (or nodeId=dataset:NS:NAME, job:NS:NAME)
    GET /api/v1/tags                                      a TagList: every classification

A dataset's `tags` and its fields' are its classifications, own and derived along lineage
(docs/classifications.md), each named `key` or `key=value`.

Namespaces and names hold '/' (`s3://bucket`, `sales/2024`), so clients send them
percent-encoded (`s3:%2F%2Fbucket`); the path is split on its raw '/' before decoding, and a
name may also come unencoded after `datasets/` or `jobs/`. Names map to urns and back through
lineagegraph.identity, so what a listing shows opens its dataset or job exactly.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import Response

from lineagegraph import identity
from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.identity import FoldRules, IdentityError, split_column_urn
from lineagegraph.output import time_text
from lineagegraph.questions.lineage import suggest
from lineagegraph.questions.schemas import history_of
from lineagegraph.questions.tags import derive_at, tag_list
from lineagegraph.schemas import fields_of
from lineagegraph.serve import marquez, runs
from lineagegraph.serve.events import BadRequest
from lineagegraph.serve.guard import error
from lineagegraph.serve.marquez import BadNodeId, NodeNotFound, dataset_data, job_data
from lineagegraph.serve.reading import answer, flag_param, int_param, text_param, time_param
from lineagegraph.tags_settings import TagSettings

PREFIX = "/api/v1/namespaces/"
LIMIT, MAX_LIMIT = 100, 10_000  # Marquez's default page
MAX_OFFSET = 10**9
FIELD = "datasetField"


def datasets(
    store: GraphStore, namespace: str, limit: int, offset: int, tags: TagSettings
) -> dict[str, Any]:
    """Marquez's DatasetList: one page of the namespace's datasets, by urn."""
    where = _dataset_prefix(namespace)
    rows = store.read("serve_namespace_assets", {**where, "skip": offset, "limit": limit})
    [count] = store.read("serve_namespace_asset_count", where)
    found = with_types(store, with_tags(store, tags, [dataset_data(r) for r in rows]))
    return {"totalCount": count["total"], "datasets": found}


def with_tags(
    store: GraphStore, settings: TagSettings, found: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The datasets with Marquez's `tags` (their own and derived classifications, named
    `key=value`) and `fields`, each column with its tags: one slice of the graph upstream of
    them all (lineagegraph.questions.tags)."""
    urns = [d["urn"] for d in found]
    columns: dict[str, list[str]] = {}
    for chunk in chunks(urns, 5000):
        for row in store.read("tags_columns_of", {"urns": chunk}):
            columns.setdefault(row["asset"], []).append(row["column"])
    seeds = [(u, None) for u in urns] + [(c, a) for a, cs in columns.items() for c in cs]
    tagged = derive_at(store, settings, seeds)
    for data in found:
        data["tags"] = tagged.tag_names(data["urn"])
        data["fields"] = [
            {"name": split_column_urn(c)[1], "type": None, "tags": tagged.tag_names(c),
             "description": None}
            for c in sorted(columns.get(data["urn"], []))
        ]  # fmt: skip
    return found


def with_types(
    store: GraphStore, found: list[dict[str, Any]], as_of: int | None = None
) -> list[dict[str, Any]]:
    """The datasets' fields typed as their newest schema version (reported by `as_of`, if
    given) says, whichever source reported it, and that version as Marquez's
    `currentVersion`."""
    urns = [d["urn"] for d in found]
    newest = {
        row["urn"]: row
        for chunk in chunks(urns, 5000)
        for row in store.read("serve_schema_newest", {"urns": chunk, "as_of": as_of})
    }
    for data in found:
        row = newest.get(data["urn"])
        if row is not None:
            types = dict(fields_of(row["fields"]))
            for f in data["fields"]:
                f["type"] = types.get(f["name"])
            data["currentVersion"] = version_id(data["urn"], row["source"], row["at"])
    return found


def version_id(urn: str, source: str, at: int) -> str:
    """The UUID of a schema version as Marquez names a dataset version: stable for it."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{urn}#schema:{source}:{at}"))


def _dataset_prefix(namespace: str) -> dict[str, str]:
    """The urns of a dataset namespace: its root and what its datasets' urns start with (the
    inverse of identity.openlineage_name)."""
    if namespace == "file":
        return {"root": "file://", "prefix": "file://"}
    if "://" in namespace:
        return {"root": namespace, "prefix": namespace.rstrip("/") + "/"}
    return {"root": f"{namespace}:///", "prefix": f"{namespace}:///"}


def dataset(
    store: GraphStore,
    namespace: str,
    name: str,
    rules: FoldRules,
    tags: TagSettings,
    as_of: int | None = None,
) -> dict[str, Any]:
    """Marquez's Dataset, deleted ones included (`deleted: true`); with `as_of`, its current
    version and field types are those of its newest schema version reported by then (its
    fields and tags are today's), and one first seen after it is not found."""
    urns = identity.openlineage_urns(namespace, name, rules)
    rows = {r["urn"]: r for r in store.read("serve_assets", {"urns": urns})}
    for urn in urns:
        if urn in rows:
            first = rows[urn]["first_seen"]
            if as_of is not None and first is not None and first > as_of:
                raise NodeNotFound(
                    f"dataset {name!r} in namespace {namespace!r} was first seen at "
                    f"{time_text(first)}, after {time_text(as_of)}",
                    [],
                )
            data = with_tags(store, tags, [dataset_data(rows[urn])])
            return with_types(store, data, as_of)[0]
    close = suggest(store, urns[0]) if urns else []
    raise NodeNotFound(f"no dataset {name!r} in namespace {namespace!r}", close)


def _dataset_urn(store: GraphStore, namespace: str, name: str, rules: FoldRules) -> str | None:
    urns = identity.openlineage_urns(namespace, name, rules)
    found = {r["urn"] for r in store.read("serve_assets", {"urns": urns})}
    return next((urn for urn in urns if urn in found), None)


def dataset_or_versions(
    store: GraphStore,
    namespace: str,
    name: str,
    page: tuple[int, int],
    rules: FoldRules,
    tags: TagSettings,
    as_of: int | None = None,
) -> dict[str, Any]:
    """A name ending in `/versions` asks for the versions of the dataset before it (Marquez's
    DatasetVersionList), unless there is no such dataset and the whole name is one."""
    owner, sep, last = name.rpartition("/")
    if sep and last == "versions" and owner:
        urn = _dataset_urn(store, namespace, owner, rules)
        if urn is not None:
            return dataset_versions(store, urn, *page, as_of=as_of)
    return dataset(store, namespace, name, rules, tags, as_of)


def dataset_versions(
    store: GraphStore, urn: str, limit: int, offset: int, as_of: int | None = None
) -> dict[str, Any]:
    """A version per schema change as each source reports it (lineagegraph.schemas), newest
    first, in the shape of Marquez's DatasetVersion; `source` says which source reported it.
    With `as_of`, only the versions reported by then (`lastSeenAt` is still the graph's)."""
    namespace, name = identity.openlineage_name(urn)
    history = history_of(store, urn)
    found = sorted(
        (
            (source, v)
            for source, vs in history.versions.items()
            for v in vs
            if as_of is None or v.at <= as_of
        ),
        key=lambda sv: (-sv[1].at, sv[0]),
    )
    versions: list[dict[str, Any]] = []
    for source, v in found[offset : offset + limit]:
        version = version_id(urn, source, v.at)
        versions.append({
            "id": {"namespace": namespace, "name": name, "version": version},
            "type": "DB_TABLE", "name": name, "physicalName": name,
            "createdAt": marquez.iso(v.at), "version": version, "namespace": namespace,
            "sourceName": namespace,
            "fields": [
                {"name": n, "type": t, "tags": [], "description": None} for n, t in v.fields
            ],
            "tags": [], "description": None, "createdByRun": None, "facets": {},
            # lineagegraph's own, beside Marquez's:
            "source": source, "lastSeenAt": marquez.iso(v.last), "urn": urn,
        })  # fmt: skip
    return {"totalCount": len(found), "versions": versions}


def jobs(store: GraphStore, namespace: str, limit: int, offset: int) -> dict[str, Any]:
    """Marquez's JobList: one page of the namespace's jobs, by urn."""
    prefixes = [f"openlineage://{namespace}/"]
    if "://" in namespace:
        prefixes.append(namespace.rstrip("/") + "/")
    urns = [
        row["urn"]
        for row in store.read("serve_transformations_under", {"prefixes": prefixes})
        if identity.openlineage_job_name(row["urn"], row["name"] or "")[0] == namespace
    ]
    return {"totalCount": len(urns), "jobs": _jobs(store, urns[offset : offset + limit])}


def job(store: GraphStore, namespace: str, name: str) -> dict[str, Any]:
    """Marquez's Job, with its inputs and outputs."""
    return _jobs(store, [job_urn(store, namespace, name)])[0]


def job_urn(store: GraphStore, namespace: str, name: str) -> str:
    """The urn of the transformation a job's OpenLineage namespace and name name."""
    urns = identity.openlineage_job_urns(namespace, name)
    found = {r["urn"] for r in store.read("serve_jobs", {"urns": urns})}
    for urn in urns:
        if urn in found:
            return urn
    raise NodeNotFound(f"no job {name!r} in namespace {namespace!r}", [])


def job_runs(
    store: GraphStore, namespace: str, name: str, limit: int, offset: int
) -> dict[str, Any]:
    """Marquez's RunList of a job."""
    return runs.run_list(store, job_urn(store, namespace, name), limit, offset)


def _jobs(store: GraphStore, urns: list[str]) -> list[dict[str, Any]]:
    rows = {r["urn"]: r for r in store.read("serve_jobs", {"urns": urns})}
    reads: dict[str, list[str]] = {urn: [] for urn in urns}
    writes: dict[str, list[str]] = {urn: [] for urn in urns}
    held = {"urns": urns, "include_deleted": False, "as_of": None}
    for row in store.read("serve_job_assets", held):
        (reads if row["rel"] == "READS_FROM" else writes)[row["job"]].append(row["asset"])
    return [job_data(rows[u], sorted(reads[u]), sorted(writes[u])) for u in urns if u in rows]


def namespace(store: GraphStore, name: str) -> dict[str, Any]:
    """Marquez's Namespace."""
    for found in marquez.namespaces(store)["namespaces"]:
        if found["name"] == name:
            return found
    raise NodeNotFound(f"no namespace {name!r} in the graph", [])


# --- column lineage -------------------------------------------------------------------------


def column_lineage(
    store: GraphStore, text: str, depth: int, downstream: bool, rules: FoldRules
) -> dict[str, Any]:
    """Marquez's column LineageGraph: the fields upstream of the start within `depth` FEEDS
    hops (and downstream with `withDownstream`), as DATASET_FIELD nodes. Edges are Marquez's:
    an input's outEdges run input -> field, a field's inEdges field -> input."""
    starts = resolve_fields(store, text, rules)
    feeds: set[tuple[str, str]] = set()  # (input column, the column it feeds)
    steps = [("lineage_column_upstream_step", False)]
    if downstream:
        steps.append(("lineage_column_downstream_step", True))
    for statement, forward in steps:
        seen, frontier = set(starts), sorted(starts)
        for _ in range(depth):
            params = {"frontier": frontier, "include_deleted": False, "as_of": None}
            rows = store.read(statement, params)
            feeds |= {
                (r["reached_from"], r["urn"]) if forward else (r["urn"], r["reached_from"])
                for r in rows
            }
            frontier = sorted({r["urn"] for r in rows} - seen)
            seen.update(frontier)
            if not frontier:
                break
    urns = set(starts) | {u for edge in feeds for u in edge}
    fields = {r["urn"]: _field(r) for r in store.read("serve_columns", {"urns": sorted(urns)})}
    return {"graph": _field_nodes(fields, feeds)}


def _field(row: dict[str, Any]) -> dict[str, Any]:
    namespace, name = identity.openlineage_name(row["asset"])
    return {"namespace": namespace, "dataset": name, "datasetVersion": None,
            "field": row["name"], "transformationDescription": None,
            "transformationType": None}  # fmt: skip


def _field_id(field: dict[str, Any]) -> str:
    return f"{FIELD}:{field['namespace']}:{field['dataset']}:{field['field']}"


def _field_nodes(
    fields: dict[str, dict[str, Any]], feeds: set[tuple[str, str]]
) -> list[dict[str, Any]]:
    ins: dict[str, list[dict[str, str]]] = {urn: [] for urn in fields}
    outs: dict[str, list[dict[str, str]]] = {urn: [] for urn in fields}
    inputs: dict[str, list[dict[str, Any]]] = {urn: [] for urn in fields}
    for src, dst in sorted(feeds):
        if src not in fields or dst not in fields:
            continue
        source, target = _field_id(fields[src]), _field_id(fields[dst])
        outs[src].append({"origin": source, "destination": target})
        ins[dst].append({"origin": target, "destination": source})
        inputs[dst].append(fields[src])
    nodes: list[dict[str, Any]] = []
    for urn, f in fields.items():
        data: dict[str, Any] = {**f, "fieldType": None, "inputFields": inputs[urn], "urn": urn}
        nodes.append(
            {
                "id": _field_id(f),
                "type": "DATASET_FIELD",
                "data": data,
                "inEdges": ins[urn],
                "outEdges": outs[urn],
            }
        )
    return sorted(nodes, key=lambda n: n["id"])


def resolve_fields(store: GraphStore, text: str, rules: FoldRules) -> list[str]:
    """The column urns a node id starts from: `datasetField:NS:NAME:FIELD` one column,
    `dataset:NS:NAME` every column of the dataset, `job:NS:NAME` every column of the datasets
    the job writes (as Marquez, which takes those of its latest run's outputs)."""
    kind, sep, rest = text.partition(":")
    if kind == "job":
        outputs = marquez.job_outputs(store, marquez.resolve(store, text, rules))
        rows = store.read("tags_columns_of", {"urns": outputs})
        if not rows:
            raise NodeNotFound(f"job {rest!r} writes no dataset with columns in the graph", [])
        return sorted(r["column"] for r in rows)
    if kind == "dataset":
        asset = marquez.resolve(store, text, rules).urn
        rows = store.read("lineage_columns_of", {"asset": asset, "limit": MAX_LIMIT})
        names = [r["name"] for r in rows]
        if not names:
            raise NodeNotFound(f"dataset {rest!r} has no columns in the graph", [])
        return [identity.column_urn(asset, name) for name in names]
    if kind != FIELD or not sep:
        raise BadNodeId(f"nodeId {text!r} must start with '{FIELD}:', 'dataset:' or 'job:'")
    candidates: list[str] = []
    colons = [m.start() for m in re.finditer(":", rest)][::-1][: marquez.MAX_SPLITS]
    for colon in colons:  # the field's own ':' are rarer than the name's: rightmost first
        for ns, name in marquez.splits(rest[:colon]):
            for asset in identity.openlineage_urns(ns, name, rules):
                with contextlib.suppress(IdentityError):
                    candidates.append(identity.column_urn(asset, rest[colon + 1 :]))
    if not candidates:
        raise BadNodeId(f"nodeId {text!r} must be {FIELD}:{{namespace}}:{{name}}:{{field}}")
    found = {r["urn"] for r in store.read("serve_columns", {"urns": candidates})}
    for urn in candidates:
        if urn in found:
            return [urn]
    raise NodeNotFound(f"no field {rest!r} in the graph", suggest(store, candidates[0]))


# --- routes ---------------------------------------------------------------------------------


async def _ask(request: Request, question: Callable[..., Any], *args: Any) -> Response:
    try:
        return await answer(request, question, *args)
    except BadNodeId as exc:
        return error(400, str(exc))
    except NodeNotFound as exc:
        return error(404, str(exc), suggestions=exc.suggestions)


def _segments(request: Request) -> list[str]:
    """The decoded segments after /api/v1/namespaces/, split on the raw path's '/'."""
    raw: bytes = request.scope.get("raw_path") or request.url.path.encode()
    text = raw.decode("latin-1").split("?", 1)[0][len(PREFIX) :]
    try:
        return [unquote(part, errors="strict") for part in text.split("/")]
    except UnicodeDecodeError:
        raise BadRequest("the path is not percent-encoded UTF-8") from None


async def namespace_route(request: Request) -> Response:
    """Everything under /api/v1/namespaces/{namespace}."""
    rules = request.app.state.service.rules
    tags = request.app.state.service.settings.tags
    try:
        ns, *rest = _segments(request)
        if not ns:
            raise BadRequest("the namespace is empty")
        if not rest:
            return await _ask(request, namespace, ns)
        what, name = rest[0], "/".join(rest[1:])
        if what == "jobs" and len(rest) > 2 and rest[-1] == "runs":  # .../jobs/{job}/runs
            page = int_param(request, "limit", LIMIT, 1, MAX_LIMIT)
            skip = int_param(request, "offset", 0, 0, MAX_OFFSET)
            return await _ask(request, job_runs, ns, "/".join(rest[1:-1]), page, skip)
        if what not in ("datasets", "jobs") or (len(rest) > 1 and not name):
            return error(404, f"no route {request.url.path!r}")
        limit = int_param(request, "limit", LIMIT, 1, MAX_LIMIT)
        offset = int_param(request, "offset", 0, 0, MAX_OFFSET)
        if name:
            if what == "datasets":
                paging, as_of = (limit, offset), time_param(request, "asOf")
                return await _ask(
                    request, dataset_or_versions, ns, name, paging, rules, tags, as_of
                )
            return await _ask(request, job, ns, name)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    if what == "datasets":
        return await _ask(request, datasets, ns, limit, offset, tags)
    return await _ask(request, jobs, ns, limit, offset)


async def run_route(request: Request) -> Response:
    """Marquez's Run: GET /api/v1/jobs/runs/{id}."""
    return await _ask(request, runs.run, request.path_params["id"])


async def tags_route(request: Request) -> Response:
    """Marquez's TagList: {tags: [{name, description}]}."""
    return await _ask(request, _tag_list, request.app.state.service.settings.tags)


def _tag_list(store: GraphStore, settings: TagSettings) -> dict[str, Any]:
    return {"tags": tag_list(store, settings)}


async def column_lineage_route(request: Request) -> Response:
    try:
        node = text_param(request, "nodeId")
        depth = int_param(request, "depth", marquez.DEFAULT_DEPTH, 1, marquez.MAX_DEPTH)
        downstream = flag_param(request, "withDownstream")
    except BadRequest as exc:
        return error(exc.status, str(exc))
    rules = request.app.state.service.rules
    return await _ask(request, column_lineage, node, depth, downstream, rules)
