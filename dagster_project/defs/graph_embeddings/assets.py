"""Stage 7: embed segments, entities (their descriptions, and their names alone for
synonym search) into LanceDB, with a native full-text index, and
train KGERMAR's R-GCN into the structural bank ("structure" table)."""

import functools
import time
from pathlib import Path

import dagster as dg
import pyarrow as pa

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from memory.facts import THETA_STABLE
from pipelines.entity_links import MENTIONS_SQL
from schemas.tables import (
    EXTRACTABLE_KINDS,
    LANCE_ENTITIES,
    LANCE_ENTITY_CONTEXTS,
    LANCE_ENTITY_NAMES,
    LANCE_FACTS,
    LANCE_SEGMENTS,
    VECTOR,
    VECTOR_FUSION,
)
from stores.lance_tables import Embed, TextTable, sync_tables
from stores.structure_table import StructureSync, entity_vectors, sync_structure
from stores.workspace import lance_table_name
from transforms.embedding import encode
from transforms.embedding_cache import EmbeddingCache, cached_embed
from transforms.entity_contexts import context_rows, span_pooled_encoder
from transforms.graph_links import (
    entity_description,
    fact_statement,
    segment_entity_ids,
    segment_search_text,
)
from transforms.graph_nodes import NEXT_TURN
from transforms.progress import progress_encoder, stage_progress_file, start_progress

DESCRIPTION_FACTS = 8
SEGMENTS_SQL = """
SELECT s.segment_id, s.doc_id, s.kind, s.text, s.char_start, s.char_end, s.speaker,
       s.session_id, s.turn_id, s.observed_at, s.mentioned_from, s.mentioned_to,
       d.title, d.source_path
FROM segments s JOIN documents d ON d.collection = s.collection AND d.doc_id = s.doc_id
WHERE s.collection = ? AND list_contains(?, s.kind)
ORDER BY s.segment_id
"""
SURFACES_SQL = """
SELECT segment_id, text AS surface FROM entity_mentions WHERE collection = ?
UNION ALL
SELECT segment_id, head_text FROM relation_candidates
WHERE collection = ? AND pattern LIKE '%+speaker'
"""
ENTITY_FACTS_SQL = """
SELECT entity_id, list(statement ORDER BY confidence DESC, statement)[:$limit] AS statements
FROM (
    SELECT unnest([head_entity_id, tail_entity_id]) AS entity_id, confidence,
           head_name || ' ' || replace(relation, '_', ' ') || ' ' || tail_name AS statement
    FROM fact_versions
    WHERE collection = $collection AND recorded_to IS NULL AND operation <> 'retract'
      AND valid_to IS NULL AND confidence >= $theta)
GROUP BY entity_id
"""
FACTS_SQL = """
SELECT fact_id, any_value(head_entity_id) AS head_entity_id, any_value(head_name) AS head_name,
       any_value(relation) AS relation, any_value(tail_entity_id) AS tail_entity_id,
       any_value(tail_name) AS tail_name
FROM fact_versions WHERE collection = ? GROUP BY fact_id ORDER BY fact_id
"""
GRAPH_FACTS_SQL = """
SELECT DISTINCT head_entity_id, relation, tail_entity_id
FROM fact_versions
WHERE collection = ? AND recorded_to IS NULL AND operation <> 'retract' AND valid_to IS NULL
  AND confidence >= ?
ORDER BY ALL
"""
NODES_SQL = """
SELECT segment_id, list(node_id ORDER BY node_id) FILTER (WHERE kind <> $next) AS node_ids,
       any_value(node_id) FILTER (WHERE kind = $next) AS next_segment_id
FROM segment_nodes WHERE collection = $collection GROUP BY segment_id
"""
ENTITIES_SQL = """
SELECT e.entity_id, e.name, e.entity_type, list(a.alias ORDER BY a.alias) AS aliases
FROM entities e JOIN entity_aliases a ON a.collection = e.collection AND a.entity_id = e.entity_id
WHERE e.collection = ? GROUP BY ALL ORDER BY e.entity_id
"""


