"""The start of a backfill worker process, in a module of its own that imports nothing
heavy: a spawned worker imports the initializer's module before running it, so the CLI's
routing of library logs (`worker_setup`) is in place before Beam, Dagster or torch print
anything at import."""

from __future__ import annotations

import os
from collections.abc import Callable

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def start_worker(threads: int, worker_setup: Callable[[], object] | None) -> None:
    """Give a backfill worker its share of the cores before it imports a model library:
    torch and the BLAS libraries size their thread pools from these variables at import,
    and by default each worker would start one thread per core, so N workers would run N
    times as many threads as there are cores (4 partitions, 2 at a time on 2 cores: 1.79x
    the sequential wall time with a thread per core in each worker, 0.98x with its share).
    A value set in the environment is kept."""
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, str(threads))
    if worker_setup is not None:
        worker_setup()
