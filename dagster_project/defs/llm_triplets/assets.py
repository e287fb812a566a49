"""Stage 4b: LLM extraction of REAL atomic facts, MemORAI turn-cited triplets and
PersonalAI theses, gated, cached and run in Beam."""

import time

import dagster as dg

from dagster_project.defs.beam_stage import PendingDocuments, run_beam_stage
from dagster_project.defs.quarantine_check import quarantine_rate_result, quarantine_rate_spec
from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import llm_triplets as llm_pipeline
from schemas.llm_outputs import LLM_SEGMENTS, LLM_TRIPLETS

STAGE = "llm_triplets"

LLM_SEGMENTS_SQL = """
WITH seg AS (
    SELECT * FROM segments WHERE collection = $collection AND list_contains($doc_ids, doc_id)),
turn_mentions AS (
    SELECT m.segment_id, list({'text': m.text, 'label': m.label, 'entity_type': m.entity_type,
        'char_start': m.char_start, 'char_end': m.char_end} ORDER BY m.char_start) AS mentions
    FROM entity_mentions m JOIN seg s USING (segment_id)
    WHERE m.collection = $collection GROUP BY m.segment_id),
session_parts AS (
    SELECT ss.segment_id AS session_id, t.segment_id AS turn_segment, t.seq, t.turn_id,
           t.speaker, t.text, t.char_start - ss.char_start AS shift
    FROM seg ss JOIN seg t
      ON t.doc_id = ss.doc_id AND t.kind = 'turn' AND t.session_id = ss.session_id
    WHERE ss.kind = 'session'),
session_mentions AS (
    SELECT p.session_id AS segment_id, list({'text': m.text, 'label': m.label,
        'entity_type': m.entity_type, 'char_start': m.char_start + p.shift,
        'char_end': m.char_end + p.shift} ORDER BY m.char_start + p.shift) AS mentions
    FROM session_parts p JOIN entity_mentions m
      ON m.collection = $collection AND m.segment_id = p.turn_segment
    GROUP BY p.session_id),
session_turns AS (
    SELECT session_id AS segment_id,
           list({'turn_id': turn_id, 'speaker': speaker, 'text': text} ORDER BY seq) AS turns
    FROM session_parts GROUP BY session_id),
turn_context AS (
    SELECT t.segment_id, list({'turn_id': p.turn_id, 'speaker': p.speaker, 'text': p.text}
                              ORDER BY p.seq) AS turns
    FROM seg t JOIN seg p ON p.doc_id = t.doc_id AND p.kind = 'turn'
      AND p.session_id = t.session_id AND p.seq BETWEEN t.seq - $context_turns AND t.seq
    WHERE t.kind = 'turn' GROUP BY t.segment_id)
SELECT s.segment_id, s.collection, s.doc_id, s.kind, s.text, s.speaker, s.turn_id,
       s.observed_at, coalesce(tm.mentions, sm.mentions, []) AS mentions,
       coalesce(st.turns, tc.turns) AS turns
FROM seg s
LEFT JOIN turn_mentions tm USING (segment_id)
LEFT JOIN session_mentions sm USING (segment_id)
LEFT JOIN session_turns st USING (segment_id)
LEFT JOIN turn_context tc USING (segment_id)
ORDER BY s.doc_id, s.kind, s.seq
"""
CONTEXT_TURNS = 2
"""Earlier turns of the same session shown with a turn, so "it" and "there" resolve."""


@dg.asset(
    partitions_def=collections_partitions,
    group_name="extract",
    kinds={"beam", "llm", "duckdb"},
    deps=["entity_mentions"],
    pool="llm",
    check_specs=[quarantine_rate_spec(STAGE)],
)
def llm_triplets(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """LLM triplets of the segments the gate lets through (at most one call per segment by
    default, none for segments without two graph entities); every call cached by
    (backend, model, prompt version, input hash), invalid answers quarantined."""
    started = time.perf_counter()
    collection = context.partition_key
    cache_path = warehouse.workspace.root / "llm_cache.duckdb"
    cfg = settings.llm_stage(str(cache_path))
    pending = PendingDocuments.of(warehouse, collection, STAGE, "entity_mentions")
    if cfg is None:
        return stage_result(
            started=started,
            rows_in=0,
            rows_out=0,
            skipped=True,
            check_results=[quarantine_rate_result(STAGE, 0, 0, settings.max_quarantine_rate)],
            llm="none",
        )
    params = {"collection": collection, "doc_ids": pending.todo, "context_turns": CONTEXT_TURNS}
    segments = warehouse.fetch(LLM_SEGMENTS_SQL, params).cast(LLM_SEGMENTS)
    output_prefix = warehouse.workspace.parquet_dir(collection, STAGE) / "output" / "part"
    llm_pipeline.clear_outputs(output_prefix)
    triplets = run_beam_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        pending=pending,
        inputs=segments,
        build=lambda p, i, o, _: llm_pipeline.build(p, i, o, cfg),
        output_schema=LLM_TRIPLETS,
    )
    _, rejected, stats = llm_pipeline.read_outputs(output_prefix)
    quarantined = warehouse.replace_document_quarantine(
        collection, STAGE, rejected.to_pylist(), [*pending.todo, *pending.stale]
    )
    rate = quarantine_rate_result(
        STAGE, triplets.num_rows, quarantined, settings.max_quarantine_rate
    )
    return stage_result(
        started=started,
        rows_in=segments.num_rows,
        rows_out=triplets.num_rows,
        quarantined=quarantined,
        check_results=[rate],
        skipped=not pending.todo and not pending.stale,
        llm_calls=stats.llm_calls,
        cache_hits=stats.cache_hits,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
        gated_out=stats.segments_gated_out,
        llm_stats=dg.MetadataValue.json(stats.as_dict()),
    )
