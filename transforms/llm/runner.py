"""Running many completion requests against one backend: cache first, then bounded
concurrent calls with timeouts and retries.

- Cache: every request's key is looked up first; identical requests in one batch share
  one call; each answer is cached as soon as it arrives, so an interrupted run keeps what
  it paid for.
- Concurrency: a thread pool per runner, and a semaphore shared by every runner of the
  same backend in the process (Beam may run several DoFn instances per worker), sized
  `min(max_concurrency, backend.max_parallel)`.
- Retries: transient `LLMError`s are retried up to `RetryPolicy.max_attempts` with
  exponential backoff and "equal jitter" (half the delay fixed, half random), so workers
  that failed together do not retry together.
- Timeouts: each attempt gets `timeout_s`, which the backend enforces (HTTP timeout,
  llama.cpp stopping criterion, transformers `max_time`).

Failures never raise: a call that still fails is returned with its error, for the
extraction step to quarantine.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from transforms.llm.base import Completion, CompletionRequest, LLMBackend, LLMError
from transforms.llm.cache import CacheEntry, LLMCache, cache_key
from transforms.llm.stats import LLMStats

_SEMAPHORES: dict[tuple[str, str, int], threading.BoundedSemaphore] = {}
_SEMAPHORES_GUARD = threading.Lock()


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a transient failure is retried."""

    max_attempts: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


@dataclass(frozen=True)
class CallOutcome:
    """The answer to one request (from the cache or a call), or the error that ended it."""

    request: CompletionRequest
    cache_key: str
    completion: Completion | None
    from_cache: bool
    attempts: int
    error: str | None = None


def _shared_semaphore(backend: LLMBackend, limit: int) -> threading.BoundedSemaphore:
    key = (backend.name, backend.model, limit)
    with _SEMAPHORES_GUARD:
        return _SEMAPHORES.setdefault(key, threading.BoundedSemaphore(limit))


class LLMRunner:
    """Answer requests with `backend`, through `cache`, counting into `stats`."""

    def __init__(
        self,
        backend: LLMBackend,
        cache: LLMCache,
        *,
        max_concurrency: int = 4,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self._limit = max(1, min(max_concurrency, backend.max_parallel))
        self._semaphore = _shared_semaphore(backend, self._limit)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()

    def run(self, requests: Sequence[CompletionRequest], stats: LLMStats) -> list[CallOutcome]:
        """Outcomes of `requests`, in order; `stats` counts calls, hits, tokens, failures."""
        keys = [
            cache_key(self.backend.name, self.backend.model, r.prompt_version, r.input_hash)
            for r in requests
        ]
        stats.requests += len(requests)
        cached = self.cache.get_many(keys)
        to_call = {k: r for k, r in zip(keys, requests, strict=True) if k not in cached}
        with ThreadPoolExecutor(max_workers=self._limit) as pool:
            futures = {k: pool.submit(self._call, k, r) for k, r in to_call.items()}
            called = {k: f.result() for k, f in futures.items()}
        outcomes = []
        for key, request in zip(keys, requests, strict=True):
            if key in cached:
                outcomes.append(CallOutcome(request, key, cached[key], True, 0))
                stats.cache_hits += 1
                continue
            outcome = called.pop(key, None)
            if outcome is None:  # a duplicate of a request answered just before
                first = next(o for o in outcomes if o.cache_key == key)
                outcomes.append(CallOutcome(request, key, first.completion, True, 0, first.error))
                stats.cache_hits += first.completion is not None
                continue
            outcomes.append(outcome)
            stats.llm_calls += outcome.attempts
            stats.retries += outcome.attempts - 1
            if outcome.completion is None:
                stats.failed_calls += 1
            else:
                stats.prompt_tokens += outcome.completion.prompt_tokens
                stats.completion_tokens += outcome.completion.completion_tokens
        return outcomes

    def _call(self, key: str, request: CompletionRequest) -> CallOutcome:
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                with self._semaphore:
                    completion = self.backend.complete(request, self.timeout_s)
            except LLMError as exc:
                if exc.transient and attempt < self.retry.max_attempts:
                    with self._rng_lock:
                        delay = self.retry.delay(attempt, self._rng)
                    self._sleep(delay)
                    continue
                return CallOutcome(request, key, None, False, attempt, str(exc))
            except Exception as exc:  # a backend bug must not end the run; it is quarantined
                error = f"{type(exc).__name__}: {exc}"
                return CallOutcome(request, key, None, False, attempt, error)
            self.cache.put(
                CacheEntry(
                    key=key,
                    backend=self.backend.name,
                    model=self.backend.model,
                    prompt_version=request.prompt_version,
                    input_hash=request.input_hash,
                    completion=completion,
                    latency_s=time.perf_counter() - started,
                )
            )
            return CallOutcome(request, key, completion, False, attempt)
