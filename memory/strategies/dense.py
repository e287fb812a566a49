"""Dense retrieval: cosine similarity of the query embedding to segment embeddings."""

from __future__ import annotations

from memory.linking import similar_segments
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking


def dense(view: SnapshotView, query: QueryContext) -> Ranking:
    scored = similar_segments(view, query.text, query.k)
    return Ranking(scored, {"strategy": "dense", "model": view.snapshot.embedding_model})
