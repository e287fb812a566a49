"""Stage 4b: LLM extraction of REAL atomic facts, MemORAI turn-cited triplets and
PersonalAI theses, gated, cached and run in Beam (`pipelines.llm_triplets`)."""

import dagster as dg

from dagster_project.defs.quarantine_check import quarantine_rate_spec
from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import llm_triplets as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="extract",
    kinds={"beam", "llm", "duckdb"},
    deps=["entity_mentions"],
    pool="llm",
    check_specs=[quarantine_rate_spec(stage.STAGE)],
)
def llm_triplets(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """LLM triplets of the segments the gate lets through (at most one call per segment by
    default, none for segments without two graph entities); every call cached by
    (backend, model, prompt version, input hash), invalid answers quarantined."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key, settings))
