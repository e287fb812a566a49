"""The Dagster code location of kgmem: every asset under `dagster_project/defs/` (found by
Dagster's `load_defs`, one folder per stage), the resources, the partitioned build job, the
evaluation jobs, the inbox sensor and the nightly schedule.

`defs` is what `dagster dev` and `kgmem ui` load (`[tool.dg]` in pyproject.toml names the
defs module); `kgmem_definitions()` is the same object for kgmem's own code (the CLI builds,
backfills and benchmarks), loaded once per process.
"""

from __future__ import annotations

import functools

import dagster as dg

from dagster_project import defs as defs_folder
from dagster_project.automation.jobs import build_job, evaluation_jobs
from dagster_project.automation.schedules import nightly_schedule
from dagster_project.automation.sensors import collection_inbox, record_completed_builds
from dagster_project.resources import PipelineSettings, WarehouseResource
from transforms.gc_tuning import tune_gc


@functools.cache
def kgmem_definitions() -> dg.Definitions:
    """Every definition of the code location."""
    return dg.Definitions.merge(
        dg.load_defs(defs_root=defs_folder),
        dg.Definitions(
            jobs=[build_job(), *evaluation_jobs()],
            schedules=[nightly_schedule()],
            sensors=[collection_inbox, record_completed_builds],
            resources={"warehouse": WarehouseResource(), "settings": PipelineSettings()},
        ),
    )


@dg.definitions
def defs() -> dg.Definitions:
    """The code location as Dagster's processes load it (`dagster dev`, `kgmem ui`, their
    run workers), with the garbage collector tuned as the CLI tunes it
    (`transforms.gc_tuning`)."""
    tune_gc()
    return kgmem_definitions()
