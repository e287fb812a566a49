"""The Dagster code location of kgmem: every stage asset, its checks, and the resources."""

from __future__ import annotations

import dagster as dg

from dagster_project import defs as stage_defs
from dagster_project.resources import PipelineSettings, WarehouseResource

ALL_ASSETS = dg.load_assets_from_package_module(stage_defs)

build_collection_job = dg.define_asset_job(
    "build_collection",
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    description="Materialise every stage of one collection (partition) in lineage order.",
)

defs = dg.Definitions(
    assets=ALL_ASSETS,
    jobs=[build_collection_job],
    resources={"warehouse": WarehouseResource(), "settings": PipelineSettings()},
)
