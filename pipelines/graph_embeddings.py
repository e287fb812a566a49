"""Stage 7, `graph_embeddings`: embed segments, entities (their descriptions, and their
names alone for synonym search), fact statements and KGERMAR's entity contexts into
LanceDB, with full-text indexes, then train KGERMAR's R-GCN into the structural bank.

Every table is synced by key (`stores.lance_tables`): only new or changed rows are
embedded, every vector is cached by (encoder, text hash) across builds and collections,
and an unchanged rebuild writes nothing.

Before any table is synced, every text the tables need that the embedding cache lacks is
encoded into it (`encode_missing`): their count is the stage's one progress total,
announced before the first is encoded, and each batch of `STORE_BATCH` texts is in the
cache as soon as it is encoded, so a stage stopped midway resumes where it stopped. The
syncs then read their vectors from the cache. (A text whose row is unchanged in LanceDB
but missing from the cache, after the cache file was removed, is encoded again: the cost
of knowing the total before starting.)
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipelines.outcome import StageOutcome
from pipelines.settings import BuildSettings
from schemas.tables import (
    LANCE_ENTITIES,
    LANCE_ENTITY_CONTEXTS,
    LANCE_ENTITY_NAMES,
    LANCE_FACTS,
    LANCE_SEGMENTS,
    VECTOR,
    VECTOR_FUSION,
)
from stores.lance_tables import Embed, TextTable, sync_tables
from stores.stage_inputs import (
    embedded_segments,
    entities_with_statements,
    graph_triples,
    logical_facts,
    mention_windows,
)
from stores.structure_table import (
    StructureSync,
    WarmStartSettings,
    entity_vectors,
    sync_structure,
)
from stores.warehouse import WarehouseStore
from stores.workspace import lance_table_name
from transforms.embedding import encode
from transforms.embedding_cache import EmbeddingCache, cached_embed
from transforms.entity_contexts import (
    context_rows,
    span_pooled_encoder,
    window_vectors,
    windows_of,
)
from transforms.facts import THETA_STABLE
from transforms.graph_links import entity_description, fact_statement, segment_search_text
from transforms.progress import progress_encoder, start_progress

STAGE = "graph_embeddings"
DESCRIPTION_FACTS = 8
"""Current, stable fact statements in an entity's description."""
TEXT_COLUMNS = {
    "segments": "search_text",
    "entities": "description",
    "names": "name",
    "facts": "statement",
    "contexts": "contexts",
}
"""The column of each embedded LanceDB table whose text its vectors encode."""


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """Sync the collection's embedding tables and its structural bank."""
    segments = embedded_segments(warehouse, collection)
    for segment in segments:
        segment["search_text"] = segment_search_text(segment)
    found = entities_with_statements(warehouse, collection, THETA_STABLE, DESCRIPTION_FACTS)
    for entity in found:
        entity["description"] = entity_description(
            entity["name"], entity["entity_type"], entity["aliases"], entity["statements"]
        )
    fact_rows = logical_facts(warehouse, collection)
    for fact in fact_rows:
        fact["statement"] = fact_statement(fact["head_name"], fact["relation"], fact["tail_name"])
    contexts = context_rows(mention_windows(warehouse, collection), warehouse.entity_of(collection))
    db = warehouse.workspace.lance()
    syncs = sync_tables(
        db,
        collection,
        _text_tables(warehouse, collection, settings, segments, found, fact_rows, contexts),
    )
    entity_ids, vectors = entity_vectors(
        db, lance_table_name(collection, "entities"), lance_table_name(collection, "contexts")
    )
    rgcn = settings.rgcn()
    structure = sync_structure(
        db,
        lance_table_name(collection, "structure"),
        entity_ids,
        vectors,
        graph_triples(warehouse, collection, settings.rgcn_min_confidence),
        rgcn,
        WarmStartSettings(
            warehouse.workspace.rgcn_model_path(collection),
            settings.rgcn_staleness,
            settings.rgcn_warm_epochs,
        ),
    )
    embedded = sum(s.added for s in syncs.values())
    deleted = sum(s.deleted for s in syncs.values())
    return StageOutcome(
        rows_in=len(segments) + len(found) + len(fact_rows),
        rows_out=embedded + (structure.bank.rows.num_rows if structure.bank else 0),
        skipped=embedded == 0 and deleted == 0 and structure.bank is None,
        details={
            **{f"{kind}_version": sync.version for kind, sync in syncs.items()},
            "structure_version": structure.version,
            "encoder": settings.encoder_model,
            "fusion_encoder": settings.second_encoder or "none",
            **_training_figures(structure, rgcn.as_dict()),
        },
    )


