"""Stage 6b: the LLM-free structure of the graph: which topic, document, session, speaker,
day and phrase nodes each segment links to, and each turn's next turn
(`transforms.graph_nodes`, `transforms.phrases`). Read by `graph_embeddings` into the
segments table, so a snapshot pins it. Skipped when its inputs (segment ids, document
titles, entity links, phrases) are unchanged."""

import time

import dagster as dg

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from schemas.tables import EXTRACTABLE_KINDS
from transforms import graph_nodes
from transforms.ids import content_id
from transforms.phrases import shared_phrases

STAGE = "segment_nodes"
DOCUMENTS_SQL = "SELECT doc_id, kind, title FROM documents WHERE collection = ? ORDER BY doc_id"
SEGMENTS_SQL = """
SELECT segment_id, doc_id, kind, text, speaker, session_id, observed_at, char_start
FROM segments WHERE collection = ? AND list_contains(?, kind) ORDER BY segment_id
"""
FINGERPRINT_SQL = """
SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) AS fp FROM (
    SELECT segment_id AS id FROM segments WHERE collection = ?
    UNION ALL SELECT doc_id || ':' || coalesce(title, '') FROM documents WHERE collection = ?
    UNION ALL SELECT norm_key || '=' || entity_id FROM entity_same_as WHERE collection = ?
    UNION ALL SELECT segment_id || '#' || phrase FROM segment_phrases WHERE collection = ?)
"""
PHRASES_SQL = "SELECT segment_id, phrase FROM segment_phrases WHERE collection = ?"


@dg.asset(
    partitions_def=collections_partitions,
    group_name="consolidate",
    kinds={"duckdb"},
    deps=["segments", "segment_phrases", "entities"],
)
def segment_nodes(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Links of every chunk and turn to its document topic (and to the topics it names),
    document, session, speaker and day nodes and the phrases it shares with another
    segment, and of every turn to the next turn of its session."""
    started = time.perf_counter()
    collection = context.partition_key
    params = [collection] * 4
    fingerprint = content_id(
        warehouse.rows(FINGERPRINT_SQL, params)[0]["fp"], graph_nodes.RULES_VERSION
    )
    if warehouse.fingerprint_unchanged(collection, STAGE, fingerprint):
        return stage_result(started=started, rows_in=0, rows_out=0, skipped=True)
    segments = warehouse.rows(SEGMENTS_SQL, [collection, list(EXTRACTABLE_KINDS)])
    titles = graph_nodes.topic_keys(warehouse.rows(DOCUMENTS_SQL, [collection]))
    links = list(graph_nodes.segment_nodes(segments, titles, warehouse.entity_of(collection)))
    links += shared_phrases(warehouse.rows(PHRASES_SQL, [collection]))
    links += [
        {"segment_id": sid, "node_id": following, "kind": graph_nodes.NEXT_TURN}
        for sid, following in graph_nodes.next_turns(segments).items()
    ]
    warehouse.replace_collection(
        STAGE, collection, [{"collection": collection, **link} for link in links]
    )
    warehouse.record_fingerprint(collection, STAGE, fingerprint)
    kinds: dict[str, int] = {}
    for link in links:
        kinds[link["kind"]] = kinds.get(link["kind"], 0) + 1
    return stage_result(
        started=started,
        rows_in=len(segments),
        rows_out=len(links),
        topics=len(titles),
        links_by_kind=dg.MetadataValue.json(kinds),
    )
