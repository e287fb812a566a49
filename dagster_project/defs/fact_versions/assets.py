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
    cardinality_decisions,
    plan_versions,
    to_assertions,
    unmatched_record,
)
from transforms.ids import content_id
from transforms.relation_registry import CardinalityDecision, cardinality_rows

CANDIDATES_SQL = """
SELECT c.*, s.observed_at FROM relation_candidates c
JOIN segments s ON s.collection = c.collection AND s.segment_id = c.segment_id
WHERE c.collection = ? ORDER BY c.candidate_id
"""
FINGERPRINT_SQL = """
SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) AS fp FROM (
    SELECT candidate_id AS id FROM relation_candidates WHERE collection = ?
    UNION ALL SELECT norm_key || '>' || entity_id FROM entity_same_as WHERE collection = ?)
"""
CURRENT_SQL = "SELECT * FROM fact_versions WHERE collection = ? AND recorded_to IS NULL"
NAMES_SQL = "SELECT entity_id, name FROM entities WHERE collection = ?"


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"beam", "duckdb"},
    deps=["entities", "relation_candidates"],
    check_specs=[contract_spec(STAGE)],
)
def fact_versions(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Facts with valid time (`valid_from`/`valid_to`) and recorded time
    (`recorded_from`/`recorded_to`), folded per (head, relation) key in Beam with REAL's
    cardinality rules; every change is a new version citing its segments."""
    started = time.perf_counter()
    collection = context.partition_key
    registry = settings.registry()
    fingerprint = content_id(
        warehouse.rows(FINGERPRINT_SQL, [collection, collection])[0]["fp"], registry
    )
    skipped = warehouse.fingerprint_unchanged(collection, STAGE, fingerprint)
    appended = rows_in = quarantined = 0
    learned: dict[str, str] = {}
    if not skipped:
        candidates = warehouse.rows(CANDIDATES_SQL, [collection])
        observed = {c["segment_id"]: c["observed_at"] for c in candidates}
        assertions, rejected = to_assertions(
            collection, candidates, observed, registry, warehouse.entity_of(collection)
        )
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
        "SELECT * EXCLUDE (supersedes) FROM fact_versions WHERE collection = ?", [collection]
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
        pattern = write_input(rows, folder / "input")
        cfg = fact_folding.FoldConfig(
            collection, str(unmatched_prefix), {r: d.effective for r, d in decisions.items()}
        )
        with beam.Pipeline(options=settings.beam_options()) as p:
            fact_folding.build(p, pattern, str(facts_prefix), cfg)
    facts = [FactState(**r) for r in read_shards(facts_prefix, FACT_INTERVALS).to_pylist()]
    unmatched = [Assertion(**r) for r in read_shards(unmatched_prefix, ASSERTIONS).to_pylist()]
    return sorted(facts, key=lambda f: f.fact_id), sorted(unmatched, key=Assertion.sort_key)
