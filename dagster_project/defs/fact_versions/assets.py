"""Stage 6: fold relation candidates into append-only, bitemporal fact versions."""

import time
from datetime import UTC, datetime

import dagster as dg

from dagster_project.defs.contract_check import contract_result, contract_spec
from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from transforms.facts import STAGE, fold_facts, plan_versions
from transforms.ids import content_id
from transforms.relation_registry import cardinality_rows

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


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"duckdb"},
    deps=["entities", "relation_candidates"],
    check_specs=[contract_spec(STAGE)],
)
def fact_versions(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Facts with valid time (`valid_from`/`valid_to`) and recorded time
    (`recorded_from`/`recorded_to`); every change is a new version citing its segments."""
    started = time.perf_counter()
    collection = context.partition_key
    fingerprint = content_id(
        warehouse.rows(FINGERPRINT_SQL, [collection, collection])[0]["fp"], settings.registry()
    )
    skipped = warehouse.fingerprint_unchanged(collection, STAGE, fingerprint)
    appended = rows_in = quarantined = 0
    learned: dict[str, str] = {}
    if not skipped:
        candidates = warehouse.rows(CANDIDATES_SQL, [collection])
        observed = {c["segment_id"]: c["observed_at"] for c in candidates}
        facts, rejected, decisions = fold_facts(
            collection, candidates, observed, settings.registry(), warehouse.entity_of(collection)
        )
        current = {
            row["fact_id"]: row
            for row in warehouse.rows(
                "SELECT * FROM fact_versions WHERE collection = ? AND recorded_to IS NULL",
                [collection],
            )
        }
        names = {
            row["entity_id"]: row["name"]
            for row in warehouse.rows(
                "SELECT entity_id, name FROM entities WHERE collection = ?", [collection]
            )
        }
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
