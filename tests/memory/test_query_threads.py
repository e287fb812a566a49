"""Every query holds OpenBLAS to one thread while its strategy runs, and only then; the
answers are those of the full pool."""

from __future__ import annotations

import contextlib

import pytest
from threadpoolctl import ThreadpoolController

from memory import memory as memory_module
from memory.strategies import registry

QUESTIONS = ("Who is the CEO of Acme?", "What does error E-42 mean on the Inkwell 3000?")


def _blas_threads() -> list[int]:
    return [
        lib.num_threads for lib in ThreadpoolController().select(user_api="blas").lib_controllers
    ]


def test_every_strategy_runs_on_one_blas_thread_and_gives_the_pool_back(
    graph_memory, monkeypatch
) -> None:
    names = ("hybrid", "hipporag_ppr", "real_beam", "dense", "bm25")
    seen: dict[str, list[int]] = {}
    for name in names:
        strategy = registry.STRATEGIES[name]

        def probe(view, query, strategy=strategy, name=name):
            seen[name] = _blas_threads()
            return strategy(view, query)

        monkeypatch.setitem(registry.STRATEGIES, name, probe)
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        pool = _blas_threads()
        for name in names:
            graph_memory.query(QUESTIONS[0], strategy=name, k=3)
        assert _blas_threads() == pool == [2] * len(pool)
    assert all(seen[name] == [1] * len(pool) for name in names)


def test_one_blas_thread_answers_as_the_pool(graph_memory, monkeypatch) -> None:
    strategies = ("hybrid", "hipporag_ppr", "memorai_dwpr", "personalai_beam")
    limited = [
        [(h.segment_id, h.score) for h in graph_memory.query(q, strategy=s, k=5).hits]
        for q in QUESTIONS
        for s in strategies
    ]
    graph_memory.close()
    monkeypatch.setattr(memory_module, "one_blas_thread", contextlib.nullcontext)
    pooled = [
        [(h.segment_id, h.score) for h in graph_memory.query(q, strategy=s, k=5).hits]
        for q in QUESTIONS
        for s in strategies
    ]
    graph_memory.close()
    assert all(limited)
    assert [[sid for sid, _ in hits] for hits in limited] == [
        [sid for sid, _ in hits] for hits in pooled
    ]
    # BLAS sums in another order on one thread than on the pool: equal to float32 precision.
    assert [[score for _, score in hits] for hits in limited] == [
        [pytest.approx(score, rel=1e-5, abs=1e-6) for _, score in hits] for hits in pooled
    ]
