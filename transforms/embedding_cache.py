"""Embeddings cached by content: encode each distinct text once per encoder and role.

A key is (encoder id, role, sha-256 of the text). A build asks the cache first and runs
the encoder only on texts it has never embedded with that model, so a rebuild, a schema
change that rewrites a LanceDB table, a second collection holding the same passages, or
a second encoder added as a fusion signal costs one encode per distinct text. Texts that
repeat within one call are encoded once too.

The cache is a DuckDB file of its own (see `schemas.embedding_cache`); every operation
opens a short connection (waiting while another process holds the file) and closes it,
so concurrent builds share it. Rows are only inserted (`INSERT OR IGNORE`), so two
builds that embedded the same text race harmlessly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from schemas.embedding_cache import EMBEDDING_CACHE_TABLE
from transforms.duckdb_connect import connect_waiting

Embed = Callable[[Sequence[str]], np.ndarray]
STORE_BATCH = 1024
"""Texts encoded per call of the encoder, each batch stored in the cache when it is done:
a build stopped midway (SIGTERM, a crash) keeps every batch it finished, and its re-run
encodes only the rest."""


def text_hash(text: str) -> str:
    """The cache key part of a text: its sha-256, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors in the DuckDB file at `path` (created with its table if missing)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = connect_waiting(self.path)
        try:
            con.execute(EMBEDDING_CACHE_TABLE.ddl())
        finally:
            con.close()

    def lookup(self, encoder: str, role: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those `hashes` that are cached."""
        if not hashes:
            return {}
        wanted = pa.table({"text_hash": pa.array(sorted(set(hashes)), pa.string())})
        con = connect_waiting(self.path, read_only=False)
        try:
            con.register("wanted", wanted)
            rows = con.execute(
                "SELECT c.text_hash, c.vector FROM embedding_cache c "
                "JOIN wanted w ON w.text_hash = c.text_hash "
                "WHERE c.encoder = ? AND c.role = ?",
                [encoder, role],
            ).fetchall()
        finally:
            con.close()
        return {h: np.asarray(v, np.float32) for h, v in rows}

    def store(self, encoder: str, role: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Insert the vectors of `hashes` (row i for hashes[i]) unless already cached."""
        if not hashes:
            return
        rows = pa.table(
            {
                "encoder": pa.array([encoder] * len(hashes), pa.string()),
                "role": pa.array([role] * len(hashes), pa.string()),
                "text_hash": pa.array(list(hashes), pa.string()),
                "vector": pa.array(list(np.asarray(vectors, np.float32)), pa.list_(pa.float32())),
            }
        )
        con = connect_waiting(self.path)
        try:
            con.register("fresh", rows)
            con.execute("INSERT OR IGNORE INTO embedding_cache SELECT * FROM fresh")
        finally:
            con.close()

    def missing(self, encoder: str, role: str, texts: Sequence[str]) -> list[str]:
        """The distinct `texts` that (encoder, role) has no vector for, in first-seen order."""
        keys = {text_hash(t): t for t in texts}
        found = self.lookup(encoder, role, list(keys))
        return [t for k, t in keys.items() if k not in found]

    def text_hashes(self, encoder: str, role: str) -> set[str]:
        """The text hashes cached for (encoder, role): one per distinct text it encoded."""
        con = connect_waiting(self.path, read_only=False)
        try:
            rows = con.execute(
                "SELECT text_hash FROM embedding_cache WHERE encoder = ? AND role = ?",
                [encoder, role],
            ).fetchall()
        finally:
            con.close()
        return {h for (h,) in rows}

    def count(self, encoder: str | None = None) -> int:
        """Cached vectors (of `encoder`, or of all)."""
        con = connect_waiting(self.path, read_only=False)
        try:
            query = "SELECT count(*) FROM embedding_cache WHERE ? IS NULL OR encoder = ?"
            return int(con.execute(query, [encoder, encoder]).fetchall()[0][0])
        finally:
            con.close()


def cached_embed(
    embed: Embed, cache: EmbeddingCache, encoder: str, role: str, batch: int = STORE_BATCH
) -> Embed:
    """`embed` behind `cache`: each distinct text that (encoder, role) never embedded is
    encoded once, `batch` texts per call to `embed`, and each batch is stored as soon as it
    is encoded; the rest come from the cache."""

    def lookup_then_encode(texts: Sequence[str]) -> np.ndarray:
        keys = [text_hash(t) for t in texts]
        found = cache.lookup(encoder, role, keys)
        missing = list({k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items())
        for start in range(0, len(missing), batch):
            part = missing[start : start + batch]
            fresh = np.asarray(embed([t for _, t in part]), np.float32)
            cache.store(encoder, role, [k for k, _ in part], fresh)
            found.update(zip((k for k, _ in part), fresh, strict=True))
        if not texts:
            return np.asarray(embed([]), np.float32)
        return np.vstack([found[k] for k in keys]).astype(np.float32)

    return lookup_then_encode
