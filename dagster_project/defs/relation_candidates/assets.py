"""Stage 4: dependency-parse relation extraction between mentions, run in Beam
(`pipelines.relation_candidates`)."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import relation_candidates as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="extract",
    kinds={"beam", "spacy", "duckdb"},
    deps=["entity_mentions"],
)
def relation_candidates(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """(head, relation, tail) candidates from dependency patterns, with a confidence; a
    first-person subject in a conversation turn resolves to the speaker."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key, settings))
