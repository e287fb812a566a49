"""The embedding cache table: one vector per (encoder, role, text hash).

It lives in its own DuckDB file (`<home>/cache/embeddings.duckdb`), not in the
warehouse, so that every collection and every build of a workspace shares it.
"""

import pyarrow as pa

from schemas.ddl import TableDecl

EMBEDDING_CACHE = pa.schema(
    [
        ("encoder", pa.string()),
        ("role", pa.string()),
        ("text_hash", pa.string()),
        ("vector", pa.list_(pa.float32())),
    ]
)
EMBEDDING_CACHE_TABLE = TableDecl(
    "embedding_cache", EMBEDDING_CACHE, ("encoder", "role", "text_hash"), ("vector",)
)
