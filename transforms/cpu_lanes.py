"""Two fixed lanes of CPU work, with OpenBLAS held to one thread: a query's parallelism.

Why: OpenBLAS splits a product over its threads, and after each call those threads spin
for a while before they sleep. On this machine's two cores that had two costs:

- Last bits. OpenBLAS computes a small product in another order on two threads than on
  one, so a query's MiniLM vector depended on the thread limit of the path that embedded
  it (253 of 256 LoCoMo questions differed; `real_beam` ranked 67 of 996 LoCoMo dev
  questions differently under `--jobs 2`).
- Stolen cores. The spinning threads of one call hold the core the next piece of work
  needs: after `dense`'s product of the 40k segment vectors of the 100k-fact bench (on
  the pool), the next query's encoder took 7.1 ms on two lanes where it took 4.9 ms after
  the same product on one thread (60 queries).

So a query holds OpenBLAS to one thread (`one_blas_thread`), and the pieces of its work
that are large enough to split, the query encoder's layers (`transforms.numpy_bert`) and
the products of a query vector with every row of a matrix (`lane_product`: the exact
segment search, KGERMAR's structure rows, the entity searches without an IVF index), are
cut into `LANES` parts along the model's heads and units or the matrix's rows, always
the same way, and run side by side (`map_lanes`): the first part on the caller's thread,
the others on lane threads, which block on a queue rather than spin. Each part runs on
one OpenBLAS thread, so its bits are the same whether the parts run side by side or one
after the other; they run side by side only where the caller's limit, read when the hold
begins, allowed two or more BLAS threads (one process of `--jobs 2` on two cores runs
them one after the other, as does a query that starts while another query of the process
holds the limit).

Two pieces of work that are each bound by memory bandwidth can instead run side by side
whole, one on the lane thread and the other on the caller's thread, whose own lanes then
run in turn (`on_lane`: KGERMAR's structure product beside the query's flat prior).

OpenBLAS's limit belongs to the process, so holds are counted: the first one limits, the
last one to end restores what the caller had, and a query that ends never lifts the
limit under another one still running in the process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

LANES = 2
"""Parts a split piece of work is cut into, whatever the machine (the bits depend on it)."""

Part = TypeVar("Part")
Result = TypeVar("Result")

_held_lanes: ContextVar[int | None] = ContextVar("kgmem_held_lanes", default=None)
"""Lanes the current context's hold allows (None: no hold)."""


class _Holds:
    """The process's count of running holds and the limit the first one set."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.limiter: Any = None


_holds = _Holds()


@functools.cache
def blas_controller() -> ThreadpoolController:
    """The process's thread pools (numpy's OpenBLAS among them), found once (~10 ms)."""
    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[int]:
    """OpenBLAS held to one thread for the body; yields the lanes `map_lanes` may use in
    it (`LANES` where the caller's BLAS limit allowed two or more threads and no other
    hold of the process was running, else 1). Nested holds keep the outer one's."""
    outer = _held_lanes.get()
    if outer is not None:
        yield outer
        return
    with _holds.lock:
        if _holds.count == 0:
            blas = blas_controller().select(user_api="blas")
            threads = min((lib.num_threads for lib in blas.lib_controllers), default=1)
            lanes = max(1, min(threads, LANES))
            _holds.limiter = blas.limit(limits=1)
        else:
            lanes = 1
        _holds.count += 1
    token = _held_lanes.set(lanes)
    try:
        yield lanes
    finally:
        _held_lanes.reset(token)
        with _holds.lock:
            _holds.count -= 1
            if _holds.count == 0:
                _holds.limiter.restore_original_limits()
                _holds.limiter = None


def map_lanes(function: Callable[[Part], Result], parts: Sequence[Part]) -> list[Result]:
    """`function` of each of `parts`, in order: side by side where the current hold allows
    lanes (the first part on the caller's thread), else one after the other. Outside a
    hold the parts run one after the other."""
    if (_held_lanes.get() or 1) < 2 or len(parts) < 2:
        return [function(part) for part in parts]
    others = [_lane_threads(os.getpid()).submit(function, part) for part in parts[1:]]
    return [function(parts[0]), *(other.result() for other in others)]


@contextlib.contextmanager
def on_lane(function: Callable[..., Result], *args: Any) -> Iterator[Callable[[], Result]]:
    """`function(*args)` run on the lane thread while the body runs on the caller's thread
    alone (its `map_lanes` one part after the other), where the current hold allows lanes:
    two pieces of work side by side, each on one core, where lanes would cut both in two
    one after the other. Yields the function that returns its result (waiting for it);
    the block ends when the work has. Without lanes the work runs when its result is
    first asked for. The work must not read the caller's context (it runs in another
    thread, outside the caller's hold: its own `map_lanes` run one part after the other),
    so a part's bits are the same either way."""
    if (_held_lanes.get() or 1) < 2:
        yield functools.cache(lambda: function(*args))
        return
    future = _lane_threads(os.getpid()).submit(function, *args)
    token = _held_lanes.set(1)
    try:
        yield future.result
    finally:
        _held_lanes.reset(token)
        futures.wait([future])


def lane_product(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """`matrix @ vector`, the rows cut into `LANES` fixed blocks (views) multiplied side by
    side where the query may (`map_lanes`, under a hold): a row's product has the same
    bits under any thread limit."""
    with one_blas_thread():
        blocks = np.array_split(matrix, LANES)
        return np.concatenate(map_lanes(lambda block: np.asarray(block @ vector), blocks))


@functools.cache
def _lane_threads(process: int) -> ThreadPoolExecutor:
    """The lane threads of `process` (keyed by process id: a forked child starts its own,
    as its parent's threads were not copied)."""
    return ThreadPoolExecutor(LANES - 1, thread_name_prefix=f"kgmem-lane-{process}")
