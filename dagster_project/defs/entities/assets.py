"""Stage 5: resolve mentions into entities through the blocking cascade, with aliases and
reversible same_as links."""

import functools
import time

import dagster as dg

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from transforms.embedding import encode
from transforms.entity_resolution import resolve
from transforms.ids import content_id

STAGE = "entities"

SURFACES_SQL = """
SELECT text AS surface, entity_type FROM entity_mentions WHERE collection = ?
UNION ALL
SELECT head_text, 'Person' FROM relation_candidates
WHERE collection = ? AND pattern LIKE '%+speaker'
ORDER BY 1, 2
"""
FINGERPRINT_SQL = """
SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) AS fp FROM (
    SELECT mention_id AS id FROM entity_mentions WHERE collection = ?
    UNION ALL SELECT candidate_id FROM relation_candidates WHERE collection = ?
    UNION ALL SELECT kind || ':' || key_a || '|' || key_b FROM entity_constraints
    WHERE collection = ?)
"""
CONSTRAINTS_SQL = "SELECT key_a, key_b FROM entity_constraints WHERE collection = ? AND kind = ?"


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"duckdb"},
    deps=["entity_mentions", "relation_candidates"],
)
def entities(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Entities from the cascade exact → normalised → Levenshtein → surname → embedding,
    with type and acronym guards; every mention key links to its entity in
    `entity_same_as` (method, score), user splits and merges in `entity_constraints`."""
    started = time.perf_counter()
    collection = context.partition_key
    config = settings.resolution()
    params = [collection, collection, collection]
    fingerprint = content_id(warehouse.rows(FINGERPRINT_SQL, params)[0]["fp"], config)
    if warehouse.fingerprint_unchanged(collection, STAGE, fingerprint):
        return stage_result(started=started, rows_in=0, rows_out=0, skipped=True)
    surfaces = warehouse.rows(SURFACES_SQL, [collection, collection])
    resolution = resolve(
        collection,
        ((s["surface"], s["entity_type"]) for s in surfaces),
        embed=functools.partial(encode, model=settings.encoder_model),
        cfg=config,
        cannot_link=_pairs(warehouse, collection, "cannot_link"),
        must_link=_pairs(warehouse, collection, "must_link"),
    )
    warehouse.replace_collection("entities", collection, resolution.entities)
    warehouse.replace_collection("entity_aliases", collection, resolution.aliases)
    same_as = [{"collection": collection, "norm_key": s.key, "entity_id": s.entity_id,
                "method": s.method, "score": s.score} for s in resolution.same_as]  # fmt: skip
    warehouse.replace_collection("entity_same_as", collection, same_as)
    warehouse.record_fingerprint(collection, STAGE, fingerprint)
    methods: dict[str, int] = {}
    for link in resolution.same_as:
        methods[link.method] = methods.get(link.method, 0) + 1
    return stage_result(
        started=started,
        rows_in=len(surfaces),
        rows_out=len(resolution.entities),
        aliases=len(resolution.aliases),
        mention_keys=len(resolution.same_as),
        merges_by_method=dg.MetadataValue.json(methods),
    )


def _pairs(warehouse: WarehouseResource, collection: str, kind: str) -> list[tuple[str, str]]:
    return [(r["key_a"], r["key_b"]) for r in warehouse.rows(CONSTRAINTS_SQL, [collection, kind])]
