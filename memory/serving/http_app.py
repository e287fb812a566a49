"""The HTTP side of `kgmem serve`: a Starlette app with the JSON API, its OpenAPI
document and docs page, and (optionally) the MCP streamable-HTTP endpoint at `/mcp`.

Every answer is JSON and names the snapshot that gave it, in its body (`snapshot_id`)
and in the `X-Kgmem-Snapshot` header. A bad request gets a 4xx JSON error naming the
field (`{"error": ..., "field": ...}`); anything unexpected is logged and answered 500
with one line, never a traceback. Queries run off the event loop, on the main thread or
worker threads, at most `concurrency` at a time (`memory.serving.main_thread`), so the
event loop keeps accepting requests.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memory.serving import operations
from memory.serving.main_thread import MainThreadRunner
from memory.serving.openapi import DOCS_PAGE, openapi_document
from memory.serving.pool import SnapshotPool, UnknownSnapshot
from memory.serving.requests import EntityRequest, FactsRequest, QueryRequest

MAX_BODY_BYTES = 64 * 1024
"""The largest request body accepted (a query is a few hundred bytes)."""

log = logging.getLogger("kgmem.serve")


@dataclass(frozen=True)
class ServeSettings:
    """How the server runs: its bearer token (None: none needed) and the largest body it
    reads."""

    token: str | None = None
    max_body_bytes: int = MAX_BODY_BYTES


class RequestError(Exception):
    """A request the server refuses: its HTTP status, the field at fault, and why."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status, self.field = status, field


def error_response(status: int, message: str, field: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if field is not None:
        body["field"] = field
    return JSONResponse(body, status_code=status)


def validation_error(exc: ValidationError) -> RequestError:
    """The first error of a pydantic validation as a 422 naming its field."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or None
    return RequestError(422, f"{field}: {first['msg']}" if field else first["msg"], field)


def parse(model: type[BaseModel], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object body, refused past `limit` bytes (413) or malformed (400)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestError(413, f"body of {declared} bytes exceeds the limit of {limit}", "body")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise RequestError(413, f"body exceeds the limit of {limit} bytes", "body")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestError(400, f"body is not JSON: {exc}", "body") from None
    if not isinstance(data, dict):
        raise RequestError(400, "body must be a JSON object", "body")
    return data


class BearerToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = error_response(401, "missing or wrong bearer token", "authorization")
                response.headers["WWW-Authenticate"] = "Bearer"
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(
    pool: SnapshotPool,
    settings: ServeSettings,
    runner: MainThreadRunner,
    mcp_app: Starlette | None = None,
) -> ASGIApp:
    """The server's ASGI app over `pool`, its work run by `runner`; with `mcp_app` (the
    MCP SDK's streamable-HTTP app), its `/mcp` route and session manager too."""

    async def answer(work: Callable[[], dict[str, Any]]) -> Response:
        try:
            result = await runner.run(work)
        except RequestError as exc:
            return error_response(exc.status, str(exc), exc.field)
        except UnknownSnapshot as exc:
            return error_response(404, str(exc), "snapshot")
        except operations.WarehouseBusy as exc:
            return error_response(503, str(exc))
        except (LookupError, ValueError) as exc:
            return error_response(404 if isinstance(exc, LookupError) else 422, str(exc))
        response = JSONResponse(result)
        response.headers["X-Kgmem-Snapshot"] = result.get("snapshot_id") or pool.default_id
        return response

    async def query(request: Request) -> Response:
        try:
            body = parse(QueryRequest, await read_json(request, settings.max_body_bytes))
        except RequestError as exc:
            return error_response(exc.status, str(exc), exc.field)
        return await answer(lambda: operations.search(pool, body))

    async def facts(request: Request) -> Response:
        try:
            params = parse(FactsRequest, dict(request.query_params))
        except RequestError as exc:
            return error_response(exc.status, str(exc), exc.field)
        return await answer(lambda: operations.facts(pool, params))

    async def entity(request: Request) -> Response:
        try:
            params = parse(
                EntityRequest, {**request.query_params, "name": request.path_params["name"]}
            )
        except RequestError as exc:
            return error_response(exc.status, str(exc), exc.field)
        return await answer(lambda: operations.entity(pool, params))

    async def snapshots(request: Request) -> Response:
        return await answer(lambda: operations.snapshots(pool))

    async def health(request: Request) -> Response:
        return await answer(lambda: operations.health(pool))

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_document())

    async def docs(request: Request) -> Response:
        return HTMLResponse(DOCS_PAGE)

    routes: list[BaseRoute] = [
        Route("/query", query, methods=["POST"]),
        Route("/facts", facts, methods=["GET"]),
        Route("/entities/{name:path}", entity, methods=["GET"]),
        Route("/snapshots", snapshots, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/docs", docs, methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        pool.start_watching()
        try:
            async with contextlib.AsyncExitStack() as stack:
                if mcp_app is not None:
                    await stack.enter_async_context(mcp_app.router.lifespan_context(mcp_app))
                yield
        finally:
            pool.close()

    app = Starlette(
        routes=[*routes, *(mcp_app.routes if mcp_app is not None else [])],
        exception_handlers={
            404: lambda request, exc: error_response(404, f"no route {request.url.path}"),
            405: lambda request, exc: error_response(405, f"{request.method} not allowed here"),
            Exception: internal_error,
        },
        lifespan=lifespan,
    )
    return BearerToken(app, settings.token) if settings.token else app


async def internal_error(request: Request, exc: Exception) -> Response:
    """Log an unexpected error and answer it with one line (no traceback)."""
    log.error("%s %s failed: %r", request.method, request.url.path, exc, exc_info=exc)
    return error_response(500, f"internal error: {type(exc).__name__}")
