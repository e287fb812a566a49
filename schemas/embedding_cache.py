"""The embedding cache table: one vector per (encoder, role, text hash).

It lives in its own DuckDB file (`<home>/cache/embeddings.duckdb`), not in the
warehouse, so that every collection and every build of a workspace shares it.
"""

EMBEDDING_CACHE_DDL = """
CREATE TABLE IF NOT EXISTS embedding_cache (
    encoder VARCHAR NOT NULL, role VARCHAR NOT NULL, text_hash VARCHAR NOT NULL,
    vector FLOAT[] NOT NULL,
    PRIMARY KEY (encoder, role, text_hash)
)"""
