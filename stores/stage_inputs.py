"""What each build stage reads from the warehouse: one typed function per input, with its
parameterised SQL beside it, so no stage or asset holds SQL of its own.

Each function takes the warehouse operations (`stores.warehouse.WarehouseStore`) and the
collection, and returns plain rows or an Arrow table cast to the declared schema.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from schemas.ddl import struct_sql
from schemas.llm_outputs import LLM_SEGMENTS, TURN
from schemas.tables import (
    EXTRACTABLE_KINDS,
    MENTION,
    SEGMENT_WITH_MENTIONS,
    SEGMENTS,
    FactOperation,
)
from schemas.warehouse import TABLE
from stores.warehouse import WarehouseStore
from transforms.graph_links import segment_entity_ids
from transforms.graph_nodes import NEXT_TURN

COLLECTION_VIEWS = ("fact_versions",)
"""Views readable whole per collection beside the declared tables."""


def collection_table(warehouse: WarehouseStore, table: str, collection: str) -> pa.Table:
    """Every row of a declared table (or view) for `collection`, e.g. for its contract."""
    if table not in TABLE and table not in COLLECTION_VIEWS:
        raise ValueError(f"unknown warehouse table {table!r}")
    return warehouse.fetch(f"SELECT * FROM {table} WHERE collection = ?", [collection])


def documents(warehouse: WarehouseStore, collection: str) -> list[dict[str, Any]]:
    """The collection's documents, by id."""
    return warehouse.rows(
        "SELECT * FROM documents WHERE collection = ? ORDER BY doc_id", [collection]
    )


PENDING_SEGMENTS_SQL = """
SELECT * FROM segments WHERE collection = ? AND list_contains(?, kind)
AND list_contains(?, doc_id) ORDER BY doc_id, seq
"""


def extractable_segments(
    warehouse: WarehouseStore, collection: str, doc_ids: list[str]
) -> pa.Table:
    """The chunks and turns of `doc_ids`, in document order."""
    return warehouse.fetch(
        PENDING_SEGMENTS_SQL, [collection, list(EXTRACTABLE_KINDS), doc_ids]
    ).cast(SEGMENTS)


SEGMENTS_WITH_MENTIONS_SQL = f"""
WITH devices AS (
    SELECT doc_id, mode(text ORDER BY text) AS context_device FROM entity_mentions
    WHERE collection = $collection AND label = 'PRODUCT' GROUP BY doc_id)
SELECT s.segment_id, s.collection, s.doc_id, s.text, s.speaker, d.context_device,
       coalesce(list({struct_sql(MENTION, "m")} ORDER BY m.char_start)
                FILTER (WHERE m.mention_id IS NOT NULL), []) AS mentions
FROM segments s
LEFT JOIN entity_mentions m ON m.collection = s.collection AND m.segment_id = s.segment_id
LEFT JOIN devices d ON d.doc_id = s.doc_id
WHERE s.collection = $collection AND list_contains($kinds, s.kind)
  AND list_contains($doc_ids, s.doc_id)
GROUP BY ALL
ORDER BY s.doc_id, s.segment_id
"""
"""The stage's input: each pending segment with its NER mentions and its document's most
mentioned product (SEGMENT_WITH_MENTIONS rows); parameters collection, kinds, doc_ids."""


def segments_with_mentions(
    warehouse: WarehouseStore, collection: str, doc_ids: list[str]
) -> pa.Table:
    """The relation stage's input rows for `doc_ids` (SEGMENT_WITH_MENTIONS)."""
    params = {"collection": collection, "kinds": list(EXTRACTABLE_KINDS), "doc_ids": doc_ids}
    return warehouse.fetch(SEGMENTS_WITH_MENTIONS_SQL, params).cast(SEGMENT_WITH_MENTIONS)


