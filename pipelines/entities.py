"""Stage 5, `entities`: resolve mentions into entities through the blocking cascade
(`transforms.entity_resolution`), with aliases and reversible `same_as` links.

Corpus-wide: skipped while the digest of its inputs (mentions, candidates, the user's
split and merge constraints) and its thresholds match the last run.
"""

from __future__ import annotations

import functools

from pipelines.outcome import StageOutcome, unchanged, value_counts
from pipelines.settings import BuildSettings
from stores.stage_inputs import constraint_pairs, mention_surfaces, resolution_inputs_digest
from stores.warehouse import WarehouseStore
from transforms.embedding import encode
from transforms.entity_resolution import resolve
from transforms.ids import content_id

STAGE = "entities"


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """Resolve every surface of the collection and replace its entities, aliases and links."""
    config = settings.resolution()
    fingerprint = content_id(resolution_inputs_digest(warehouse, collection), config)
    if warehouse.fingerprint_unchanged(collection, STAGE, fingerprint):
        return unchanged()
    surfaces = mention_surfaces(warehouse, collection)
    resolution = resolve(
        collection,
        ((s["surface"], s["entity_type"]) for s in surfaces),
        embed=functools.partial(encode, model=settings.encoder_model),
        cfg=config,
        cannot_link=constraint_pairs(warehouse, collection, "cannot_link"),
        must_link=constraint_pairs(warehouse, collection, "must_link"),
    )
    warehouse.replace_collection("entities", collection, resolution.entities)
    warehouse.replace_collection("entity_aliases", collection, resolution.aliases)
    same_as = [{"collection": collection, "norm_key": s.key, "entity_id": s.entity_id,
                "method": s.method, "score": s.score} for s in resolution.same_as]  # fmt: skip
    warehouse.replace_collection("entity_same_as", collection, same_as)
    warehouse.record_fingerprint(collection, STAGE, fingerprint)
    return StageOutcome(
        rows_in=len(surfaces),
        rows_out=len(resolution.entities),
        details={
            "aliases": len(resolution.aliases),
            "mention_keys": len(resolution.same_as),
            "merges_by_method": value_counts([link.method for link in resolution.same_as]),
        },
    )
