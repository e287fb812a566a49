"""The Dagster code location of kgmem: every stage asset, its checks, the resources, the
partitioned build job, the inbox sensor and the nightly schedule."""

from __future__ import annotations

import dagster as dg

from dagster_project import defs as stage_defs
from dagster_project.automation.jobs import build_job
from dagster_project.automation.schedules import nightly_schedule
from dagster_project.automation.sensors import collection_inbox, record_completed_builds
from dagster_project.resources import PipelineSettings, WarehouseResource

ALL_ASSETS = dg.load_assets_from_package_module(stage_defs)

build_collection_job = build_job(ALL_ASSETS)

defs = dg.Definitions(
    assets=ALL_ASSETS,
    jobs=[build_collection_job],
    schedules=[nightly_schedule()],
    sensors=[collection_inbox, record_completed_builds],
    resources={"warehouse": WarehouseResource(), "settings": PipelineSettings()},
)
