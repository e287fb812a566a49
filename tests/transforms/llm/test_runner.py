"""The runner: cache first, shared calls for duplicates, retries with backoff, limits."""

import random

import pytest

from tests.transforms.llm.factories import ScriptedBackend, make_segment, transient
from transforms.llm.base import LLMError
from transforms.llm.prompts import REAL_ATOMIC_FACTS_V1
from transforms.llm.runner import LLMRunner, RetryPolicy
from transforms.llm.stats import LLMStats

ANSWER = '{"facts": []}'


def _requests(n: int):
    return [
        REAL_ATOMIC_FACTS_V1.request(make_segment(f"Acme hired person {i}.", [("Acme", "ORG")]))
        for i in range(n)
    ]


def test_second_run_is_served_from_the_cache(cache):
    backend = ScriptedBackend(lambda r: ANSWER)
    first, second = LLMStats(), LLMStats()
    LLMRunner(backend, cache).run(_requests(3), first)
    outcomes = LLMRunner(backend, cache).run(_requests(3), second)
    assert len(backend.calls) == 3
    assert (first.llm_calls, first.cache_hits, first.prompt_tokens, first.completion_tokens) == (
        3,
        0,
        300,
        60,
    )
    assert (second.llm_calls, second.cache_hits, second.prompt_tokens) == (0, 3, 0)
    assert all(o.from_cache and o.completion.text == ANSWER for o in outcomes)


def test_another_model_is_not_served_from_the_cache(cache):
    LLMRunner(ScriptedBackend(lambda r: ANSWER), cache).run(_requests(1), LLMStats())
    other = ScriptedBackend(lambda r: ANSWER, model="scripted-2")
    LLMRunner(other, cache).run(_requests(1), LLMStats())
    assert len(other.calls) == 1


def test_duplicate_requests_share_one_call(cache):
    backend = ScriptedBackend(lambda r: ANSWER)
    stats = LLMStats()
    request = _requests(1)[0]
    outcomes = LLMRunner(backend, cache).run([request, request], stats)
    assert len(backend.calls) == 1
    assert [o.completion.text for o in outcomes] == [ANSWER, ANSWER]
    assert (stats.requests, stats.llm_calls, stats.cache_hits) == (2, 1, 1)


def test_transient_failures_are_retried_with_growing_jittered_delays(cache):
    answers = iter([transient(), transient(), ANSWER])
    backend = ScriptedBackend(lambda r: next(answers))
    delays: list[float] = []
    runner = LLMRunner(
        backend, cache, retry=RetryPolicy(4, 1.0, 30.0), sleep=delays.append, rng=random.Random(1)
    )
    stats = LLMStats()
    (outcome,) = runner.run(_requests(1), stats)
    assert outcome.completion.text == ANSWER and outcome.attempts == 3
    assert 0.5 <= delays[0] <= 1.0 and 1.0 <= delays[1] <= 2.0
    assert (stats.llm_calls, stats.retries, stats.failed_calls) == (3, 2, 0)
    assert cache.count() == 1


def test_retries_give_up_and_failures_are_not_cached(cache):
    backend = ScriptedBackend(lambda r: transient("HTTP 503"))
    runner = LLMRunner(backend, cache, retry=RetryPolicy(3, 0.01, 0.01), sleep=lambda s: None)
    stats = LLMStats()
    (outcome,) = runner.run(_requests(1), stats)
    assert outcome.completion is None and outcome.attempts == 3 and outcome.error == "HTTP 503"
    assert (stats.llm_calls, stats.failed_calls) == (3, 1)
    assert cache.count() == 0


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (LLMError("HTTP 400 bad request", transient=False), "HTTP 400 bad request"),
        (RuntimeError("backend bug"), "RuntimeError: backend bug"),
    ],
)
def test_permanent_errors_are_not_retried(cache, error, message):
    backend = ScriptedBackend(lambda r: error)
    (outcome,) = LLMRunner(backend, cache, sleep=lambda s: None).run(_requests(1), LLMStats())
    assert (outcome.attempts, outcome.error) == (1, message)


def test_concurrency_is_bounded_by_config_and_backend(cache):
    backend = ScriptedBackend(lambda r: ANSWER, max_parallel=8, delay_s=0.05)
    LLMRunner(backend, cache, max_concurrency=3).run(_requests(9), LLMStats())
    assert 1 < backend.max_in_flight <= 3
    serial = ScriptedBackend(lambda r: ANSWER, model="serial", max_parallel=1, delay_s=0.02)
    LLMRunner(serial, cache, max_concurrency=8).run(_requests(4), LLMStats())
    assert serial.max_in_flight == 1
