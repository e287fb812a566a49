"""The cores a server's queries share across its worker processes (`--query-threads auto`).

One client's latency and many clients' throughput want opposite thread setups on a
machine with few cores. A query alone runs fastest with every core for its BLAS work and
its second encoder (OpenMP); queries that run at the same time, in one process or in
several `--workers`, run fastest with one thread each, since thread pools spinning on
the cores the others need slow every query (two threads a query in each of two workers
on 2 cores: `dense` fell from 134 requests/s at one client to 24 at eight). So a query
takes every core when no other query of the server is running, and one thread otherwise.

The count of running queries lives in a small file that every worker opens, updated
under an exclusive `flock` (tens of microseconds a query; the lock goes with a process
that dies, though a count it held stays until the server restarts). A query that took
every core keeps them when others start; they take one thread each.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from transforms.cpu_lanes import blas_controller
from transforms.embedding import ENCODER_THREADS


class CoreBudget:
    """The server's running-query count in the file at `path`, shared by its processes,
    and what a query gets from it: `cores` threads alone, 1 beside others."""

    def __init__(self, path: Path, cores: int | None = None) -> None:
        self.path, self.cores = Path(path), max(1, cores or os.cpu_count() or 1)
        self._fd: int | None = None
        self._pid = 0
        self._threads = threading.Lock()

    @classmethod
    def create(cls, cores: int | None = None) -> CoreBudget:
        """A budget in a new temporary file (the parent server makes it; workers open
        it by path, `WorkerSettings.core_budget`)."""
        fd, name = tempfile.mkstemp(prefix="kgmem-serve-cores-")
        os.pwrite(fd, (0).to_bytes(8, "little"), 0)
        os.close(fd)
        return cls(Path(name), cores)

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    @contextlib.contextmanager
    def share(self) -> Iterator[int]:
        """The threads this query may use while it runs (counted as running meanwhile),
        with OpenBLAS and the second encoder held to them."""
        others = self._add(1)
        threads = self.cores if others == 0 else 1
        token = ENCODER_THREADS.set(threads)
        try:
            with blas_controller().limit(limits=threads, user_api="blas"):
                yield threads
        finally:
            ENCODER_THREADS.reset(token)
            self._add(-1)

    def _add(self, delta: int) -> int:
        """Add `delta` to the running count; the count before it. `flock` excludes the
        other processes, not this one's other threads (they share the descriptor, and a
        lock belongs to it), so a thread lock comes first: without it, two requests of
        one worker lost an update under load and the count stayed up."""
        with self._threads:
            fd = self._file()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                before = int.from_bytes(os.pread(fd, 8, 0).ljust(8, b"\0"), "little")
                os.pwrite(fd, max(0, before + delta).to_bytes(8, "little"), 0)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        return before

    def _file(self) -> int:
        if self._fd is None or self._pid != os.getpid():
            self._fd, self._pid = os.open(self.path, os.O_RDWR), os.getpid()
        return self._fd
