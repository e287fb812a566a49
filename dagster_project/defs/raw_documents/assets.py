"""Stage 1: load a collection's files into the `documents` table (`pipelines.raw_documents`)."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from pipelines import raw_documents as stage


@dg.asset(partitions_def=collections_partitions, group_name="ingest", kinds={"duckdb"})
def raw_documents(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Every document and conversation of the collection, with content-hash ids; unchanged
    documents are left alone, removed ones dropped, unreadable records quarantined."""
    return materialized("raw_documents", lambda: stage.run(warehouse, context.partition_key))