def join_mentions(segments: pa.Table, mentions: pa.Table, collection: str) -> pa.Table:
    """The relation stage's input rows (SEGMENT_WITH_MENTIONS) of SEGMENTS rows and their
    ENTITY_MENTIONS rows held in memory, by the stage's own SQL over all their documents:
    for runs of the stages outside a workspace (benchmarks, tests)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("segments", segments)
        con.register("entity_mentions", mentions)
        doc_ids = sorted(set(segments.column("doc_id").to_pylist()))
        params = {"collection": collection, "kinds": list(EXTRACTABLE_KINDS), "doc_ids": doc_ids}
        table = con.sql(SEGMENTS_WITH_MENTIONS_SQL, params=params).to_arrow_table()
    finally:
        con.close()
    return table.cast(SEGMENT_WITH_MENTIONS)


SHIFTED = {"char_start": "m.char_start + p.shift", "char_end": "m.char_end + p.shift"}
"""A turn's mention offsets moved into its session's text."""
LLM_SEGMENTS_SQL = f"""
WITH seg AS (
    SELECT * FROM segments WHERE collection = $collection AND list_contains($doc_ids, doc_id)),
turn_mentions AS (
    SELECT m.segment_id, list({struct_sql(MENTION, "m")} ORDER BY m.char_start) AS mentions
    FROM entity_mentions m JOIN seg s USING (segment_id)
    WHERE m.collection = $collection GROUP BY m.segment_id),
session_parts AS (
    SELECT ss.segment_id AS session_id, t.segment_id AS turn_segment, t.seq, t.turn_id,
           t.speaker, t.text, t.char_start - ss.char_start AS shift
    FROM seg ss JOIN seg t
      ON t.doc_id = ss.doc_id AND t.kind = 'turn' AND t.session_id = ss.session_id
    WHERE ss.kind = 'session'),
session_mentions AS (
    SELECT p.session_id AS segment_id, list({struct_sql(MENTION, "m", SHIFTED)}
        ORDER BY m.char_start + p.shift) AS mentions
    FROM session_parts p JOIN entity_mentions m
      ON m.collection = $collection AND m.segment_id = p.turn_segment
    GROUP BY p.session_id),
session_turns AS (
    SELECT session_id AS segment_id,
           list({struct_sql(TURN, "session_parts")} ORDER BY seq) AS turns
    FROM session_parts GROUP BY session_id),
turn_context AS (
    SELECT t.segment_id, list({struct_sql(TURN, "p")} ORDER BY p.seq) AS turns
    FROM seg t JOIN seg p ON p.doc_id = t.doc_id AND p.kind = 'turn'
      AND p.session_id = t.session_id AND p.seq BETWEEN t.seq - $context_turns AND t.seq
    WHERE t.kind = 'turn' GROUP BY t.segment_id)
SELECT s.segment_id, s.collection, s.doc_id, s.kind, s.text, s.speaker, s.turn_id,
       s.observed_at, coalesce(tm.mentions, sm.mentions, []) AS mentions,
       coalesce(st.turns, tc.turns) AS turns
FROM seg s
LEFT JOIN turn_mentions tm USING (segment_id)
LEFT JOIN session_mentions sm USING (segment_id)
LEFT JOIN session_turns st USING (segment_id)
LEFT JOIN turn_context tc USING (segment_id)
ORDER BY s.doc_id, s.kind, s.seq
"""
CONTEXT_TURNS = 2
"""Earlier turns of the same session shown with a turn, so "it" and "there" resolve."""


def llm_segments(warehouse: WarehouseStore, collection: str, doc_ids: list[str]) -> pa.Table:
    """The LLM stage's input rows for `doc_ids` (LLM_SEGMENTS): every segment with its
    mentions and, for turns and sessions, the turns around it."""
    params = {"collection": collection, "doc_ids": doc_ids, "context_turns": CONTEXT_TURNS}
    return warehouse.fetch(LLM_SEGMENTS_SQL, params).cast(LLM_SEGMENTS)


MENTION_SURFACES_SQL = """
SELECT text AS surface, entity_type FROM entity_mentions WHERE collection = ?
UNION ALL
SELECT head_text, 'Person' FROM relation_candidates
WHERE collection = ? AND pattern LIKE '%+speaker'
ORDER BY 1, 2
"""


def mention_surfaces(warehouse: WarehouseStore, collection: str) -> list[dict[str, Any]]:
    """Every entity surface to resolve (`surface`, `entity_type`): NER mentions, and the
    speakers that first-person relations resolved to (as persons)."""
    return warehouse.rows(MENTION_SURFACES_SQL, [collection, collection])


RESOLUTION_INPUTS_SQL = """
SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) AS fp FROM (
    SELECT mention_id AS id FROM entity_mentions WHERE collection = ?
    UNION ALL SELECT candidate_id FROM relation_candidates WHERE collection = ?
    UNION ALL SELECT kind || ':' || key_a || '|' || key_b FROM entity_constraints
    WHERE collection = ?)
