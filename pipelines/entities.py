"""Stage 5, `entities`: resolve mentions into entities through the blocking cascade
(`transforms.entity_resolution`), with aliases and reversible `same_as` links.

Corpus-wide: skipped while the digest of its inputs (mentions, candidates, the user's
split and merge constraints) and its thresholds match the last run. Otherwise the
similarity steps start from the collection's persistent blocking index
(`stores.blocking_index`), so only new keys and keys whose type changed are compared; the
index is built whole on the first run and whenever the thresholds, seed or encoder
change. Key names are embedded through the workspace's embedding cache, so a key is
encoded once, and the vectors a re-run compares are the ones the index was built from.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from pipelines.outcome import StageOutcome, unchanged, value_counts
from pipelines.settings import BuildSettings
from stores.blocking_index import blocking_index_changes, read_blocking_index
from stores.stage_inputs import constraint_pairs, mention_surfaces, resolution_inputs_digest
from stores.warehouse import StageRecord, StaleStageState, TableChange, WarehouseStore
from transforms.embedding import encode
from transforms.embedding_cache import EmbeddingCache, cached_embed
from transforms.entity_resolution import resolve_incremental
from transforms.ids import content_id

STAGE = "entities"
INDEX_VERSION = "blocking-v1"
"""Part of the index's configuration id: a change to what the index holds or how it is
made bumps it, so older indexes are rebuilt rather than misread."""


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """Resolve every surface of the collection, re-blocking only what changed since the
    last run, and replace its entities, aliases and links (with the index's changes, in
    one transaction)."""
    config = settings.resolution()
    fingerprint = content_id(resolution_inputs_digest(warehouse, collection), config)
    recorded = warehouse.stage_fingerprint(collection, STAGE)
    if recorded == fingerprint:
        return unchanged()
    surfaces = mention_surfaces(warehouse, collection)
    config_id = content_id(INDEX_VERSION, config, settings.encoder_model)
    previous = read_blocking_index(warehouse, collection, config_id)
    cache = EmbeddingCache(settings.embedding_cache_path(warehouse.workspace.embedding_cache_path))
    embed = functools.partial(encode, model=settings.encoder_model)
    resolved = resolve_incremental(
        collection,
        ((s["surface"], s["entity_type"]) for s in surfaces),
        previous,
        embed=cached_embed(embed, cache, settings.encoder_model, "passage"),
        cfg=config,
        cannot_link=constraint_pairs(warehouse, collection, "cannot_link"),
        must_link=constraint_pairs(warehouse, collection, "must_link"),
    )
    resolution = resolved.resolution
    same_as = [{"collection": collection, "norm_key": s.key, "entity_id": s.entity_id,
                "method": s.method, "score": s.score} for s in resolution.same_as]  # fmt: skip
    outputs = [
        TableChange("entities", inserted=resolution.entities, replace=True),
        TableChange("entity_aliases", inserted=resolution.aliases, replace=True),
        TableChange("entity_same_as", inserted=same_as, replace=True),
    ]
    index = blocking_index_changes(collection, config_id, previous, resolved.index)
    record = StageRecord(STAGE, fingerprint, read=recorded)
    try:
        warehouse.apply_changes(collection, [*outputs, *index], record)
    except StaleStageState:
        # Another run wrote between our read and our write, so our changes may not fit the
        # index it left; ours is complete for our inputs, so it replaces the index whole.
        index = blocking_index_changes(collection, config_id, None, resolved.index)
        warehouse.apply_changes(collection, [*outputs, *index], replace(record, checked=False))
    return StageOutcome(
        rows_in=len(surfaces),
        rows_out=len(resolution.entities),
        details={
            "aliases": len(resolution.aliases),
            "mention_keys": len(resolution.same_as),
            "merges_by_method": value_counts([link.method for link in resolution.same_as]),
            **resolved.report.details(),
            "index_rows_written": sum(len(change.inserted) for change in index),
        },
    )
