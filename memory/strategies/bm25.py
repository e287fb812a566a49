"""Lexical retrieval: LanceDB's native full-text index over each segment's search text
(its span with its title or speaker), scored with BM25."""

from __future__ import annotations

from memory.linking import full_text_segments
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking


def bm25(view: SnapshotView, query: QueryContext) -> Ranking:
    return Ranking(full_text_segments(view, query.text, query.k), {"strategy": "bm25"})