"""


def resolution_inputs_digest(warehouse: WarehouseStore, collection: str) -> str:
    """Digest of what entity resolution reads: mentions, candidates, user constraints."""
    return warehouse.rows(RESOLUTION_INPUTS_SQL, [collection] * 3)[0]["fp"]


CONSTRAINTS_SQL = "SELECT key_a, key_b FROM entity_constraints WHERE collection = ? AND kind = ?"


def constraint_pairs(
    warehouse: WarehouseStore, collection: str, kind: str
) -> list[tuple[str, str]]:
    """The user's `cannot_link` or `must_link` key pairs (`kgmem entities split/merge`)."""
    rows = warehouse.rows(CONSTRAINTS_SQL, [collection, kind])
    return [(r["key_a"], r["key_b"]) for r in rows]


FACT_CANDIDATES_SQL = """
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
FACT_INPUTS_SQL = """
SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) || '/reported-v1' AS fp FROM (
    SELECT candidate_id AS id FROM relation_candidates WHERE collection = $collection
    UNION ALL SELECT triplet_id FROM llm_triplets WHERE $with_llm AND collection = $collection
    UNION ALL SELECT norm_key || '>' || entity_id FROM entity_same_as
    WHERE collection = $collection)
"""


def fact_candidates(
    warehouse: WarehouseStore, collection: str, with_llm: bool
) -> list[dict[str, Any]]:
    """Every relation candidate (and LLM triplet, `with_llm`) with its segment's text and
    observed time: the fact stage's input."""
    params = {"collection": collection, "with_llm": with_llm}
    return warehouse.rows(FACT_CANDIDATES_SQL, params)


def fact_inputs_digest(warehouse: WarehouseStore, collection: str, with_llm: bool) -> str:
    """Digest of what the fact stage reads: candidates, triplets, entity links."""
    params = {"collection": collection, "with_llm": with_llm}
    return warehouse.rows(FACT_INPUTS_SQL, params)[0]["fp"]


CURRENT_FACTS_SQL = "SELECT * FROM fact_versions WHERE collection = ? AND recorded_to IS NULL"


def current_fact_versions(warehouse: WarehouseStore, collection: str) -> dict[str, dict[str, Any]]:
    """The newest recorded version of each fact, by fact id."""
    return {r["fact_id"]: r for r in warehouse.rows(CURRENT_FACTS_SQL, [collection])}


def entity_names(warehouse: WarehouseStore, collection: str) -> dict[str, str]:
    """Entity id -> canonical name."""
    rows = warehouse.rows("SELECT entity_id, name FROM entities WHERE collection = ?", [collection])
    return {r["entity_id"]: r["name"] for r in rows}


NODE_SEGMENTS_SQL = """
SELECT segment_id, doc_id, kind, text, speaker, session_id, observed_at, char_start
FROM segments WHERE collection = ? AND list_contains(?, kind) ORDER BY segment_id
"""


