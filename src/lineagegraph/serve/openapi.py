"""The OpenAPI document served at /openapi.json: the routes, their parameters and answers."""

from __future__ import annotations

from typing import Any

from lineagegraph import __version__
from lineagegraph.harvest.openlineage import EVENT_TYPES
from lineagegraph.questions import lineage
from lineagegraph.reports.options import GROUPINGS, ORDERS
from lineagegraph.serve import eventlog, listings, marquez, reports
from lineagegraph.serve.explorer.pictures import MAX_EXPANDED, SIDES

# What a node id, a namespace and a name look like, as the routes check them.
NAMESPACE = r"^[A-Za-z][A-Za-z0-9+.-]*(://[A-Za-z0-9.-]+(:[0-9]{1,5})?)?$"
NAME = r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$"
_NS_TEXT, _NAME_TEXT = r"[A-Za-z][A-Za-z0-9+.-]*", r"[A-Za-z0-9_][A-Za-z0-9_./-]*"
FIELD_ID = (
    rf"^(datasetField:{_NS_TEXT}:{_NAME_TEXT}:[A-Za-z0-9_]+"
    rf"|(dataset|job):{_NS_TEXT}:{_NAME_TEXT})$"
)
_SEGMENT = r"(\*\*|[^/*]*(\*[^/*]+)*\*?)"
GLOB = rf"^(?=.){_SEGMENT}(/{_SEGMENT})*$"
NODE_ID = r"^(dataset|job):[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9_][A-Za-z0-9_./-]*$"

_ERROR = {
    "description": "An error: what went wrong and where",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}
_NODE_ID = {
    "name": "nodeId", "in": "query", "required": True,
    "description": "dataset:{namespace}:{name} or job:{namespace}:{name} (OpenLineage names)",
    "schema": {"type": "string", "pattern": NODE_ID},
    "example": "dataset:s3://bucket:sales/orders",
}  # fmt: skip
_DEPTH = {
    "name": "depth", "in": "query", "required": False,
    "description": "How many job levels to follow, both ways (1-100)",
    "schema": {"type": "integer", "default": marquez.DEFAULT_DEPTH, "minimum": 1,
               "maximum": marquez.MAX_DEPTH},
}  # fmt: skip


def _query(
    name: str, description: str, *, required: bool = False, kind: str = "string", **rules: Any
) -> Any:
    """A query parameter; `rules` are its schema's limits, as the route checks them (a required
    text is never empty)."""
    schema = {"type": kind, **({"minLength": 1} if required and kind == "string" else {}), **rules}
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": description,
        "schema": schema,
    }


def _int(name: str, description: str, low: int, high: int) -> Any:
    return _query(name, description, kind="integer", minimum=low, maximum=high)


def _get(summary: str, *parameters: Any) -> dict[str, Any]:
    responses = {"200": {"description": "OK (JSON)"}, "400": _ERROR, "401": _ERROR, "404": _ERROR}
    return {"get": {"summary": summary, "parameters": list(parameters), "responses": responses}}


def _answers(schema: str, operation: dict[str, Any]) -> dict[str, Any]:
    """`operation` (from _get) with its 200 answer's shape: components/schemas/`schema`."""
    ok = {"description": f"Marquez's {schema}", "content": {"application/json": {"schema": {
        "$ref": f"#/components/schemas/{schema}"}}}}  # fmt: skip
    operation["get"]["responses"]["200"] = ok
    return operation


def _path(name: str, description: str) -> Any:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": f"{description}, percent-encoded ('/' as %2F)",
    }


