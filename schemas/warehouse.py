"""The warehouse catalogue: every DuckDB table, declared once, and the DDL made from it.

Each table is a `TableDecl` over the Arrow schema that stages write (`schemas.tables`,
`schemas.llm_outputs`) with its key and required columns; `DDL` is generated from them,
plus the one view and the one migration, and `DDL_DIGEST`, by which a warehouse file records
that the DDL has run on it. Derived per-document tables (segments, mentions,
candidates) are replaced per document, and `stage_ledger` records which documents each
stage has processed, so a re-run only touches new or changed documents; corpus-wide stages
skip when the fingerprint of their input in `stage_state` is unchanged.
`fact_version_log` is append-only, and the `fact_versions` view derives each version's
`recorded_to` from the recorded time of the version that superseded it, so the recorded
axis needs no in-place update.
"""

from __future__ import annotations

import hashlib

from schemas.ddl import TableDecl
from schemas.llm_outputs import LLM_TRIPLETS
from schemas.tables import (
    COLLECTIONS,
    DOCUMENTS,
    ENTITIES,
    ENTITY_ALIASES,
    ENTITY_BLOCKING_EDGES,
    ENTITY_BLOCKING_KEYS,
    ENTITY_CONSTRAINTS,
    ENTITY_MENTIONS,
    ENTITY_SAME_AS,
    EVALUATION_RESULTS,
    FACT_VERSION_LOG,
    QUARANTINE,
    RELATION_CANDIDATES,
    RELATION_CARDINALITY,
    SEGMENT_NODES,
    SEGMENT_PHRASES,
    SEGMENTS,
    SNAPSHOTS,
    STAGE_LEDGER,
    STAGE_STATE,
    WAREHOUSE_SCHEMA,
)

TABLES = (
    TableDecl("collections", COLLECTIONS, ("name",), ("inputs", "registered_at")),
    TableDecl("documents", DOCUMENTS, ("collection", "doc_id")),
    TableDecl("segments", SEGMENTS, ("collection", "segment_id")),
    TableDecl("entity_mentions", ENTITY_MENTIONS, ("collection", "mention_id")),
    TableDecl("relation_candidates", RELATION_CANDIDATES, ("collection", "candidate_id")),
    TableDecl("entities", ENTITIES, ("collection", "entity_id")),
    TableDecl("entity_aliases", ENTITY_ALIASES, ("collection", "entity_id", "alias")),
    TableDecl("llm_triplets", LLM_TRIPLETS, ("collection", "triplet_id")),
    TableDecl("entity_same_as", ENTITY_SAME_AS, ("collection", "norm_key")),
    TableDecl(
        "entity_blocking_keys",
        ENTITY_BLOCKING_KEYS,
        ("collection", "norm_key"),
        ("config_id", "entity_type", "surfaces", "types", "tokens", "band_codes"),
    ),
    TableDecl(
        "entity_blocking_edges",
        ENTITY_BLOCKING_EDGES,
        ("collection", "method", "key_a", "key_b"),
        ("score",),
    ),
    TableDecl("entity_constraints", ENTITY_CONSTRAINTS, ("collection", "kind", "key_a", "key_b")),
    TableDecl(
        "fact_version_log",
        FACT_VERSION_LOG,
        ("version_id",),
        (
            "fact_id",
            "collection",
            "head_entity_id",
            "relation",
            "tail_entity_id",
            "confidence",
            "recorded_from",
            "operation",
            "source_segment_ids",
            "extractor",
        ),
    ),
    TableDecl("segment_phrases", SEGMENT_PHRASES, ("collection", "segment_id", "phrase")),
    TableDecl("segment_nodes", SEGMENT_NODES, ("collection", "segment_id", "node_id")),
    TableDecl("relation_cardinality", RELATION_CARDINALITY, ("collection", "relation")),
    TableDecl(
        "quarantine",
        QUARANTINE,
        ("collection", "stage", "source_file", "record_ref", "reason"),
    ),
    TableDecl("stage_ledger", STAGE_LEDGER, ("collection", "stage", "doc_id")),
    TableDecl("stage_state", STAGE_STATE, ("collection", "stage")),
    TableDecl(
        "evaluation_results",
        EVALUATION_RESULTS,
        ("collection", "snapshot_id", "benchmark", "strategy", "metric"),
    ),
    TableDecl(
        "snapshots",
        SNAPSHOTS,
        ("snapshot_id",),
        tuple(c for c in SNAPSHOTS.names if c not in {"snapshot_id", "retrieval"}),
    ),
    TableDecl("warehouse_schema", WAREHOUSE_SCHEMA, ("ddl_digest",)),
)
TABLE = {t.name: t for t in TABLES}

FACT_VERSIONS_VIEW = """
CREATE OR REPLACE VIEW fact_versions AS
SELECT v.*, s.recorded_from AS recorded_to
FROM fact_version_log v
LEFT JOIN fact_version_log s ON s.supersedes = v.version_id
"""

MIGRATIONS = (
    # Workspaces created before snapshots pinned their retrieval settings gain the column.
    "ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS retrieval VARCHAR",
)

DDL = (*(t.ddl() for t in TABLES), FACT_VERSIONS_VIEW, *MIGRATIONS)
DDL_DIGEST = hashlib.sha256("\n;\n".join(DDL).encode()).hexdigest()
"""What a warehouse file records in `warehouse_schema` once `DDL` has run on it: a writer
finding it there skips the DDL (23 statements, about 10 ms per connection, and a build
opens about 60 writable connections); any change to a declaration changes it, and the DDL
runs again."""
