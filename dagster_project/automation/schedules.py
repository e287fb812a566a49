"""The nightly schedule: rebuild every collection that changed.

On each tick it compares the fingerprint of every registered collection's inputs with the one
recorded by its last completed build (`fingerprints.pending_collections`) and requests a run
of the build job for each one that differs or was never completed. Evaluations are jobs of
their own (`automation.jobs`), run by `kgmem eval` or from the launchpad. The cron
expression and time
zone come from the factory's arguments, else `$KGMEM_NIGHTLY_CRON` / `$KGMEM_NIGHTLY_TZ`,
else 02:00 UTC.
"""

from __future__ import annotations

import os

import dagster as dg

from dagster_project.automation.fingerprints import (
    FINGERPRINT_TAG,
    pending_collections,
    registered_collections,
)
from dagster_project.automation.jobs import BUILD_JOB
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource

DEFAULT_CRON = "0 2 * * *"
CRON_ENV, TIMEZONE_ENV = "KGMEM_NIGHTLY_CRON", "KGMEM_NIGHTLY_TZ"


def nightly_schedule(
    cron: str | None = None, timezone: str | None = None, name: str = "nightly_build"
) -> dg.ScheduleDefinition:
    """The nightly build schedule on `cron` in `timezone` (see the module docstring)."""

    @dg.schedule(
        name=name,
        cron_schedule=cron or os.environ.get(CRON_ENV, DEFAULT_CRON),
        execution_timezone=timezone or os.environ.get(TIMEZONE_ENV, "UTC"),
        job_name=BUILD_JOB,
        description="Builds every collection whose inputs changed since its last completed build.",
    )
    def nightly(
        context: dg.ScheduleEvaluationContext, warehouse: WarehouseResource
    ) -> list[dg.RunRequest] | dg.SkipReason:
        partitions = set(context.instance.get_dynamic_partitions(collections_partitions.name))
        names = [n for n in registered_collections(warehouse) if n in partitions]
        changed, unusable = pending_collections(warehouse, names)
        for collection, reason in unusable.items():
            context.log.warning(f"collection {collection} not checked: {reason}")
        if not changed:
            return dg.SkipReason(f"none of {len(names)} collection(s) changed since its last build")
        return [
            dg.RunRequest(partition_key=name, tags={FINGERPRINT_TAG: fingerprint})
            for name, fingerprint in sorted(changed.items())
        ]

    return nightly