def node_segments(warehouse: WarehouseStore, collection: str) -> list[dict[str, Any]]:
    """The chunks and turns with what their structural nodes come from (document, speaker,
    session, observed time, text for relative dates and named titles)."""
    return warehouse.rows(NODE_SEGMENTS_SQL, [collection, list(EXTRACTABLE_KINDS)])


def document_titles(warehouse: WarehouseStore, collection: str) -> list[dict[str, Any]]:
    """Each document's id, kind and title."""
    return warehouse.rows(
        "SELECT doc_id, kind, title FROM documents WHERE collection = ? ORDER BY doc_id",
        [collection],
    )


def segment_phrase_rows(warehouse: WarehouseStore, collection: str) -> list[dict[str, Any]]:
    """(segment_id, phrase) of every phrase the phrase stage found."""
    return warehouse.rows(
        "SELECT segment_id, phrase FROM segment_phrases WHERE collection = ?", [collection]
    )


NODE_INPUTS_SQL = """
SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) AS fp FROM (
    SELECT segment_id AS id FROM segments WHERE collection = ?
    UNION ALL SELECT doc_id || ':' || coalesce(title, '') FROM documents WHERE collection = ?
    UNION ALL SELECT norm_key || '=' || entity_id FROM entity_same_as WHERE collection = ?
    UNION ALL SELECT segment_id || '#' || phrase FROM segment_phrases WHERE collection = ?)
"""


def node_inputs_digest(warehouse: WarehouseStore, collection: str) -> str:
    """Digest of what the structure stage reads: segments, titles, entity links, phrases."""
    return warehouse.rows(NODE_INPUTS_SQL, [collection] * 4)[0]["fp"]


MENTION_WINDOWS_SQL = """
SELECT m.text AS surface, m.segment_id, s.text AS segment_text, m.char_start, m.char_end
FROM entity_mentions m
JOIN segments s ON s.collection = m.collection AND s.segment_id = m.segment_id
WHERE m.collection = ?
"""


def mention_windows(warehouse: WarehouseStore, collection: str) -> list[dict[str, Any]]:
    """Every NER mention with its segment's text and char offsets (for windows around it)."""
    return warehouse.rows(MENTION_WINDOWS_SQL, [collection])


TYPED_PAIRS_SQL = """
SELECT DISTINCT head_entity_id, tail_entity_id FROM fact_versions
WHERE collection = ? AND operation <> ?
"""


def typed_pairs(warehouse: WarehouseStore, collection: str) -> list[tuple[str, str]]:
    """(head, tail) of every fact not retracted in its last version."""
    rows = warehouse.rows(TYPED_PAIRS_SQL, [collection, FactOperation.RETRACT.value])
    return [(r["head_entity_id"], r["tail_entity_id"]) for r in rows]


EMBEDDED_SEGMENTS_SQL = """
SELECT s.segment_id, s.doc_id, s.kind, s.text, s.char_start, s.char_end, s.speaker,
       s.session_id, s.turn_id, s.observed_at, s.mentioned_from, s.mentioned_to,
       d.title, d.source_path
FROM segments s JOIN documents d ON d.collection = s.collection AND d.doc_id = s.doc_id
WHERE s.collection = ? AND list_contains(?, s.kind)
ORDER BY s.segment_id
"""
SEGMENT_SURFACES_SQL = """
SELECT segment_id, text AS surface FROM entity_mentions WHERE collection = ?
UNION ALL
SELECT segment_id, head_text FROM relation_candidates
WHERE collection = ? AND pattern LIKE '%+speaker'
"""
SEGMENT_LINKS_SQL = """
SELECT segment_id, list(node_id ORDER BY node_id) FILTER (WHERE kind <> $next) AS node_ids,
       any_value(node_id) FILTER (WHERE kind = $next) AS next_segment_id
FROM segment_nodes WHERE collection = $collection GROUP BY segment_id
"""


