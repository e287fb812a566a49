"""`kgmem serve --workers N`: N processes share the port under uvicorn's supervisor and
answer as one process does; MCP over HTTP works statelessly across them; the token file
guards every worker; a bad `--workers` is refused in one line."""

from __future__ import annotations

import concurrent.futures

import anyio
import httpx
import httpx2
import psutil
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from benchmarks.serve_process import running_server
from kgmem.cli import main

QUESTIONS = ("Where does Priya Natarajan work?", "What does error E-42 mean on the Inkwell 3000?")
TOKEN = "worker-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def servers(sample_build, tmp_path_factory):
    token_file = tmp_path_factory.mktemp("token") / "token"
    token_file.write_text(TOKEN)
    home = sample_build[0].root
    with (
        running_server(home, "--mcp", "off") as single,
        running_server(
            home, "--workers", "2", "--token-file", str(token_file), token=TOKEN
        ) as pooled,
    ):
        yield single, pooled


def ask(url: str, question: str, headers: dict[str, str]) -> dict[str, object]:
    body = {"text": question, "k": 3, "strategy": "hybrid"}
    response = httpx.post(f"{url}/query", json=body, headers=headers, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


def test_workers_answer_as_one_process_does(servers):
    single, pooled = servers
    expected = {q: ask(single.url, q, {}) for q in QUESTIONS}
    with concurrent.futures.ThreadPoolExecutor(8) as executor:
        answers = list(executor.map(lambda n: ask(pooled.url, QUESTIONS[n % 2], AUTH), range(16)))
    assert all(answer == expected[QUESTIONS[n % 2]] for n, answer in enumerate(answers))
    workers = psutil.Process(pooled.process.pid).children()
    assert len([w for w in workers if "spawn" in " ".join(w.cmdline())]) == 2


def test_every_worker_needs_the_token(servers):
    _, pooled = servers
    for _ in range(6):
        assert httpx.get(f"{pooled.url}/health").status_code == 401
        assert httpx.get(f"{pooled.url}/health", headers=AUTH).status_code == 200


def test_mcp_over_http_is_stateless_across_workers(servers):
    _, pooled = servers

    async def run() -> list[object]:
        async with (
            httpx2.AsyncClient(headers=AUTH) as client,
            streamable_http_client(f"{pooled.url}/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return [
                (await session.call_tool("list_snapshots", {})).structured_content for _ in range(6)
            ]

    answers = anyio.run(run)
    assert len({a["snapshot_id"] for a in answers}) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "0"], "--workers must be at least 1"),
        (["--workers", "2", "--mcp", "stdio"], "--workers serves HTTP"),
    ],
)
def test_bad_workers_is_one_line(sample_build, capsys, args, message):
    assert main(["serve", "--home", str(sample_build[0].root), "--port", "0", *args]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
