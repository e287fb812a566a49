"""The LLM call cache: a DuckDB table keyed by (backend, model, prompt version, input hash).

A re-run or a backfill asks the cache first and calls the model only for keys it lacks, so
unchanged segments cost zero calls. Answers are cached whatever their content (an answer
that fails validation fails again; only failed calls are not cached, so they are retried
on the next run).

The cache lives in its own database file, not in the warehouse: Beam workers write it
while the orchestrator holds the warehouse, and DuckDB allows one writing process per
file. Each operation opens a short connection, runs in a transaction and closes, and a
lock held by another process is waited for with backoff; within a process a lock
serialises access. Rows are only ever inserted (`INSERT OR IGNORE`): two workers that
answered the same key race harmlessly.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from schemas.llm_outputs import LLM_CACHE_TABLE
from transforms.duckdb_connect import connect_waiting
from transforms.ids import content_id
from transforms.llm.base import Completion

_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def cache_key(backend: str, model: str, prompt_version: str, input_hash: str) -> str:
    """The cache key of one call."""
    return content_id("llm_call", backend, model, prompt_version, input_hash)


@dataclass(frozen=True)
class CacheEntry:
    """One answered call as the cache stores it."""

    key: str
    backend: str
    model: str
    prompt_version: str
    input_hash: str
    completion: Completion
    latency_s: float


class LLMCache:
    """Read and insert cached answers in the DuckDB file at `path` (created if missing)."""

    def __init__(self, path: str | Path, lock_timeout_s: float = 60.0) -> None:
        self.path = Path(path).resolve()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_timeout_s = lock_timeout_s
        with _LOCKS_GUARD:
            self._lock = _LOCKS.setdefault(self.path, threading.Lock())
        with self._connect() as con:
            con.execute(LLM_CACHE_TABLE.ddl())

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        """Cached completions of those `keys` that are cached."""
        wanted = sorted(set(keys))
        if not wanted:
            return {}
        with self._connect() as con:
            rows = con.execute(
                "SELECT cache_key, response, prompt_tokens, completion_tokens, served_model,"
                " backend FROM llm_cache WHERE list_contains(?, cache_key)",
                [wanted],
            ).fetchall()
        return {
            key: Completion(text, prompt_tokens or 0, completion_tokens or 0, served, backend)
            for key, text, prompt_tokens, completion_tokens, served, backend in rows
        }

    def put(self, entry: CacheEntry) -> None:
        """Insert `entry` unless its key is already cached."""
        completion = entry.completion
        with self._connect() as con:
            con.begin()
            con.execute(
                "INSERT OR IGNORE INTO llm_cache VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    entry.key,
                    entry.backend,
                    entry.model,
                    entry.prompt_version,
                    entry.input_hash,
                    completion.text,
                    completion.prompt_tokens,
                    completion.completion_tokens,
                    completion.model,
                    entry.latency_s,
                    datetime.now(UTC),
                ],
            )
            con.commit()

    def count(self) -> int:
        """Number of cached answers."""
        with self._connect() as con:
            return int(con.execute("SELECT count(*) FROM llm_cache").fetchall()[0][0])

    @contextmanager
    def _connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._lock:
            con = self._open()
            try:
                yield con
            finally:
                con.close()

    def _open(self) -> duckdb.DuckDBPyConnection:
        """Connect, waiting (with jittered backoff) while another process holds the file."""
        return connect_waiting(self.path, timeout_s=self._lock_timeout_s)