def _text_tables(
    warehouse: WarehouseStore,
    collection: str,
    settings: BuildSettings,
    segments: list[dict[str, Any]],
    entities: list[dict[str, Any]],
    facts: list[dict[str, Any]],
    contexts: list[dict[str, Any]],
) -> list[TextTable]:
    """The desired rows of each embedded table and the cached encoders that embed them."""
    cache = EmbeddingCache(settings.embedding_cache_path(warehouse.workspace.embedding_cache_path))
    model, batch_size, second = settings.encoder_model, settings.batch_size, settings.second_encoder
    search_texts = [s["search_text"] for s in segments]
    windows_key = span_pooled_key(model)
    encoders: dict[str, Embed] = {
        model: _passages(model, batch_size),
        windows_key: functools.partial(window_vectors, model=model, batch_size=batch_size),
    }
    needed = {
        model: [
            *search_texts,
            *(e["description"] for e in entities),
            *(e["name"] for e in entities),
            *(f["statement"] for f in facts),
        ],
        windows_key: [w for ws in windows_of(c["contexts"] for c in contexts) for w in ws],
    }
    if second:
        encoders[second] = _passages(second, batch_size)
        needed[second] = search_texts
    encode_missing(cache, encoders, needed, warehouse.workspace.progress_file(collection, STAGE))
    cached = {key: cached_embed(e, cache, key, "passage") for key, e in encoders.items()}
    embed = cached[model]
    segment_vectors = {VECTOR: embed, **({VECTOR_FUSION: cached[second]} if second else {})}
    span_pooled = span_pooled_encoder(cached[windows_key])
    return [
        TextTable(
            "segments",
            pa.Table.from_pylist(segments, schema=LANCE_SEGMENTS),
            "segment_id",
            segment_vectors,
            TEXT_COLUMNS["segments"],
            fts_column="search_text",
        ),
        TextTable(
            "entities",
            pa.Table.from_pylist(entities, schema=LANCE_ENTITIES),
            "entity_id",
            {VECTOR: embed},
            TEXT_COLUMNS["entities"],
        ),
        TextTable(
            "names",
            pa.Table.from_pylist(entities, schema=LANCE_ENTITY_NAMES),
            "entity_id",
            {VECTOR: embed},
            TEXT_COLUMNS["names"],
        ),
        TextTable(
            "facts",
            pa.Table.from_pylist(facts, schema=LANCE_FACTS),
            "fact_id",
            {VECTOR: embed},
            TEXT_COLUMNS["facts"],
            fts_column="statement",
        ),
        TextTable(
            "contexts",
            pa.Table.from_pylist(contexts, schema=LANCE_ENTITY_CONTEXTS),
            "entity_id",
            {VECTOR: span_pooled},
            TEXT_COLUMNS["contexts"],
        ),
    ]


def span_pooled_key(encoder_model: str) -> str:
    """The embedding cache's encoder id of `encoder_model`'s span-pooled vectors, one per
    marked mention window (`transforms.entity_contexts.window_vectors`); an entity's
    vector is the mean of its windows', pooled at each build from the cache."""
    return f"{encoder_model}#span-window"


def encode_missing(
    cache: EmbeddingCache,
    encoders: dict[str, Embed],
    needed: dict[str, list[str]],
    progress: Path,
) -> None:
    """Encode into `cache` (passage role) the `needed` texts of each encoder id that it
    lacks, after announcing how many there are as the stage's one progress total; each
    batch is stored and counted done as soon as it is encoded."""
    missing = {key: cache.missing(key, "passage", texts) for key, texts in needed.items()}
    start_progress(progress, sum(map(len, missing.values())), "texts embedded")
    for key, texts in missing.items():
        if texts:
            cached_embed(progress_encoder(encoders[key], progress), cache, key, "passage")(texts)


def _passages(model: str, batch_size: int) -> Embed:
    """Passage embeddings of `model`."""
    return functools.partial(encode, model=model, batch_size=batch_size, role="passage")


def _training_figures(structure: StructureSync, config: dict[str, Any]) -> dict[str, Any]:
    """The R-GCN run for the asset page: loss curve, time, seed, epochs (or why none ran)."""
    bank = structure.bank
    if bank is None:
        return {"rgcn_trained": False, "graph_hash": structure.graph_hash}
    return {
        "rgcn_trained": True,
        "graph_hash": structure.graph_hash,
        "rgcn_seconds": bank.result.seconds,
        "rgcn_warm_started": bank.result.warm_started,
        "rgcn_triples_changed": round(bank.change, 4),
        "rgcn_drift": round(bank.model.drift, 4),
        "rgcn_seed": config["seed"],
        "rgcn_epochs": len(bank.result.losses),
        "rgcn_facts": bank.n_facts,
        "rgcn_relations": len(bank.relations),
        "rgcn_basis_decomposition": bank.result.uses_bases,
        "rgcn_device": bank.result.device,
        "rgcn_config": config,
        "rgcn_loss_curve": [round(x, 5) for x in bank.result.losses],
    }
