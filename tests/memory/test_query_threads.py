"""A query that runs the snapshot's two encoders holds OpenBLAS to one thread while the
strategy runs, and only then; the answers are those of the full pool."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest
from threadpoolctl import ThreadpoolController

from memory import memory as memory_module
from memory.query_threads import query_threads
from memory.strategies import registry

QUESTIONS = ("Who is the CEO of Acme?", "What does error E-42 mean on the Inkwell 3000?")


def _blas_threads() -> list[int]:
    return [
        lib.num_threads for lib in ThreadpoolController().select(user_api="blas").lib_controllers
    ]


def test_fused_strategies_run_on_one_blas_thread_and_give_the_pool_back(
    graph_memory, monkeypatch
) -> None:
    assert graph_memory._view.fusion_encoder is not None, "the sample fuses a second encoder"
    names = ("hybrid", "hipporag_ppr", "dense", "bm25")
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
    assert seen["hybrid"] == seen["hipporag_ppr"] == [1] * len(pool)
    assert seen["dense"] == seen["bm25"] == pool


def test_a_snapshot_without_a_second_encoder_keeps_the_pool() -> None:
    view = SimpleNamespace(fusion_encoder=None)
    assert isinstance(query_threads(view, "hybrid"), contextlib.nullcontext)


def test_one_blas_thread_answers_as_the_pool(graph_memory, monkeypatch) -> None:
    strategies = ("hybrid", "hipporag_ppr", "memorai_dwpr", "personalai_beam")
    limited = [
        [(h.segment_id, h.score) for h in graph_memory.query(q, strategy=s, k=5).hits]
        for q in QUESTIONS
        for s in strategies
    ]
    graph_memory.close()
    monkeypatch.setattr(memory_module, "query_threads", lambda *_: contextlib.nullcontext())
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
