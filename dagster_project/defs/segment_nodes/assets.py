"""Stage 6b: the LLM-free structure of the graph (`pipelines.segment_nodes`)."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from pipelines import segment_nodes as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"duckdb"},
    deps=["segments", "segment_phrases", "entities"],
)
def segment_nodes(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Links of every chunk and turn to its document topic (and to the topics it names),
    document, session, speaker and day nodes and the phrases it shares with another
    segment, and of every turn to the next turn of its session."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key))
