"""Stage 5: consolidate mentions into entities with an alias table."""

import time

import dagster as dg

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from transforms.consolidation import consolidate

STAGE = "entities"

SURFACES_SQL = """
SELECT text AS surface, entity_type FROM entity_mentions WHERE collection = ?
UNION ALL
SELECT head_text, 'Person' FROM relation_candidates
WHERE collection = ? AND pattern LIKE '%+speaker'
"""
FINGERPRINT_SQL = """
SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) AS fp FROM (
    SELECT mention_id AS id FROM entity_mentions WHERE collection = ?
    UNION ALL SELECT candidate_id FROM relation_candidates WHERE collection = ?)
"""


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"duckdb"},
    deps=["entity_mentions", "relation_candidates"],
)
def entities(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """One entity per normalised name ("Acme Corp", "ACME" and "Acme Corporation" are one),
    with every surface form in `entity_aliases`; speakers resolved from "I" included."""
    started = time.perf_counter()
    collection = context.partition_key
    fingerprint = warehouse.rows(FINGERPRINT_SQL, [collection, collection])[0]["fp"]
    if warehouse.fingerprint_unchanged(collection, STAGE, fingerprint):
        return stage_result(started=started, rows_in=0, rows_out=0, skipped=True)
    surfaces = warehouse.rows(SURFACES_SQL, [collection, collection])
    found, aliases = consolidate(collection, ((s["surface"], s["entity_type"]) for s in surfaces))
    warehouse.replace_collection("entities", collection, found)
    warehouse.replace_collection("entity_aliases", collection, aliases)
    warehouse.record_fingerprint(collection, STAGE, fingerprint)
    return stage_result(
        started=started,
        rows_in=len(surfaces),
        rows_out=len(found),
        aliases=len(aliases),
        merged_surface_forms=len(aliases) - len(found),
    )
