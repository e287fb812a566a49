"""Opening a DuckDB file that other processes may hold: wait for the lock instead of failing.

DuckDB admits one writing process per file (and no reader beside a writer). Every kgmem
store access is one short transaction on a connection opened and closed around it, so
processes that wait for the lock with jittered backoff take turns instead of failing; this
is what lets the LLM cache's Beam workers and concurrent backfill workers share a file.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import duckdb

LOCK_TIMEOUT_S = 600.0
"""How long opening a file waits, by default, while another process holds its lock."""


def connect_waiting(
    path: str | Path, read_only: bool = False, timeout_s: float = LOCK_TIMEOUT_S
) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file at `path`, waiting up to `timeout_s` while another process holds
    its lock; other errors (and a lock held past the timeout) are raised."""
    deadline = time.monotonic() + timeout_s
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise
        time.sleep(delay * (0.5 + random.random() / 2))
        delay = min(delay * 2, 1.0)
