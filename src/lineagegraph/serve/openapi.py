"""The OpenAPI document served at /openapi.json: the routes, their parameters and answers."""

from __future__ import annotations

from typing import Any

from lineagegraph import __version__

_ERROR = {
    "description": "An error: what went wrong and where",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}
_NODE_ID = {
    "name": "nodeId", "in": "query", "required": True,
    "description": "dataset:{namespace}:{name} or job:{namespace}:{name} (OpenLineage names)",
    "schema": {"type": "string"}, "example": "dataset:s3://bucket:sales/orders",
}  # fmt: skip
_DEPTH = {
    "name": "depth", "in": "query", "required": False,
    "description": "How many job levels to follow, both ways (1-100)",
    "schema": {"type": "integer", "default": 20, "minimum": 1, "maximum": 100},
}  # fmt: skip

OPENAPI: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {
        "title": "lineagegraph",
        "version": __version__,
        "description": "OpenLineage events in; Marquez-compatible lineage out. With a token "
        "set, /api/v1 needs 'Authorization: Bearer <token>'.",
    },
    "paths": {
        "/api/v1/lineage": {
            "post": {
                "summary": "Accept one OpenLineage event, or a JSON array of them",
                "description": "RunEvent, DatasetEvent or JobEvent, as openlineage-python's "
                "HttpTransport sends it (optionally gzip, Content-Encoding: gzip). Each event "
                "is on disk before the answer and reaches the graph within about a second. "
                "A batch with one malformed event is refused whole.",
                "requestBody": {"required": True, "content": {"application/json": {}}},
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
                "parameters": [_NODE_ID, _DEPTH],
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
        "/healthz": {
            "get": {
                "summary": "Liveness, events accepted and waiting, the last ingest error",
                "responses": {"200": {"description": "{status: ok | degraded, ...}"}},
            }
        },
        "/openapi.json": {
            "get": {"summary": "This document", "responses": {"200": {"description": "OK"}}}
        },
    },
    "components": {
        "schemas": {
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
        }
    },
}
