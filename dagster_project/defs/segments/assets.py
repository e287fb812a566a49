"""Stage 2: cut documents into chunks and conversations into turns and sessions
(`pipelines.segments`)."""

import dagster as dg

from dagster_project.defs.contract_check import contract_spec
from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import segments as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="ingest",
    kinds={"duckdb"},
    deps=["raw_documents"],
    check_specs=[contract_spec(stage.STAGE)],
)
def segments(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Sentence-aware chunks of documents, turns and sessions of conversations, each with
    its document, char offsets, speaker, session and observed time."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key, settings))
