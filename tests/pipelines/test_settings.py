"""Build settings that resolve against the environment: the embedding cache's location."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.settings import EMBEDDING_CACHE_ENV, WORKSPACE_CACHE, BuildSettings


def test_embedding_cache_is_the_setting_else_the_environment_else_the_workspace_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "home" / "cache" / "embeddings.duckdb"
    monkeypatch.delenv(EMBEDDING_CACHE_ENV, raising=False)
    assert BuildSettings().embedding_cache_path(own) == own
    monkeypatch.setenv(EMBEDDING_CACHE_ENV, str(tmp_path / "machine.duckdb"))
    assert BuildSettings().embedding_cache_path(own) == tmp_path / "machine.duckdb"
    chosen = BuildSettings(embedding_cache=str(tmp_path / "chosen.duckdb"))
    assert chosen.embedding_cache_path(own) == tmp_path / "chosen.duckdb"
    pinned = BuildSettings(embedding_cache=WORKSPACE_CACHE)
    assert pinned.embedding_cache_path(own) == own, "a cold-build benchmark ignores the machine's"
