"""Sensors: the inbox of collections, and the record of completed builds.

`collection_inbox` scans the inbox (`inbox.scan_inbox`) on every tick: new collections become
dynamic partitions, each new or changed collection has its inputs registered in the warehouse
and a run of the build job requested, keyed by its fingerprint so a tick repeated on the same
files requests nothing. Folders with invalid names are reported in the skip message (and in
the tick's log when runs were requested), never built.

`record_completed_builds` records, when a build run requested by the sensor or the schedule
succeeds, the fingerprint its inputs had when it was requested, the record the nightly
schedule compares with (a CLI build records it itself, `build.build_collection`).
"""

from __future__ import annotations

import dagster as dg

from dagster_project.automation.fingerprints import FINGERPRINT_TAG, record_built
from dagster_project.automation.inbox import inbox_folder, parse_cursor, scan_inbox
from dagster_project.automation.jobs import BUILD_JOB
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource

PARTITION_TAG = "dagster/partition"


@dg.sensor(
    name="collection_inbox",
    job_name=BUILD_JOB,
    minimum_interval_seconds=60,
    description="Registers each inbox subfolder as a collection partition and builds it when "
    "it is new or its files changed ($KGMEM_INBOX, else <workspace>/inbox).",
)
def collection_inbox(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource
) -> dg.SensorResult:
    inbox = inbox_folder(warehouse.root)
    scan = scan_inbox(inbox)
    changed = scan.changed_since(parse_cursor(context.cursor))
    known = set(context.instance.get_dynamic_partitions(collections_partitions.name))
    new = sorted(set(scan.inputs) - known)
    for name in changed:
        warehouse.register_collection(name, scan.inputs[name])
    invalid = "; ".join(f"{folder}: {why}" for folder, why in sorted(scan.invalid.items()))
    if invalid and changed:
        context.log.warning(f"ignored inbox folders: {invalid}")
    requests = [
        dg.RunRequest(
            partition_key=name,
            run_key=f"{name}:{scan.fingerprints[name]}",
            tags={FINGERPRINT_TAG: scan.fingerprints[name]},
        )
        for name in changed
    ]
    skip = None
    if not requests:
        skip = f"no new or changed collection in {inbox}" + (
            f"; ignored folders: {invalid}" if invalid else ""
        )
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[collections_partitions.build_add_request(new)] if new else [],
        cursor=scan.cursor(),
        skip_reason=skip,
    )


@dg.run_status_sensor(
    name="record_completed_builds",
    run_status=dg.DagsterRunStatus.SUCCESS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Records the inputs' fingerprint of every successful sensed or scheduled build.",
)
def record_completed_builds(
    context: dg.RunStatusSensorContext, warehouse: WarehouseResource
) -> None:
    run = context.dagster_run
    fingerprint, partition = run.tags.get(FINGERPRINT_TAG), run.tags.get(PARTITION_TAG)
    if run.job_name == BUILD_JOB and fingerprint and partition:
        record_built(warehouse, partition, fingerprint)