_NS = _path("namespace", "an OpenLineage namespace, as /api/v1/namespaces lists it")
_PAGE = (
    _int("limit", "results at most (default 100)", 1, listings.MAX_LIMIT),
    _int("offset", "results to skip (default 0)", 0, listings.MAX_OFFSET),
)
_REPORT = (
    _query(
        "as_of",
        "end of the lookback window: 2024-06-30, an ISO time or epoch ms",
        format="date",
        minLength=10,
    ),
    _int(
        "lookback_days",
        "reads within this many days count as consumption",
        1,
        reports.MAX_LOOKBACK_DAYS,
    ),
    _query(
        "exclude",
        "a key glob never called orphaned (repeatable); '**' only as a whole path segment",
        pattern=GLOB,
    ),
    _query("bucket", "only this bucket (repeatable)"),
    _query("include_deleted", "true: also count soft-deleted objects", kind="boolean"),
    _query(
        "by",
        "rows per dataset-class (default), dataset, bucket, class or object",
        enum=list(GROUPINGS),
    ),
    _query(
        "sort",
        "cost (most expensive first, default) or oldest (oldest last-modified first)",
        enum=list(ORDERS),
    ),
    _int("top", "datasets ranked by cost (default 10)", 1, reports.MAX_TOP),
    _query(
        "format",
        "json (the whole report, default) or csv (its rows; also Accept: text/csv)",
        enum=["json", "csv"],
    ),
)
_DIRECTIONS = ["desc", "asc"]
_TIME: dict[str, Any] = {"format": "date-time", "example": "2024-05-01T10:00:00Z"}
_NAME = _query("name", "a urn, an S3 path or a Snowflake name, as the CLI takes", required=True)
_COLOUR = _query(
    "colour",
    "system: colour by system even where assets have a quality; tag: by classifications",
)
_DELETED = _query("include_deleted", "true: also follow soft-deleted assets", kind="boolean")
_WHEN = "the lineage as it was then: 2024-06-30, 2024-06-30T12:00:00Z or epoch ms (default: now)"
_TIME_RULES: dict[str, Any] = {"format": "date", "minLength": 10}  # or a time, or epoch ms
_AS_OF = _query("as_of", _WHEN, **_TIME_RULES)
_PICTURE = (  # the explorer's lineage pictures
    _NAME,
    _query("direction", "both (default), upstream, downstream or impact", enum=list(SIDES)),
    _int("depth", "hops (default 3)", 1, lineage.MAX_DEPTH),
    {
        **_query("expand", "a urn on the picture to grow one hop both ways (repeatable)"),
        "schema": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_EXPANDED},
    },
    _COLOUR,
    _DELETED,
    _AS_OF,
    _query(
        "since",
        "mark what changed since then (before as_of): added and removed nodes and edges, "
        "2024-06-01, an ISO time or epoch ms",
        **_TIME_RULES,
    ),
)

_TIME_OR_NULL = {"type": "string", "format": "date-time", "nullable": True}
_RUN_SCHEMAS: dict[str, Any] = {  # Marquez's spec/openapi.yml, with the nulls it answers with
    "Run": {
        "type": "object",
        "description": "Marquez's Run: START and RUNNING are RUNNING, COMPLETE COMPLETED, FAIL "
        "FAILED, ABORT ABORTED; `job` is lineagegraph's own",
        "required": ["id", "createdAt", "updatedAt", "state", "startedAt", "endedAt",
                     "durationMs", "args", "facets"],
        "properties": {
            "id": {"type": "string"},
            "createdAt": _TIME_OR_NULL,
            "updatedAt": _TIME_OR_NULL,
            "nominalStartTime": _TIME_OR_NULL,
            "nominalEndTime": _TIME_OR_NULL,
            "state": {"type": "string",
                      "enum": ["NEW", "RUNNING", "COMPLETED", "FAILED", "ABORTED"]},
            "startedAt": _TIME_OR_NULL,
            "endedAt": _TIME_OR_NULL,
            "durationMs": {"type": "integer", "nullable": True},
            "args": {"type": "object"},
            "inputDatasetVersions": {"type": "array", "items": {"type": "object"}},
            "outputDatasetVersions": {"type": "array", "items": {"type": "object"}},
            "facets": {"type": "object"},
            "job": {"type": "object", "properties": {"namespace": {"type": "string"},
                                                     "name": {"type": "string"}}},
        },
    },
    "RunList": {
        "type": "object",
        "required": ["runs", "totalCount"],
        "properties": {
            "runs": {"type": "array", "items": {"$ref": "#/components/schemas/Run"}},
            "totalCount": {"type": "integer", "minimum": 0},
        },
    },
    "LineageEventList": {
        "type": "object",
        "required": ["events", "totalCount"],
        "properties": {
            "events": {"type": "array", "items": {"type": "object"}},
            "totalCount": {"type": "integer", "minimum": 0},
        },
    },
}  # fmt: skip

