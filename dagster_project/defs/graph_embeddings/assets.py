"""Stage 7: embeddings into LanceDB and KGERMAR's structural bank
(`pipelines.graph_embeddings`)."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import graph_embeddings as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="memory",
    kinds={"lancedb", "pytorch"},
    deps=["segments", "entities", "entity_mentions", "fact_versions", "segment_nodes"],
)
def graph_embeddings(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """MiniLM embeddings of every chunk and turn (with their entity and structural
    links), of every entity description, of every entity's mention contexts (KGERMAR's
    C = 64 tokens, span-pooled) and of every fact statement, in LanceDB tables with
    full-text indexes on segment text and fact statements; then KGERMAR's R-GCN
    structural bank over the current facts."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key, settings))
