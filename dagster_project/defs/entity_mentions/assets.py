"""Stage 3: NER over segments (spaCy or a Hugging Face token classifier), run in Beam."""

import time

import dagster as dg
import pyarrow as pa

from dagster_project.defs.beam_stage import run_segment_stage
from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import entity_mentions as ner_pipeline
from schemas.tables import ENTITY_MENTIONS

STAGE = "entity_mentions"


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
    started = time.perf_counter()
    config = settings.ner_stage()
    collection = context.partition_key
    run = run_segment_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        build=ner_pipeline.build,
        output_schema=ENTITY_MENTIONS,
        config=config,
    )
    return stage_result(
        started=started,
        **run.counts,
        model=config.model_tag,
        runner=settings.beam_runner,
        labels=dg.MetadataValue.json(_label_counts(run.output)),
    )


def _label_counts(mentions: pa.Table) -> dict[str, int]:
    counts = mentions.group_by("label").aggregate([("label", "count")]).to_pylist()
    return {row["label"]: row["label_count"] for row in counts}
