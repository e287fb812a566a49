"""Stage 7b: co-occurrence and synonym links between entities (`pipelines.entity_links`),
into the LanceDB table the snapshot pins beside the segments."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from pipelines import entity_links as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="memory",
    kinds={"lancedb"},
    deps=["graph_embeddings", "entity_mentions", "fact_versions"],
)
def entity_links(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Entity pairs within KGERMAR's window that no typed fact joins, and entities whose
    names are nearest neighbours above HippoRAG 2's synonym threshold."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key))
