"""`MainThreadRunner`: a server's work on the main thread while its event loop runs on
another, worker threads beyond one request at a time, errors and signals handed back."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import pytest

from memory.serving.main_thread import MainThreadRunner


def on_main() -> bool:
    return threading.current_thread() is threading.main_thread()


def served(runner: MainThreadRunner, body: Callable[[], Coroutine[Any, Any, Any]]) -> list[Any]:
    """What `body` returns, run as the event loop of `runner.serve`."""
    out: list[Any] = []
    runner.serve(lambda: out.append(anyio.run(body)))
    return out


def test_work_runs_on_the_main_thread_while_the_loop_runs_on_another() -> None:
    runner = MainThreadRunner(2)

    async def body() -> tuple[bool, bool]:
        return on_main(), await runner.run(on_main)

    assert served(runner, body) == [(False, True)]


def test_a_second_request_at_once_runs_on_a_worker_thread() -> None:
    runner = MainThreadRunner(2)
    first_started, second_done = threading.Event(), threading.Event()

    def first() -> bool:
        first_started.set()
        assert second_done.wait(10), "the second request waited for the first"
        return on_main()

    def second() -> bool:
        assert first_started.wait(10)
        second_done.set()
        return on_main()

    async def body() -> list[bool]:
        results: list[bool] = [False, False]

        async def ask(i: int, work: Callable[[], bool]) -> None:
            results[i] = await runner.run(work)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ask, 0, first)
            await anyio.sleep(0.05)
            tasks.start_soon(ask, 1, second)
        return results

    assert served(runner, body) == [[True, False]]


def test_at_most_concurrency_pieces_of_work_run_at_once() -> None:
    runner = MainThreadRunner(1)
    running, most = [0], [0]
    lock = threading.Lock()

    def work() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.02)
        with lock:
            running[0] -= 1

    async def body() -> None:
        async with anyio.create_task_group() as tasks:
            for _ in range(4):
                tasks.start_soon(runner.run, work)

    served(runner, body)
    assert most == [1]


def test_without_a_main_thread_loop_work_goes_to_worker_threads() -> None:
    runner = MainThreadRunner(2)

    async def body() -> bool:
        return await runner.run(on_main)

    assert anyio.run(body) is False


def test_an_error_in_the_work_reaches_the_request_that_asked() -> None:
    runner = MainThreadRunner(2)

    def fails() -> None:
        raise LookupError("no such snapshot")

    async def body() -> str:
        with pytest.raises(LookupError, match="no such snapshot"):
            await runner.run(fails)
        return "answered"

    assert served(runner, body) == ["answered"]


def test_an_error_of_the_loop_is_raised_by_serve() -> None:
    def loop() -> None:
        raise OSError("address already in use")

    with pytest.raises(OSError, match="address already in use"):
        MainThreadRunner(1).serve(loop)


def test_signals_go_to_on_signal_while_serving_and_handlers_come_back_after() -> None:
    runner = MainThreadRunner(1)
    received: list[int] = []
    handled = threading.Event()
    before = signal.getsignal(signal.SIGTERM)

    def on_signal(sig: int, _frame: object) -> None:
        received.append(sig)
        handled.set()

    def loop() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        assert handled.wait(10)

    runner.serve(loop, on_signal)
    assert received == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) is before


def test_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        MainThreadRunner(0)