@dg.asset(
    partitions_def=collections_partitions,
    group_name="memory",
    kinds={"lancedb", "pytorch"},
    deps=["segments", "entities", "entity_mentions", "fact_versions", "segment_nodes"],
)
def graph_embeddings(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """MiniLM embeddings of every chunk and turn (with their entity and structural
    links), of every entity description, of every entity's mention contexts (KGERMAR's
    C = 64 tokens, span-pooled) and of every fact statement, in LanceDB tables with
    full-text indexes on segment text and fact statements; then KGERMAR's R-GCN
    structural bank over the current facts."""
    started = time.perf_counter()
    collection = context.partition_key
    segments = warehouse.rows(SEGMENTS_SQL, [collection, list(EXTRACTABLE_KINDS)])
    found = warehouse.rows(ENTITIES_SQL, [collection])
    links = segment_entity_ids(
        warehouse.rows(SURFACES_SQL, [collection, collection]), warehouse.entity_of(collection)
    )
    structure = {
        row["segment_id"]: row
        for row in warehouse.rows(NODES_SQL, {"collection": collection, "next": NEXT_TURN})
    }
    for segment in segments:
        segment["entity_ids"] = links.get(segment["segment_id"], [])
        segment["search_text"] = segment_search_text(segment)
        nodes = structure.get(segment["segment_id"], {})
        segment["node_ids"] = nodes.get("node_ids") or []
        segment["next_segment_id"] = nodes.get("next_segment_id")
    facts = _facts_by_entity(warehouse, collection)
    for entity in found:
        entity["description"] = entity_description(
            entity["name"],
            entity["entity_type"],
            entity["aliases"],
            facts.get(entity["entity_id"], []),
        )

    fact_rows = warehouse.rows(FACTS_SQL, [collection])
    for fact in fact_rows:
        fact["statement"] = fact_statement(fact["head_name"], fact["relation"], fact["tail_name"])
    contexts = context_rows(
        warehouse.rows(MENTIONS_SQL, [collection]), warehouse.entity_of(collection)
    )
    cache = EmbeddingCache(warehouse.workspace.embedding_cache_path)
    progress = stage_progress_file(warehouse.workspace.parquet_dir(collection, "graph_embeddings"))
    start_progress(progress, 0, "texts embedded")
    embed = _cached_encoder(cache, settings.encoder_model, settings.batch_size, progress)
    segment_vectors = {VECTOR: embed}
    if settings.second_encoder:
        segment_vectors[VECTOR_FUSION] = _cached_encoder(
            cache, settings.second_encoder, settings.batch_size, progress
        )
    db = warehouse.workspace.lance()
    syncs = sync_tables(
        db,
        collection,
        [
            TextTable(
                "segments",
                pa.Table.from_pylist(segments, schema=LANCE_SEGMENTS),
                "segment_id",
                segment_vectors,
                "search_text",
                fts_column="search_text",
            ),
            TextTable(
                "entities",
                pa.Table.from_pylist(found, schema=LANCE_ENTITIES),
                "entity_id",
                {VECTOR: embed},
                "description",
            ),
            TextTable(
                "names",
                pa.Table.from_pylist(found, schema=LANCE_ENTITY_NAMES),
                "entity_id",
                {VECTOR: embed},
                "name",
            ),
            TextTable(
                "facts",
                pa.Table.from_pylist(fact_rows, schema=LANCE_FACTS),
                "fact_id",
                {VECTOR: embed},
                "statement",
                fts_column="statement",
            ),
            TextTable(
                "contexts",
                pa.Table.from_pylist(contexts, schema=LANCE_ENTITY_CONTEXTS),
                "entity_id",
                {
                    VECTOR: cached_embed(
                        progress_encoder(
                            span_pooled_encoder(settings.encoder_model, settings.batch_size),
                            progress,
                        ),
                        cache,
                        f"{settings.encoder_model}#span-pooled",
                        "passage",
                    )
                },
                "contexts",
            ),
        ],
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
        warehouse.rows(GRAPH_FACTS_SQL, [collection, settings.rgcn_min_confidence]),
        rgcn,
    )
    embedded = sum(s.added for s in syncs.values())
    deleted = sum(s.deleted for s in syncs.values())
    return stage_result(
        started=started,
        rows_in=len(segments) + len(found) + len(fact_rows),
        rows_out=embedded + (structure.bank.rows.num_rows if structure.bank else 0),
        skipped=embedded == 0 and deleted == 0 and structure.bank is None,
        **{f"{kind}_version": sync.version for kind, sync in syncs.items()},
        structure_version=structure.version,
        encoder=settings.encoder_model,
        fusion_encoder=settings.second_encoder or "none",
        **_training_metadata(structure, rgcn.as_dict()),
    )


def _cached_encoder(cache: EmbeddingCache, model: str, batch_size: int, progress: Path) -> Embed:
    """Passage embeddings of `model` behind the workspace's embedding cache, the texts it
    encodes counted in the stage's progress file."""
    encoder = functools.partial(encode, model=model, batch_size=batch_size, role="passage")
    return cached_embed(progress_encoder(encoder, progress), cache, model, "passage")


def _training_metadata(structure: StructureSync, config: dict[str, object]) -> dict[str, object]:
    """The R-GCN run for the asset page: loss curve, time, seed, epochs (or why none ran)."""
    bank = structure.bank
    if bank is None:
        return {"rgcn_trained": False, "graph_hash": structure.graph_hash}
    return {
        "rgcn_trained": True,
        "graph_hash": structure.graph_hash,
        "rgcn_seconds": bank.result.seconds,
        "rgcn_seed": config["seed"],
        "rgcn_epochs": config["epochs"],
        "rgcn_facts": bank.n_facts,
        "rgcn_relations": len(bank.relations),
        "rgcn_basis_decomposition": bank.result.uses_bases,
        "rgcn_device": bank.result.device,
        "rgcn_config": dg.MetadataValue.json(config),
        "rgcn_loss_curve": dg.MetadataValue.json([round(x, 5) for x in bank.result.losses]),
    }


def _facts_by_entity(warehouse: WarehouseResource, collection: str) -> dict[str, list[str]]:
    """Up to `DESCRIPTION_FACTS` current, stable fact statements per entity."""
    params = {"collection": collection, "theta": THETA_STABLE, "limit": DESCRIPTION_FACTS}
    return {r["entity_id"]: r["statements"] for r in warehouse.rows(ENTITY_FACTS_SQL, params)}