OPENAPI: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {
        "title": "lineagegraph",
        "version": __version__,
        "description": "OpenLineage events in; Marquez-compatible lineage out. With a token "
        "set, /api/v1 and /metrics need 'Authorization: Bearer <token>'.",
    },
    "paths": {
        "/api/v1/lineage": {
            "post": {
                "summary": "Accept one OpenLineage event, or a JSON array of them",
                "description": "RunEvent, DatasetEvent or JobEvent, as openlineage-python's "
                "HttpTransport sends it (optionally gzip, Content-Encoding: gzip). Each event "
                "is on disk before the answer and reaches the graph within about a second. "
                "A batch with one malformed event is refused whole.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "oneOf": [
                                    {"$ref": "#/components/schemas/RunEvent"},
                                    {
                                        "type": "array",
                                        "minItems": 1,
                                        "items": {"$ref": "#/components/schemas/RunEvent"},
                                    },
                                ]
                            }
                        }
                    },
                },
                "responses": {
                    "201": {"description": 'Accepted: {"accepted": number of events}'},
                    "400": _ERROR,
                    "401": _ERROR,
                    "413": _ERROR,
                    "415": _ERROR,
                },
            },
            "get": {
                "summary": "The lineage graph around a dataset or job (Marquez's shape)",
                "parameters": [_NODE_ID, _DEPTH, _query("asOf", _WHEN, **_TIME_RULES)],
                "responses": {
                    "200": {
                        "description": "{graph: [{id, type, data, inEdges, outEdges}]}",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/LineageGraph"}
                            }
                        },
                    },
                    "400": _ERROR,
                    "401": _ERROR,
                    "404": _ERROR,
                },
            },
        },
        "/api/v1/namespaces": _get("Marquez's namespace list: dataset and job namespaces"),
        "/api/v1/tags": _get(
            "Marquez's tag list: every classification stated in the graph or by settings, "
            "{tags: [{name, description}]}"
        ),
        "/api/v1/namespaces/{namespace}": _get("Marquez's namespace", _NS),
        "/api/v1/namespaces/{namespace}/datasets": _get(
            "Marquez's dataset list: the namespace's datasets, by urn", _NS, *_PAGE
        ),
        "/api/v1/namespaces/{namespace}/datasets/{dataset}": _get(
            "Marquez's dataset; with asOf, its current version and field types as its newest "
            "schema version reported by then says",
            _NS,
            _path("dataset", "the dataset's OpenLineage name"),
            _query("asOf", _WHEN, **_TIME_RULES),
        ),
        "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions": _get(
            "Marquez's dataset versions: a version per change of the dataset's schema (its "
            "columns and their types) as each source reports it, newest first; `source` names "
            "the source; with asOf, the versions reported by then",
            _NS,
            _path("dataset", "the dataset's OpenLineage name"),
            *_PAGE,
            _query("asOf", _WHEN, **_TIME_RULES),
        ),
        "/api/v1/namespaces/{namespace}/jobs": _get(
            "Marquez's job list: the namespace's jobs with their inputs and outputs", _NS, *_PAGE
        ),
        "/api/v1/namespaces/{namespace}/jobs/{job}": _get(
            "Marquez's job", _NS, _path("job", "the job's OpenLineage name")
        ),
        "/api/v1/namespaces/{namespace}/jobs/{job}/runs": _answers(
            "RunList",
            _get(
                "Marquez's run list: the job's runs, newest start first, with their states",
                _NS,
                _path("job", "the job's OpenLineage name"),
                *_PAGE,
            ),
        ),
        "/api/v1/jobs/runs/{id}": _answers(
            "Run",
            _get("Marquez's run: an OpenLineage run, or a job's last run", _path("id", "its id")),
        ),
        "/api/v1/events/lineage": _answers(
            "LineageEventList",
            _get(
                "Marquez's event list: the RunEvents ingested (kept as [serve] events_keep "
                "and events_keep_days say), by event time",
                _query("sortDirection", "desc (newest first, default) or asc", enum=_DIRECTIONS),
                _query("before", "events before this time (default 2030-01-01)", **_TIME),
                _query("after", "events at or after this time (default 1970-01-01)", **_TIME),
                _int("limit", "events at most (default 100)", 1, eventlog.MAX_LIMIT),
                _int("offset", "events to skip (default 0)", 0, eventlog.MAX_OFFSET),
            ),
        ),
        "/api/v1/column-lineage": _get(
            "Marquez's column lineage (DATASET_FIELD nodes): the fields feeding a field",
            _query(
                "nodeId",
                "datasetField:{namespace}:{name}:{field}; dataset:{namespace}:{name} for all "
                "its fields; job:{namespace}:{name} for those of the datasets it writes",
                required=True,
                pattern=FIELD_ID,
            ),
            _DEPTH,
            _query("withDownstream", "true: also the fields it feeds", kind="boolean"),
        ),
        "/api/v1/orphans": _get("S3 objects nothing consumed (as `orphans`)", *_REPORT),
        "/api/v1/cost": _get("S3 storage cost, orphaned share (as `cost-report`)", *_REPORT),
        "/api/v1/search": _get(
            "Marquez's search: datasets and jobs whose name holds q",
            _query("q", "text to look for (case-insensitive)", required=True),
            _query("filter", "DATASET or JOB", enum=["DATASET", "JOB"]),
            _int("limit", "results at most (default 10)", 1, marquez.MAX_SEARCH_LIMIT),
        ),
        "/api/v1/upstream": _get(
            "Every asset feeding an asset, each once (as `upstream --format json`)",
            _NAME,
            _int("depth", "hops (default 20)", 1, lineage.MAX_DEPTH),
            _DELETED,
            _AS_OF,
        ),
        "/api/v1/downstream": _get(
            "Every asset an asset flows into (as `downstream --format json`)",
            _NAME,
            _int("depth", "hops (default 20)", 1, lineage.MAX_DEPTH),
            _DELETED,
            _AS_OF,
        ),
        "/api/v1/impact": _get(
            "Everything downstream, grouped, and the jobs reading it (as `impact --format json`)",
            _NAME,
            _DELETED,
            _AS_OF,
        ),
        "/api/v1/path": _get(
            "Lineage paths between two assets, shortest first (as `path --format json`)",
            _query("from", "where the paths start", required=True),
            _query("to", "where they end", required=True),
            _int("depth", "hops at most (default 10)", 1, lineage.MAX_PATH_DEPTH),
            _DELETED,
            _AS_OF,
        ),
        "/healthz": {
            "get": {
                "summary": "Liveness, events accepted and waiting, the last ingest error; with "
                "[kafka], the consumer's state, lag and messages",
                "responses": {"200": {"description": "{status: ok | degraded, ...}"}},
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus text: assets, lineage coverage, source freshness and "
                "stale flags, events, the Kafka consumer's lag, request latency (needs the "
                "token when one is set)",
                "parameters": [
                    _query(
                        "max_age_hours",
                        "a source is stale past this (default 26)",
                        kind="number",
                        exclusiveMinimum=True,
                        minimum=0,
                        maximum=1e6,
                    )
                ],
                "responses": {
                    "200": {"description": "text/plain; version=0.0.4"},
                    "400": _ERROR,
                    "401": _ERROR,
                },
            }
        },
        "/openapi.json": {
            "get": {"summary": "This document", "responses": {"200": {"description": "OK"}}}
        },
        "/": {
            "get": {
                "summary": "The lineage explorer (an HTML page; needs no token, its reads do)",
                "responses": {"200": {"description": "text/html"}},
            }
        },
        "/api/v1/explore/suggest": _get(
            "The explorer's suggestions: asset urns holding q, or else the most alike",
            _query("q", "what was typed so far", required=True),
        ),
        "/api/v1/explore/graph": _get(
            "The explorer's picture of an asset's lineage: {title, note, svg, nodes, legend, "
            "as_of, changes}; with since, nodes and edges added (class added) and removed "
            "(class removed, dashed) since then",
            *_PICTURE,
        ),
        "/api/v1/explore/columns": _get(
            "The explorer's column view: the picture of /api/v1/explore/graph with each asset's "
            "columns listed in its box and the column lineage drawn between them; also "
            "columns [{urn, name, asset}] (the SVG's data-column indexes this list) and "
            "column_edges [{from, to, via}] (column urns, the way data flows)",
            *_PICTURE,
        ),
        "/api/v1/explore/path": _get(
            "The explorer's picture of the paths between two assets",
            _query("from", "where the paths start", required=True),
            _query("to", "where they end", required=True),
            _int("depth", "hops at most (default 10)", 1, lineage.MAX_PATH_DEPTH),
            _COLOUR,
            _DELETED,
        ),
        "/api/v1/explore/asset": _get(
            "An asset's page: its properties, the jobs reading or writing it with their runs, "
            "and its checks' latest results",
            _NAME,
        ),
    },
    "components": {
        "schemas": {
            "RunEvent": {
                "type": "object",
                "description": "An OpenLineage RunEvent (facets are taken, not described here; "
                "DatasetEvents and JobEvents are accepted too)",
                "required": ["eventType", "eventTime", "run", "job", "producer"],
                "properties": {
                    "eventType": {"type": "string", "enum": sorted(EVENT_TYPES)},
                    "eventTime": {"type": "string", "format": "date-time"},
                    "run": {
                        "type": "object",
                        "required": ["runId"],
                        "properties": {"runId": {"type": "string", "format": "uuid"}},
                    },
                    "job": {"$ref": "#/components/schemas/Named"},
                    "producer": {"type": "string", "minLength": 1},
                    "inputs": {"type": "array", "items": {"$ref": "#/components/schemas/Named"}},
                    "outputs": {"type": "array", "items": {"$ref": "#/components/schemas/Named"}},
                },
            },
            "Named": {
                "type": "object",
                "description": "A job or dataset: namespace a URI (scheme://authority) or a bare "
                "platform name (letters, digits, + . -)",
                "required": ["namespace", "name"],
                "properties": {
                    "namespace": {"type": "string", "pattern": NAMESPACE},
                    "name": {"type": "string", "pattern": NAME},
                },
            },
            "Error": {
                "type": "object",
                "properties": {"error": {"type": "string"}, "reason": {"type": "string"}},
            },
            "LineageGraph": {
                "type": "object",
                "properties": {
                    "graph": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
                },
            },
            "Node": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "type": {"type": "string", "enum": ["DATASET", "JOB"]},
                    "data": {"type": "object"},
                    "inEdges": {"type": "array", "items": {"$ref": "#/components/schemas/Edge"}},
                    "outEdges": {"type": "array", "items": {"$ref": "#/components/schemas/Edge"}},
                },
            },
            "Edge": {
                "type": "object",
                "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
            },
            **_RUN_SCHEMAS,
        }
    },
}
