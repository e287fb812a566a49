"""Stage 3b: common-noun phrases of every chunk and turn (`transforms.phrases`), run in
Beam with the spaCy tagger, per document and incrementally like NER."""

import time

import dagster as dg

from dagster_project.defs.beam_stage import run_segment_stage
from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import segment_phrases as phrase_pipeline
from schemas.tables import SEGMENT_PHRASES

STAGE = "segment_phrases"


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
    started = time.perf_counter()
    collection = context.partition_key
    run = run_segment_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        build=phrase_pipeline.build,
        output_schema=SEGMENT_PHRASES,
    )
    return stage_result(
        started=started,
        **run.counts,
        distinct_phrases=len(set(run.output.column("phrase").to_pylist())),
        model=settings.spacy_model,
    )
