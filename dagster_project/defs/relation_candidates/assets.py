"""Stage 4: dependency-parse relation extraction between mentions, run in Beam."""

import time

import dagster as dg

from dagster_project.defs.beam_stage import PendingDocuments, run_beam_stage
from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import relation_candidates as relation_pipeline
from pipelines.relation_candidates import RelationStageConfig
from schemas.tables import EXTRACTABLE_KINDS, RELATION_CANDIDATES, SEGMENT_WITH_MENTIONS

STAGE = "relation_candidates"


@dg.asset(
    partitions_def=collections_partitions,
    group_name="extract",
    kinds={"beam", "spacy", "duckdb"},
    deps=["entity_mentions"],
)
def relation_candidates(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """(head, relation, tail) candidates from dependency patterns, with a confidence; a
    first-person subject in a conversation turn resolves to the speaker."""
    started = time.perf_counter()
    collection = context.partition_key
    pending = PendingDocuments.of(warehouse, collection, STAGE, "entity_mentions")
    segments = warehouse.fetch(
        relation_pipeline.SEGMENTS_WITH_MENTIONS_SQL,
        {"collection": collection, "kinds": list(EXTRACTABLE_KINDS), "doc_ids": pending.todo},
    ).cast(SEGMENT_WITH_MENTIONS)
    classifier = settings.relation_classifier_config(str(warehouse.workspace.root))
    candidates = run_beam_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        pending=pending,
        inputs=segments,
        build=relation_pipeline.build,
        output_schema=RELATION_CANDIDATES,
        config=RelationStageConfig(settings.spacy_stage(), classifier),
    )
    return stage_result(
        started=started,
        **pending.counts(segments.num_rows, candidates.num_rows),
        negated=sum(candidates.column("negated").to_pylist()),
        classifier=classifier.model if classifier else "none (no trained artifact)",
        by_extractor=dg.MetadataValue.json(_counts(candidates.column("extractor").to_pylist())),
    )


def _counts(values: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts
