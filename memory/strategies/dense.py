"""Dense retrieval: cosine similarity of the query embedding to segment embeddings."""

from __future__ import annotations

from memory.snapshot_view import RETRIEVABLE_FILTER, QueryContext, SnapshotView
from memory.strategies.base import Ranking


def dense_scores(view: SnapshotView, text: str, k: int) -> list[tuple[str, float]]:
    """Top-k (segment id, cosine) pairs; vectors are normalised, so cosine = 1 - L2²/2."""
    hits = (
        view.table("segments")
        .search(view.embed_query(text))
        .where(RETRIEVABLE_FILTER, prefilter=True)
        .select(["segment_id", "_distance"])
        .limit(k)
        .to_list()
    )
    return [(h["segment_id"], round(1.0 - h["_distance"] / 2.0, 6)) for h in hits]


def dense(view: SnapshotView, query: QueryContext) -> Ranking:
    scored = dense_scores(view, query.text, query.k)
    return Ranking(scored, {"strategy": "dense", "model": view.snapshot.embedding_model})