def embedded_segments(warehouse: WarehouseStore, collection: str) -> list[dict[str, Any]]:
    """The chunks and turns to embed, with their document's title and source, the entities
    they mention and their structural links (`node_ids`, `next_segment_id`)."""
    segments = warehouse.rows(EMBEDDED_SEGMENTS_SQL, [collection, list(EXTRACTABLE_KINDS)])
    mentioned = segment_entity_ids(
        warehouse.rows(SEGMENT_SURFACES_SQL, [collection, collection]),
        warehouse.entity_of(collection),
    )
    params = {"collection": collection, "next": NEXT_TURN}
    structure = {row["segment_id"]: row for row in warehouse.rows(SEGMENT_LINKS_SQL, params)}
    for segment in segments:
        nodes = structure.get(segment["segment_id"], {})
        segment["entity_ids"] = mentioned.get(segment["segment_id"], [])
        segment["node_ids"] = nodes.get("node_ids") or []
        segment["next_segment_id"] = nodes.get("next_segment_id")
    return segments


ENTITIES_WITH_ALIASES_SQL = """
SELECT e.entity_id, e.name, e.entity_type, list(a.alias ORDER BY a.alias) AS aliases
FROM entities e JOIN entity_aliases a ON a.collection = e.collection AND a.entity_id = e.entity_id
WHERE e.collection = ? GROUP BY ALL ORDER BY e.entity_id
"""
ENTITY_STATEMENTS_SQL = """
SELECT entity_id, list(statement ORDER BY confidence DESC, statement)[:$limit] AS statements
FROM (
    SELECT unnest([head_entity_id, tail_entity_id]) AS entity_id, confidence,
           head_name || ' ' || replace(relation, '_', ' ') || ' ' || tail_name AS statement
    FROM fact_versions
    WHERE collection = $collection AND recorded_to IS NULL AND operation <> $retract
      AND valid_to IS NULL AND confidence >= $theta)
GROUP BY entity_id
"""


def entities_with_statements(
    warehouse: WarehouseStore, collection: str, theta: float, statements: int
) -> list[dict[str, Any]]:
    """Every entity with its aliases and up to `statements` current fact statements of
    confidence at least `theta` (`statements` key), most confident first."""
    entities = warehouse.rows(ENTITIES_WITH_ALIASES_SQL, [collection])
    params = {
        "collection": collection,
        "theta": theta,
        "limit": statements,
        "retract": FactOperation.RETRACT.value,
    }
    found = {r["entity_id"]: r["statements"] for r in warehouse.rows(ENTITY_STATEMENTS_SQL, params)}
    return [{**e, "statements": found.get(e["entity_id"], [])} for e in entities]


LOGICAL_FACTS_SQL = """
SELECT fact_id, any_value(head_entity_id) AS head_entity_id, any_value(head_name) AS head_name,
       any_value(relation) AS relation, any_value(tail_entity_id) AS tail_entity_id,
       any_value(tail_name) AS tail_name
FROM fact_versions WHERE collection = ? GROUP BY fact_id ORDER BY fact_id
"""


def logical_facts(warehouse: WarehouseStore, collection: str) -> list[dict[str, Any]]:
    """One row per fact id (head, relation, tail and their names), by id."""
    return warehouse.rows(LOGICAL_FACTS_SQL, [collection])


GRAPH_TRIPLES_SQL = """
SELECT DISTINCT head_entity_id, relation, tail_entity_id
FROM fact_versions
WHERE collection = ? AND recorded_to IS NULL AND operation <> ? AND valid_to IS NULL
  AND confidence >= ?
ORDER BY ALL
"""


def graph_triples(
    warehouse: WarehouseStore, collection: str, min_confidence: float
) -> list[dict[str, Any]]:
    """Distinct (head, relation, tail) of the current, valid facts of at least
    `min_confidence`: the R-GCN's graph."""
    return warehouse.rows(
        GRAPH_TRIPLES_SQL, [collection, FactOperation.RETRACT.value, min_confidence]
    )
