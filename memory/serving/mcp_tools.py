"""The MCP side of `kgmem serve`: the server's operations as MCP tools (official `mcp`
SDK), served over stdio or mounted at `/mcp` of the HTTP app (streamable HTTP).

Each tool takes one typed argument, the same request model the HTTP API validates
(`memory.serving.requests`), so its JSON schema, field descriptions and limits are
those of the API; a refused request is a tool error naming the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from memory.serving import operations
from memory.serving.main_thread import MainThreadRunner
from memory.serving.pool import SnapshotPool
from memory.serving.requests import EntityRequest, FactsRequest, QueryRequest

INSTRUCTIONS = (
    "Long-term memory built from documents and conversation logs. Use search_memory to "
    "find passages (with provenance and the facts they support) for a question; get_facts "
    "for what is known about one entity over time; get_entity to check a name; "
    "list_snapshots to see which memory versions exist. Every answer names its snapshot."
)
READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)


def memory_server(pool: SnapshotPool, runner: MainThreadRunner) -> MCPServer:
    """An MCP server with the four memory tools over `pool`, their work run by `runner`."""
    server = MCPServer("kgmem", instructions=INSTRUCTIONS)

    async def run(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return await runner.run(work)
        except (LookupError, ValueError, operations.WarehouseBusy) as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=READ_ONLY)
    async def search_memory(request: QueryRequest) -> dict[str, Any]:
        """Search the memory for passages relevant to `request.text`: ranked hits with
        their text, provenance (document, title, char span, time, speaker) and the facts
        each supports. Use `valid_at` for questions about a past moment."""
        return await run(lambda: operations.search(pool, request))

    @server.tool(annotations=READ_ONLY)
    async def get_facts(request: FactsRequest) -> dict[str, Any]:
        """The fact history of one entity (head, relation, tail, validity interval,
        confidence, recorded time), optionally as true at `valid_at` and as known at
        `known_at`."""
        return await run(lambda: operations.facts(pool, request))

    @server.tool(annotations=READ_ONLY)
    async def get_entity(request: EntityRequest) -> dict[str, Any]:
        """Look an entity up by name or alias: its id, canonical name, type and aliases."""
        return await run(lambda: operations.entity(pool, request))

    @server.tool(annotations=READ_ONLY)
    async def list_snapshots() -> dict[str, Any]:
        """The memory's snapshots (immutable versions), newest first, and which one is
        served by default."""
        return await run(lambda: operations.snapshots(pool))

    return server
