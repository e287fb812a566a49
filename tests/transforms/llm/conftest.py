"""Fixtures of the LLM tests: a fake OpenAI-compatible server per test, a cache file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.transforms.llm.fake_openai_server import FakeChatServer, Responder
from transforms.llm.cache import LLMCache


@pytest.fixture
def fake_server() -> Iterator[Callable[[Responder], FakeChatServer]]:
    """Start fake chat servers with a given responder; all are stopped after the test."""
    servers: list[FakeChatServer] = []

    def start(responder: Responder) -> FakeChatServer:
        servers.append(FakeChatServer(responder).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def cache(tmp_path: Path) -> LLMCache:
    return LLMCache(tmp_path / "llm_cache.duckdb")
