"""Lexical retrieval: LanceDB's native full-text index, scored with BM25."""

from __future__ import annotations

from memory.snapshot_view import RETRIEVABLE_FILTER, QueryContext, SnapshotView
from memory.strategies.base import Ranking


def bm25(view: SnapshotView, query: QueryContext) -> Ranking:
    hits = (
        view.table("segments")
        .search(query.text, query_type="fts")
        .where(RETRIEVABLE_FILTER, prefilter=True)
        .select(["segment_id", "_score"])
        .limit(query.k)
        .to_list()
    )
    return Ranking(
        [(h["segment_id"], round(float(h["_score"]), 6)) for h in hits], {"strategy": "bm25"}
    )
