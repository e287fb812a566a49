"""`real_beam`'s beam searches run on one OpenBLAS thread whatever the caller's pool (the
flat prior keeps the pool), and the pool is given back when the query returns."""

from __future__ import annotations

import contextlib

from threadpoolctl import ThreadpoolController

from memory import memory as memory_module
from memory.strategies import real_beam as real_beam_module

QUESTION = "Who is the CEO of Acme?"


def _blas_threads() -> list[int]:
    return [
        lib.num_threads for lib in ThreadpoolController().select(user_api="blas").lib_controllers
    ]


def test_beam_searches_run_on_one_blas_thread(graph_memory, monkeypatch) -> None:
    # as on a snapshot without a second encoder: no limit from `Memory.query` itself
    monkeypatch.setattr(
        memory_module, "query_threads", lambda view, strategy: contextlib.nullcontext()
    )
    seen: dict[str, list[int]] = {}
    searches, prior = real_beam_module.beam_searches, real_beam_module.flat_prior

    def probe_searches(*args, **kwargs):
        seen["searches"] = _blas_threads()
        return searches(*args, **kwargs)

    def probe_prior(*args, **kwargs):
        seen["prior"] = _blas_threads()
        return prior(*args, **kwargs)

    monkeypatch.setattr(real_beam_module, "beam_searches", probe_searches)
    monkeypatch.setattr(real_beam_module, "flat_prior", probe_prior)
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        pool = _blas_threads()
        graph_memory.query(QUESTION, strategy="real_beam", k=3, options={"max_depth": 2})
        assert _blas_threads() == pool == [2] * len(pool)
    assert seen["searches"] == [1] * len(pool)
    assert seen["prior"] == pool
