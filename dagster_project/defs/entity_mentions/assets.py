"""Stage 3: NER over segments (spaCy or a Hugging Face token classifier), run in Beam."""

import time

import dagster as dg
import pyarrow as pa

from dagster_project.defs.beam_stage import PendingDocuments, run_beam_stage
from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import entity_mentions as ner_pipeline
from schemas.tables import ENTITY_MENTIONS, EXTRACTABLE_KINDS, SEGMENTS

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
    pending = PendingDocuments.of(warehouse, collection, STAGE, "segments")
    segments = warehouse.fetch(
        "SELECT * FROM segments WHERE collection = ? AND list_contains(?, kind) "
        "AND list_contains(?, doc_id) ORDER BY doc_id, seq",
        [collection, list(EXTRACTABLE_KINDS), pending.todo],
    ).cast(SEGMENTS)
    mentions = run_beam_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        pending=pending,
        inputs=segments,
        build=ner_pipeline.build,
        output_schema=ENTITY_MENTIONS,
        config=config,
    )
    return stage_result(
        started=started,
        rows_in=segments.num_rows,
        rows_out=mentions.num_rows,
        skipped=not pending.todo and not pending.stale,
        documents_processed=len(pending.todo),
        model=config.model_tag,
        runner=settings.beam_runner,
        labels=dg.MetadataValue.json(_label_counts(mentions)),
    )


def _label_counts(mentions: pa.Table) -> dict[str, int]:
    counts = mentions.group_by("label").aggregate([("label", "count")]).to_pylist()
    return {row["label"]: row["label_count"] for row in counts}
