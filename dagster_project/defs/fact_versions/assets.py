"""Stage 6: fold relation candidates into append-only, bitemporal fact versions."""

import time
from dataclasses import asdict
from datetime import UTC, datetime

import apache_beam as beam
import dagster as dg
import pyarrow as pa

from dagster_project.defs.contract_check import contract_result, contract_spec
from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines import fact_folding
from pipelines.parquet_io import clear_shards, read_shards, write_input
from schemas.tables import ASSERTIONS, FACT_INTERVALS
from transforms.facts import (
    STAGE,
    Assertion,
    FactState,
    below_weight,
    cardinality_decisions,
    plan_versions,
    to_assertions,
    unmatched_record,
)
from transforms.ids import content_id
from transforms.relation_registry import CardinalityDecision, cardinality_rows
from transforms.triple_weights import filter_candidates

CANDIDATES_SQL = """
SELECT c.candidate_id AS id, c.segment_id, c.doc_id, c.head_text, c.relation, c.tail_text,
       c.negated, c.confidence, c.extractor, NULL::TIMESTAMPTZ AS valid_from,
       NULL::TIMESTAMPTZ AS valid_to, s.observed_at, s.text AS segment_text,
       least(c.head_start, c.tail_start) AS span_start, greatest(c.head_end, c.tail_end) AS span_end
FROM relation_candidates c
JOIN segments s ON s.collection = c.collection AND s.segment_id = c.segment_id
WHERE c.collection = $collection
UNION ALL
SELECT t.triplet_id, t.segment_id, t.doc_id, t.head_text, t.relation, t.tail_text, false,
       t.confidence, t.extractor, t.valid_from, t.valid_to, s.observed_at, s.text,
       NULL::INTEGER, NULL::INTEGER
FROM llm_triplets t
JOIN segments s ON s.collection = t.collection AND s.segment_id = t.segment_id
WHERE $with_llm AND t.collection = $collection AND t.output_kind <> 'thesis'
  AND t.head_text IS NOT NULL AND t.tail_text IS NOT NULL
ORDER BY id
"""
FINGERPRINT_SQL = """
SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) || '/reported-v1' AS fp FROM (
    SELECT candidate_id AS id FROM relation_candidates WHERE collection = $collection
    UNION ALL SELECT triplet_id FROM llm_triplets WHERE $with_llm AND collection = $collection
    UNION ALL SELECT norm_key || '>' || entity_id FROM entity_same_as
    WHERE collection = $collection)
"""
CURRENT_SQL = "SELECT * FROM fact_versions WHERE collection = ? AND recorded_to IS NULL"
NAMES_SQL = "SELECT entity_id, name FROM entities WHERE collection = ?"


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"beam", "duckdb"},
    deps=["entities", "relation_candidates", "llm_triplets"],
    check_specs=[contract_spec(STAGE)],
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
    started = time.perf_counter()
    collection = context.partition_key
    registry = settings.registry()
    params = {"collection": collection, "with_llm": settings.llm_facts}
    fingerprint = content_id(warehouse.rows(FINGERPRINT_SQL, params)[0]["fp"], registry)
    skipped = warehouse.fingerprint_unchanged(collection, STAGE, fingerprint)
    appended = rows_in = quarantined = 0
    learned: dict[str, str] = {}
    if not skipped:
        candidates = warehouse.rows(CANDIDATES_SQL, params)
        observed = {c["segment_id"]: c["observed_at"] for c in candidates}
        weighted = filter_candidates(
            candidates, settings.triple_alpha, settings.theta_conf, scope="doc_id"
        )
        assertions, rejected = to_assertions(
            collection, weighted, observed, registry, warehouse.entity_of(collection)
        )
        rejected.extend(below_weight(candidates, weighted, settings.theta_conf))
        decisions = cardinality_decisions(assertions, registry)
        facts, unmatched = _fold_in_beam(warehouse, settings, collection, assertions, decisions)
        rejected.extend(unmatched_record(a) for a in unmatched)
        current = {r["fact_id"]: r for r in warehouse.rows(CURRENT_SQL, [collection])}
        names = {r["entity_id"]: r["name"] for r in warehouse.rows(NAMES_SQL, [collection])}
        versions = plan_versions(collection, facts, current, names, datetime.now(UTC))
        warehouse.append("fact_version_log", versions)
        warehouse.replace_collection(
            "relation_cardinality", collection, cardinality_rows(collection, decisions)
        )
        quarantined = warehouse.set_quarantine(collection, STAGE, rejected)
        warehouse.record_fingerprint(collection, STAGE, fingerprint)
        appended, rows_in = len(versions), len(candidates)
        learned = {r: d.cardinality for r, d in decisions.items() if d.source == "learned"}
    frame = warehouse.fetch(
        "SELECT * FROM fact_versions WHERE collection = ?", [collection]
    ).to_pandas()
    return stage_result(
        started=started,
        rows_in=rows_in,
        rows_out=appended,
        quarantined=quarantined,
        skipped=skipped,
        total_versions=len(frame),
        learned_cardinality=dg.MetadataValue.json(learned),
        check_results=[contract_result(STAGE, frame)],
    )


def _fold_in_beam(
    warehouse: WarehouseResource,
    settings: PipelineSettings,
    collection: str,
    assertions: list[Assertion],
    decisions: dict[str, CardinalityDecision],
) -> tuple[list[FactState], list[Assertion]]:
    """Run the per-key fold as a Beam pipeline over Parquet; return facts and rejects."""
    folder = warehouse.workspace.parquet_dir(collection, STAGE)
    facts_prefix, unmatched_prefix = folder / "facts" / "part", folder / "unmatched" / "part"
    clear_shards(facts_prefix)
    clear_shards(unmatched_prefix)
    if assertions:
        rows = pa.Table.from_pylist([asdict(a) for a in assertions], schema=ASSERTIONS)
        pattern = write_input(rows, folder / "input", settings.parquet_shard_rows)
        cfg = fact_folding.FoldConfig(
            collection, str(unmatched_prefix), {r: d.effective for r, d in decisions.items()}
        )
        with beam.Pipeline(options=settings.beam_options()) as p:
            fact_folding.build(p, pattern, str(facts_prefix), cfg)
    facts = [FactState(**r) for r in read_shards(facts_prefix, FACT_INTERVALS).to_pylist()]
    unmatched = [Assertion(**r) for r in read_shards(unmatched_prefix, ASSERTIONS).to_pylist()]
    return sorted(facts, key=lambda f: f.fact_id), sorted(unmatched, key=Assertion.sort_key)
