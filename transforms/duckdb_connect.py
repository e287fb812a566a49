"""Opening a DuckDB file that other processes may hold: wait for the lock instead of failing.

DuckDB admits one writing process per file (and no reader beside a writer). Every kgmem
store access is one short transaction on a connection opened and closed around it, so
processes that wait for the lock with jittered backoff take turns instead of failing; this
is what lets the LLM cache's Beam workers and concurrent backfill workers share a file.
A wait that lasts longer than `ANNOUNCE_AFTER_S` is announced once on the `kgmem.locks`
logger (stderr unless configured otherwise), naming the file and the process holding it,
so a build never stalls silently behind another process.
"""

from __future__ import annotations

import logging
import random
import re
import time
from pathlib import Path

import duckdb

LOCK_TIMEOUT_S = 600.0
"""How long opening a file waits, by default, while another process holds its lock."""
ANNOUNCE_AFTER_S = 2.0
"""How long a wait lasts before it is announced."""

log = logging.getLogger("kgmem.locks")


def connect_waiting(
    path: str | Path, read_only: bool = False, timeout_s: float = LOCK_TIMEOUT_S
) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file at `path`, waiting up to `timeout_s` while another process holds
    its lock; other errors (and a lock held past the timeout) are raised."""
    started = time.monotonic()
    delay, announced = 0.05, False
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            waited = time.monotonic() - started
            if "lock" not in str(exc).lower() or waited > timeout_s:
                raise
            if not announced and waited > ANNOUNCE_AFTER_S:
                log.warning("waiting for %s: the file is locked by %s", path, lock_holder(exc))
                announced = True
        time.sleep(delay * (0.5 + random.random() / 2))
        delay = min(delay * 2, 1.0)


def lock_holder(error: Exception) -> str:
    """The process named in DuckDB's lock error ("... held in /usr/bin/python (PID 42)")."""
    found = re.search(r"held in (.+?)(?:\. |$)", str(error))
    return found.group(1) if found else "another process"
