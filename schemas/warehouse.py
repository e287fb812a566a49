"""DuckDB DDL of the warehouse: the tables every stage writes and the query package reads.

Derived per-document tables (segments, mentions, candidates) are replaced per document,
and `stage_ledger` records which documents each stage has processed, so a re-run only
touches new or changed documents; corpus-wide stages skip when the fingerprint of their
input in `stage_state` is unchanged.
`fact_version_log` is append-only, and the `fact_versions` view derives each version's
`recorded_to` from the recorded time of the version that superseded it, so the recorded
axis needs no in-place update.
"""

from __future__ import annotations

from schemas.llm_outputs import LLM_TRIPLETS_DDL

DDL = (
    """
    CREATE TABLE IF NOT EXISTS collections (
        name VARCHAR PRIMARY KEY,
        inputs VARCHAR NOT NULL,
        registered_at TIMESTAMPTZ NOT NULL
    )""",
    """
    CREATE TABLE IF NOT EXISTS documents (
        doc_id VARCHAR, collection VARCHAR, source_path VARCHAR, record_ref VARCHAR,
        kind VARCHAR, title VARCHAR, text VARCHAR, doc_time TIMESTAMPTZ, turns_json VARCHAR,
        PRIMARY KEY (collection, doc_id)
    )""",
    """
    CREATE TABLE IF NOT EXISTS segments (
        segment_id VARCHAR, collection VARCHAR, doc_id VARCHAR, kind VARCHAR, seq INTEGER,
        text VARCHAR, char_start INTEGER, char_end INTEGER, speaker VARCHAR,
        session_id VARCHAR, turn_id VARCHAR, observed_at TIMESTAMPTZ,
        mentioned_from TIMESTAMPTZ, mentioned_to TIMESTAMPTZ,
        PRIMARY KEY (collection, segment_id)
    )""",
    """
    CREATE TABLE IF NOT EXISTS entity_mentions (
        mention_id VARCHAR, collection VARCHAR, segment_id VARCHAR, doc_id VARCHAR,
        text VARCHAR, label VARCHAR, entity_type VARCHAR, char_start INTEGER, char_end INTEGER,
        doc_char_start INTEGER, doc_char_end INTEGER, model VARCHAR,
        PRIMARY KEY (collection, mention_id)
    )""",
    """
    CREATE TABLE IF NOT EXISTS relation_candidates (
        candidate_id VARCHAR, collection VARCHAR, segment_id VARCHAR, doc_id VARCHAR,
        head_text VARCHAR, head_start INTEGER, head_end INTEGER, relation VARCHAR,
        tail_text VARCHAR, tail_start INTEGER, tail_end INTEGER, negated BOOLEAN,
        confidence FLOAT, pattern VARCHAR, extractor VARCHAR,
        PRIMARY KEY (collection, candidate_id)
    )""",
    """
    CREATE TABLE IF NOT EXISTS entities (
        entity_id VARCHAR, collection VARCHAR, name VARCHAR, entity_type VARCHAR,
        norm_key VARCHAR, mention_count INTEGER,
        PRIMARY KEY (collection, entity_id)
    )""",
    """
    CREATE TABLE IF NOT EXISTS entity_aliases (
        collection VARCHAR, entity_id VARCHAR, alias VARCHAR, mention_count INTEGER,
        PRIMARY KEY (collection, entity_id, alias)
    )""",
    LLM_TRIPLETS_DDL,
    """
    CREATE TABLE IF NOT EXISTS entity_same_as (
        collection VARCHAR, norm_key VARCHAR, entity_id VARCHAR, method VARCHAR, score DOUBLE,
        PRIMARY KEY (collection, norm_key)
    )""",
    """
    CREATE TABLE IF NOT EXISTS entity_constraints (
        collection VARCHAR, kind VARCHAR, key_a VARCHAR, key_b VARCHAR, created_at TIMESTAMPTZ,
        PRIMARY KEY (collection, kind, key_a, key_b)
    )""",
    """
    CREATE TABLE IF NOT EXISTS fact_version_log (
        version_id VARCHAR PRIMARY KEY, fact_id VARCHAR NOT NULL, collection VARCHAR NOT NULL,
        head_entity_id VARCHAR NOT NULL, head_name VARCHAR, relation VARCHAR NOT NULL,
        tail_entity_id VARCHAR NOT NULL, tail_name VARCHAR, confidence DOUBLE NOT NULL,
        valid_from TIMESTAMPTZ, valid_to TIMESTAMPTZ, recorded_from TIMESTAMPTZ NOT NULL,
        operation VARCHAR NOT NULL, supersedes VARCHAR, source_segment_ids VARCHAR[] NOT NULL,
        extractor VARCHAR NOT NULL, cardinality VARCHAR
    )""",
    """
    CREATE TABLE IF NOT EXISTS segment_phrases (
        collection VARCHAR, doc_id VARCHAR, segment_id VARCHAR, phrase VARCHAR,
        PRIMARY KEY (collection, segment_id, phrase)
    )""",
    """
    CREATE TABLE IF NOT EXISTS segment_nodes (
        collection VARCHAR, segment_id VARCHAR, node_id VARCHAR, kind VARCHAR,
        PRIMARY KEY (collection, segment_id, node_id)
    )""",
    """
    CREATE TABLE IF NOT EXISTS relation_cardinality (
        collection VARCHAR, relation VARCHAR, cardinality VARCHAR, source VARCHAR,
        evidence VARCHAR, decided_at TIMESTAMPTZ,
        PRIMARY KEY (collection, relation)
    )""",
    """
    CREATE OR REPLACE VIEW fact_versions AS
    SELECT v.*,
           s.recorded_from AS recorded_to
    FROM fact_version_log v
    LEFT JOIN fact_version_log s ON s.supersedes = v.version_id
    """,
    """
    CREATE TABLE IF NOT EXISTS quarantine (
        collection VARCHAR, stage VARCHAR, source_file VARCHAR, record_ref VARCHAR,
        reason VARCHAR, raw VARCHAR, quarantined_at TIMESTAMPTZ,
        PRIMARY KEY (collection, stage, source_file, record_ref, reason)
    )""",
    """
    CREATE TABLE IF NOT EXISTS stage_ledger (
        collection VARCHAR, stage VARCHAR, doc_id VARCHAR, processed_at TIMESTAMPTZ,
        PRIMARY KEY (collection, stage, doc_id)
    )""",
    """
    CREATE TABLE IF NOT EXISTS stage_state (
        collection VARCHAR, stage VARCHAR, input_fingerprint VARCHAR, updated_at TIMESTAMPTZ,
        PRIMARY KEY (collection, stage)
    )""",
    """
    CREATE TABLE IF NOT EXISTS benchmarks (
        collection VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, dataset VARCHAR NOT NULL,
        options VARCHAR NOT NULL, registered_at TIMESTAMPTZ NOT NULL
    )""",
    """
    CREATE TABLE IF NOT EXISTS evaluation_results (
        collection VARCHAR, snapshot_id VARCHAR, benchmark VARCHAR, strategy VARCHAR,
        metric VARCHAR, value DOUBLE, evaluated_at TIMESTAMPTZ,
        PRIMARY KEY (collection, snapshot_id, benchmark, strategy, metric)
    )""",
    """
    CREATE TABLE IF NOT EXISTS snapshots (
        snapshot_id VARCHAR PRIMARY KEY, collection VARCHAR NOT NULL,
        content_hash VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL,
        recorded_cutoff TIMESTAMPTZ NOT NULL, lance_versions VARCHAR NOT NULL,
        source_partitions VARCHAR NOT NULL, embedding_model VARCHAR NOT NULL,
        counts VARCHAR NOT NULL, retrieval VARCHAR
    )""",
    # Workspaces created before snapshots pinned their retrieval settings gain the column.
    "ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS retrieval VARCHAR",
)
