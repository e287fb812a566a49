"""Stage 6: fold relation candidates into append-only, bitemporal fact versions
(`pipelines.fact_versions`)."""

import dagster as dg

from dagster_project.defs.contract_check import contract_spec
from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import fact_versions as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"beam", "duckdb"},
    deps=["entities", "relation_candidates", "llm_triplets"],
    check_specs=[contract_spec(stage.STAGE)],
)
def fact_versions(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Facts with valid time (`valid_from`/`valid_to`) and recorded time
    (`recorded_from`/`recorded_to`), folded per (head, relation) key in Beam with REAL's
    cardinality rules; every change is a new version citing its segments. Candidates come
    from the relation extractors, and from the LLM triplets when `llm_facts` is set; each
    document's triples are weighed first (KGERMAR: w = α·conf + (1−α)·freq/maxfreq, kept
    when w > θ_conf, w becoming the confidence) and the others quarantined."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key, settings))
