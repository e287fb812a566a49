"""Beam's Dask runner on a `dask.distributed` cluster: which scheduler a run uses, a
`LocalCluster` when none is named, and running a pipeline there to completion.

Production names a scheduler: the `dask_address` setting (`tcp://scheduler:8786`), or the
pass-through Beam flags `--dask_client_address=...` / `--dask_scheduler_file=...`. With
none of them, kgmem starts a `distributed.LocalCluster` and closes it afterwards: a build
(`BuildSettings.dask_cluster`, which `kgmem build` holds around every stage) starts one
for the whole build, so each worker loads a model once per build rather than once per
stage; a stage launched on its own (one asset materialised from the UI, a stage's command
line) starts one for that launch. The choice of cluster, and why:

- `n_workers = beam_workers`, one per CPU when unset: the unit of parallelism is the
  worker process, as with the DirectRunner's `multi_processing` mode.
- `processes=True, threads_per_worker=1`: the models (spaCy, torch) hold the GIL for much
  of their work and are cached per process (`functools.cache` loaders, Beam `Shared`), so
  threads in one worker would queue on the GIL, and a worker process per core holds one
  copy of each model. Dask's nanny sets `OMP_NUM_THREADS=1` in each worker, so the
  workers do not oversubscribe the cores either.
- No dashboard on an ephemeral cluster, and the scheduler's own HTTP endpoints (health,
  metrics) on a free port rather than 8787, where a second build's cluster would collide.

Beam's `DaskRunner` is not one of Beam's short runner names, so `DaskRunner` resolves to
its full path (`DASK_RUNNER_IMPL`); its options (`--dask_client_address`, ...) parse only
once its module is imported (`register_dask_options`). Its run result keeps a client
connected to the scheduler that nothing closes; `run_pipeline` closes it when the run ends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import apache_beam as beam

from pipelines.runner_modes import DASK_RUNNER

DASK_RUNNER_IMPL = "apache_beam.runners.dask.dask_runner.DaskRunner"
SCHEDULER_FLAGS = ("--dask_client_address", "--dask_scheduler_file")
PARTITION_FLAGS = ("--dask_npartitions", "--dask_partition_size")
_LOG = logging.getLogger(__name__)


def is_dask(runner: str) -> bool:
    """Whether `runner` (a setting's or a `--runner` flag's value) names the Dask runner."""
    return runner in (DASK_RUNNER, DASK_RUNNER_IMPL)


def flag_names(flags: Sequence[str]) -> set[str]:
    """The names of `flags` (`--name=value` or `--name`)."""
    return {flag.split("=", 1)[0] for flag in flags}


def names_scheduler(address: str | None, flags: Sequence[str]) -> bool:
    """Whether a scheduler is named by `address` or by one of the pass-through `flags`."""
    return bool(address) or bool(flag_names(flags) & set(SCHEDULER_FLAGS))


def register_dask_options() -> None:
    """Import Beam's Dask runner so that its `DaskOptions` parse (`--dask_client_address`,
    `--dask_partition_size`, ...); it needs `dask[distributed]`."""
    import apache_beam.runners.dask.dask_runner  # noqa: F401


@contextmanager
def local_cluster(workers: int | None = None) -> Iterator[str]:
    """A `LocalCluster` of `workers` worker processes (one per CPU when None or 0) of one
    thread each, for the duration; yields its scheduler address."""
    import os

    from distributed import LocalCluster

    count = workers or os.cpu_count() or 1
    cluster = LocalCluster(
        n_workers=count,
        processes=True,
        threads_per_worker=1,
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": ":0"},
    )
    _LOG.info("started a Dask LocalCluster of %d workers at %s", count, cluster.scheduler_address)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@contextmanager
def scheduler_for(
    runner: str, address: str | None, flags: Sequence[str], workers: int | None
) -> Iterator[str | None]:
    """The scheduler address a run of `runner` should use for the duration: `address` as
    given when the runner is not Dask or a scheduler is named (by `address` or `flags`),
    else the address of a `local_cluster(workers)` started for the duration."""
    if not is_dask(runner) or names_scheduler(address, flags):
        yield address
        return
    with local_cluster(workers) as started:
        yield started


def run_pipeline(p: beam.Pipeline) -> Any:
    """Run `p` to completion and return its result; a Dask run's client is closed after."""
    result = p.run()
    try:
        result.wait_until_finish()
    finally:
        client = getattr(result, "client", None)
        if client is not None:
            client.close()
    return result
