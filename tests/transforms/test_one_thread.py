"""`OneThread`: every call runs on the same thread, whichever thread makes it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from transforms.one_thread import OneThread


def test_calls_from_many_threads_run_on_one_thread_and_return_their_results() -> None:
    runner = OneThread("test-one")

    def where(n: int) -> tuple[int, str]:
        return n * n, threading.current_thread().name

    with ThreadPoolExecutor(4) as callers:
        answers = list(callers.map(lambda n: runner.call(where, n), range(12)))
    answers.append(runner.call(where, 12))
    assert [square for square, _ in answers] == [n * n for n in range(13)]
    threads = {name for _, name in answers}
    assert len(threads) == 1
    assert threads.pop().startswith("test-one")


def test_a_call_made_on_the_thread_itself_runs_there_without_waiting_on_itself() -> None:
    runner = OneThread("test-nested")
    inner = lambda: threading.current_thread().name  # noqa: E731
    assert runner.call(lambda: runner.call(inner)).startswith("test-nested")


def test_an_error_reaches_the_caller() -> None:
    def fails() -> None:
        raise ValueError("bad batch")

    with pytest.raises(ValueError, match="bad batch"):
        OneThread("test-error").call(fails)


def test_a_call_sees_the_callers_context_variables() -> None:
    import contextvars

    setting: contextvars.ContextVar[int | None] = contextvars.ContextVar("s", default=None)
    runner = OneThread("test-context")
    token = setting.set(3)
    try:
        assert runner.call(setting.get) == 3
    finally:
        setting.reset(token)
    assert runner.call(setting.get) is None
