"""The partitioned build job the sensor, the schedule and UI backfills launch.

It selects, by partitions definition rather than by name, every asset partitioned by
collection: the build stages and the collection-level evaluation assets (group
"evaluation"), which depend on `memory_snapshot` and so run after the build in the same run.
Dataset-level evaluations (unpartitioned) read no collection and are left to their own runs.
Steps run in one process, in lineage order: a run then holds at most one warehouse
transaction at a time, and the steps skip the 20-second import a process per step costs.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

from dagster_project.partitions import collections_partitions

BUILD_JOB = "build_collection"


def collection_assets(assets: Iterable[dg.AssetsDefinition]) -> dg.AssetSelection:
    """The assets of `assets` partitioned by collection."""
    keys = [
        key
        for asset in assets
        if asset.partitions_def == collections_partitions
        for key in asset.keys
    ]
    return dg.AssetSelection.assets(*keys)


def build_job(assets: Iterable[dg.AssetsDefinition]) -> dg.UnresolvedAssetJobDefinition:
    """The job that builds (and evaluates) one collection partition."""
    return dg.define_asset_job(
        BUILD_JOB,
        selection=collection_assets(assets),
        partitions_def=collections_partitions,
        executor_def=dg.in_process_executor,
        description="Materialise every stage of one collection (partition) in lineage order, "
        "then its collection-level evaluations; select a partition range to backfill.",
    )
