"""Stage 5: resolve mentions into entities through the blocking cascade, with aliases and
reversible same_as links (`pipelines.entities`)."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import entities as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"duckdb"},
    deps=["entity_mentions", "relation_candidates"],
)
def entities(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Entities from the cascade exact → normalised → Levenshtein → surname → embedding,
    with type and acronym guards; every mention key links to its entity in
    `entity_same_as` (method, score), user splits and merges in `entity_constraints`. A
    re-run compares only new and retyped keys against the blocking index
    (`entity_blocking_keys`, `entity_blocking_edges`); the metadata says how many."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key, settings))
