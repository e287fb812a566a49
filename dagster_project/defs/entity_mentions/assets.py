"""Stage 3: NER over segments (spaCy or a Hugging Face token classifier), run in Beam
(`pipelines.entity_mentions`)."""

import dagster as dg

from dagster_project.defs.stage_result import materialized
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import entity_mentions as stage


@dg.asset(
    partitions_def=collections_partitions,
    group_name="extract",
    kinds={"beam", "spacy", "duckdb"},
    deps=["segments"],
)
def entity_mentions(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Named-entity mentions of every chunk and turn, with exact char spans (segment and
    document offsets), the model's label and the KGERMAR type."""
    return materialized(stage.STAGE, lambda: stage.run(warehouse, context.partition_key, settings))
