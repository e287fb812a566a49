"""Stage 3b: common-noun phrases of every chunk and turn, run in Beam with the spaCy tagger
(`pipelines.segment_phrases`)."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import segment_phrases as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="extract",
    kinds={"beam", "spacy", "duckdb"},
    deps=["segments"],
)
def segment_phrases(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Lemmatised common-noun phrases of every chunk and turn: the phrase nodes beside
    named entities (HippoRAG's phrases without the LLM)."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key, settings))
