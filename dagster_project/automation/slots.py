"""Cross-process slots: at most N holders at once, among processes sharing a folder.

A slot is an exclusive `flock` on one of the files `slot-0.lock` .. `slot-{N-1}.lock`;
a process takes the first free one, or waits (polling) until one frees. The kernel
releases a lock when its holder closes the file or dies, so a killed worker never leaves
a slot taken, unlike a slot counted in a database row.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def held_slot(folder: Path, slots: int, poll_s: float = 0.2) -> Iterator[int]:
    """Hold one of `slots` slots under `folder` for the block; yields the slot's number."""
    if slots < 1:
        raise ValueError("slots must be at least 1")
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        for number in range(slots):
            handle = open(folder / f"slot-{number}.lock", "w")  # noqa: SIM115 (held below)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            try:
                yield number
            finally:
                handle.close()
            return
        time.sleep(poll_s)
