"""The start of a bench's spawned build process, before the bench's own modules load.

A spawned process imports the module of each function it unpickles, so an initializer
defined in `benchmarks.build_cost` would load Beam, Dagster and Great Expectations (and
let them log to the terminal: Beam's "apitools not found") before it ran. This module
imports only the collector tuning, so `start_worker` runs first: it tunes the garbage
collector as `kgmem build` does, then runs the caller's setup (the CLI routes library
logs to the workspace's log file there).
"""

from __future__ import annotations

from collections.abc import Callable

from transforms.gc_tuning import tune_gc


def start_worker(worker_setup: Callable[[], object] | None) -> None:
    """Tune the collector, then run `worker_setup` (if any)."""
    tune_gc()
    if worker_setup is not None:
        worker_setup()
