"""`kgmem serve`'s MCP tools, driven with the `mcp` SDK's own client over stdio (the
client starts the server process) and over streamable HTTP (a server process on a free
loopback port): the four tools are listed with typed arguments, answer as the HTTP API
does, and a refused request is a tool error naming the field."""

from __future__ import annotations

import json
import os
import sys

import anyio
import httpx
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from benchmarks.serve_process import running_server, serve_command
from tests.conftest import ROOT

QUESTION = "Where does Priya Natarajan work?"
TOOLS = {"search_memory", "get_facts", "get_entity", "list_snapshots"}


async def exercise(session: ClientSession) -> dict[str, object]:
    """List the tools and call each; what they answered."""
    await session.initialize()
    listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) >= TOOLS
    search_schema = json.dumps(tools["search_memory"].input_schema)
    assert "maximum" in search_schema and "the question or search text" in search_schema
    answers: dict[str, object] = {}
    for name, arguments in (
        ("search_memory", {"request": {"text": QUESTION, "k": 2}}),
        ("get_facts", {"request": {"entity": "Priya Natarajan"}}),
        ("get_entity", {"request": {"name": "Natarajan"}}),
        ("list_snapshots", {}),
    ):
        result = await session.call_tool(name, arguments)
        assert not result.is_error, result
        answers[name] = result.structured_content
    refused = await session.call_tool("search_memory", {"request": {"text": "x", "k": 5000}})
    assert refused.is_error
    assert "k" in refused.content[0].text
    return answers


def check(answers: dict[str, object], http_query: dict[str, object]) -> None:
    snapshot = answers["list_snapshots"]["snapshot_id"]
    for name in ("search_memory", "get_facts", "get_entity"):
        assert answers[name]["snapshot_id"] == snapshot
    assert answers["search_memory"] == http_query
    assert answers["get_entity"]["entity"]["name"] == "Priya Natarajan"
    assert answers["get_facts"]["facts"]


@pytest.fixture(scope="module")
def http_server(sample_build):
    with running_server(sample_build[0].root) as running:
        yield running


def test_mcp_over_streamable_http(http_server):
    async def run() -> dict[str, object]:
        async with (
            streamable_http_client(f"{http_server.url}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            return await exercise(session)

    answers = anyio.run(run)
    http = httpx.post(f"{http_server.url}/query", json={"text": QUESTION, "k": 2}).json()
    check(answers, http)


def test_mcp_over_stdio(sample_build, http_server):
    command = serve_command(sample_build[0].root, "--mcp", "stdio")
    params = StdioServerParameters(
        command=sys.executable, args=command[1:], env=dict(os.environ), cwd=ROOT
    )

    async def run() -> dict[str, object]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await exercise(session)

    answers = anyio.run(run)
    http = httpx.post(f"{http_server.url}/query", json={"text": QUESTION, "k": 2}).json()
    check(answers, http)


def test_mcp_over_http_needs_the_token(sample_build, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("mcp-token")
    with running_server(
        sample_build[0].root, "--token-file", str(token_file), token="mcp-token"
    ) as running:

        async def run() -> object:
            headers = {"Authorization": "Bearer mcp-token"}
            async with (
                httpx2.AsyncClient(headers=headers) as client,
                streamable_http_client(f"{running.url}/mcp", http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await session.call_tool("list_snapshots", {})

        assert not anyio.run(run).is_error
