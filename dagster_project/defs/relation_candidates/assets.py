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

SEGMENTS_WITH_MENTIONS_SQL = """
WITH devices AS (
    SELECT doc_id, mode(text ORDER BY text) AS context_device FROM entity_mentions
    WHERE collection = $collection AND label = 'PRODUCT' GROUP BY doc_id)
SELECT s.segment_id, s.collection, s.doc_id, s.text, s.speaker, d.context_device,
       coalesce(list({'text': m.text, 'label': m.label, 'entity_type': m.entity_type,
                      'char_start': m.char_start, 'char_end': m.char_end}
                     ORDER BY m.char_start) FILTER (WHERE m.mention_id IS NOT NULL), []) AS mentions
FROM segments s
LEFT JOIN entity_mentions m ON m.collection = s.collection AND m.segment_id = s.segment_id
LEFT JOIN devices d ON d.doc_id = s.doc_id
WHERE s.collection = $collection AND list_contains($kinds, s.kind)
  AND list_contains($doc_ids, s.doc_id)
GROUP BY ALL
ORDER BY s.doc_id, s.segment_id
"""


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
        SEGMENTS_WITH_MENTIONS_SQL,
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
