"""The OpenAPI 3.1 document of `kgmem serve`'s JSON API, generated from the request
models (`memory.serving.requests`), and the docs page that renders it (Swagger UI)."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel

from memory.serving.requests import EntityRequest, FactsRequest, QueryRequest

ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "field": {"type": "string"}},
    "required": ["error"],
}
ANSWER = {
    "type": "object",
    "properties": {"snapshot_id": {"type": "string"}},
    "required": ["snapshot_id"],
    "additionalProperties": True,
}


def _responses(summary: str) -> dict[str, Any]:
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    return {
        "200": {
            "description": summary,
            "headers": {"X-Kgmem-Snapshot": {"schema": {"type": "string"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Answer"}}},
        },
        **{
            code: {"description": why, **error}
            for code, why in (
                ("400", "malformed body"),
                ("401", "missing or wrong bearer token"),
                ("404", "unknown snapshot or entity"),
                ("413", "body too large"),
                ("422", "a field is invalid"),
                ("503", "the warehouse is busy"),
            )
        },
    }


def _parameters(model: type[BaseModel], where: str, path: set[str] = frozenset()) -> list[Any]:
    """The model's fields as OpenAPI parameters (`in: query`, or `path` for `path`)."""
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "in": "path" if name in path else where,
            "required": name in required or name in path,
            "description": field.get("description", ""),
            "schema": {k: v for k, v in field.items() if k != "description"},
        }
        for name, field in schema["properties"].items()
    ]


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The API's OpenAPI document (made once)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "kgmem memory server",
            "version": "1",
            "description": "Read-only access to a kgmem workspace's snapshots. Every answer "
            "names the snapshot that gave it (`snapshot_id`, header `X-Kgmem-Snapshot`).",
        },
        "components": {
            "schemas": {
                "QueryRequest": QueryRequest.model_json_schema(),
                "Error": ERROR,
                "Answer": ANSWER,
            },
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
        "paths": {
            "/query": {
                "post": {
                    "summary": "Retrieve passages with provenance and supported facts",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/QueryRequest"}
                            }
                        },
                    },
                    "responses": _responses("ranked hits, as `kgmem query --json`"),
                }
            },
            "/facts": {
                "get": {
                    "summary": "An entity's fact history, as of valid and recorded time",
                    "parameters": _parameters(FactsRequest, "query"),
                    "responses": _responses("fact versions, as `kgmem facts --json`"),
                }
            },
            "/entities/{name}": {
                "get": {
                    "summary": "An entity of the snapshot: id, name, type, aliases",
                    "parameters": _parameters(EntityRequest, "query", {"name"}),
                    "responses": _responses("the entity"),
                }
            },
            "/snapshots": {
                "get": {
                    "summary": "The workspace's snapshots, newest first",
                    "responses": _responses("snapshots, as `kgmem snapshots --json`"),
                }
            },
            "/health": {
                "get": {
                    "summary": "Liveness and the snapshot served",
                    "responses": _responses("ok"),
                }
            },
        },
    }


DOCS_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>kgmem memory server</title>
<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css">
</head><body><div id="ui"></div>
<script src="https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({url: "openapi.json", dom_id: "#ui"});</script>
<noscript>The API is described in <a href="openapi.json">openapi.json</a>.</noscript>
</body></html>
"""
"""Swagger UI over `/openapi.json` (loaded from its CDN, as FastAPI's docs page is)."""
