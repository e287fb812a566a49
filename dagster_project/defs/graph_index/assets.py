"""Stage 9: the graph index of each snapshot, precomputed for the query processes that map
it (`pipelines.graph_index`)."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from pipelines import graph_index as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="memory",
    kinds={"numpy", "arrow"},
    deps=["memory_snapshot"],
)
def graph_index(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Node tables, fact columns (ends, relation, confidence, valid and recorded intervals),
    statement vectors and the mention and support CSR matrices of every snapshot of the
    collection, written once beside it and memory-mapped by queries."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key))
