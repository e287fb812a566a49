"""The texts a build encoded, recovered from its workspace, to time the bare encoders on.

Issue 15 sets the full build against "the bare models' time over the texts the build
encodes". A build encodes far more than its segments: the `entities` stage embeds the
resolution keys it compares, and `graph_embeddings` embeds segments (with the main and the
fusion encoder), entity descriptions, entity names, fact statements and each entity's
mention windows (span-pooled). Every encode goes through the embedding cache, one row per
distinct text and encoder (`transforms.embedding_cache`), and a bench build has a cache of
its own, so right after the full build the cache says exactly what was encoded, but by
hash only. The texts are recovered by hashing every candidate the workspace holds (the
embedded LanceDB tables' text columns, `pipelines.graph_embeddings.TEXT_COLUMNS`, and the
blocking index's keys) and keeping those the cache holds; cache rows no candidate explains
are counted as `unmatched`, so a gap in the recovery shows rather than shrinking the
baseline silently.

The span-pooled cache rows are one per marked mention window (the `contexts` column holds
each entity's windows joined), while the encoder runs once per distinct plain window
(`transforms.entity_contexts.window_vectors`), so that group counts the distinct plain
texts of the recovered windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.graph_embeddings import TEXT_COLUMNS, span_pooled_key
from stores.lance_tables import text_column
from stores.stage_inputs import collection_table
from stores.warehouse import Warehouse
from stores.workspace import Workspace, lance_table_name
from transforms.embedding_cache import EmbeddingCache, text_hash
from transforms.entity_contexts import WINDOW_SEPARATOR, split_marked

ROLE = "passage"
"""Builds embed every text as a passage."""


@dataclass(frozen=True)
class EncodedTexts:
    """The distinct texts one encoder ran on in a build."""

    label: str
    model: str
    texts: list[str]
    cached: int
    unmatched: int


def encoded_texts(root: Path, collection: str, settings: Any) -> list[EncodedTexts]:
    """What each encoder of `settings` encoded for `collection` in the workspace at `root`,
    read from its embedding cache (see the module docstring)."""
    workspace = Workspace.at(root)
    cache = EmbeddingCache(settings.embedding_cache_path(workspace.embedding_cache_path))
    db = workspace.lance()
    columns = {kind: text_column(db, lance_table_name(collection, kind), column)
               for kind, column in TEXT_COLUMNS.items()}  # fmt: skip
    keys = collection_table(Warehouse(str(root)), "entity_blocking_keys", collection)
    passages = [
        *columns["segments"],
        *columns["entities"],
        *columns["names"],
        *columns["facts"],
        *keys.column("norm_key").to_pylist(),
    ]
    marked = [w for joined in columns["contexts"] for w in joined.split(WINDOW_SEPARATOR)]
    pooled_key = span_pooled_key(settings.encoder_model)
    groups = [
        _matched("main encoder", settings.encoder_model, passages, cache),
        _windows(
            _matched("span-pooled windows", pooled_key, marked, cache), settings.encoder_model
        ),
    ]
    if settings.second_encoder:
        groups.append(
            _matched("fusion encoder", settings.second_encoder, columns["segments"], cache)
        )
    return groups


def _matched(label: str, key: str, candidates: list[str], cache: EmbeddingCache) -> EncodedTexts:
    """The distinct `candidates` whose hash the cache holds under encoder id `key`."""
    cached = cache.text_hashes(key, ROLE)
    by_hash = {text_hash(t): t for t in candidates}
    found = sorted(by_hash[h] for h in cached & by_hash.keys())
    return EncodedTexts(label, key, found, len(cached), len(cached) - len(found))


def _windows(marked: EncodedTexts, model: str) -> EncodedTexts:
    """The distinct plain texts of recovered marked windows, which `model` encoded."""
    plain = {split_marked(window)[0] for window in marked.texts}
    return EncodedTexts(marked.label, model, sorted(plain), marked.cached, marked.unmatched)
