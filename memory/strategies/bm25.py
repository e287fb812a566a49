"""Lexical retrieval: LanceDB's native full-text index over each segment's search text
(its span with its title or speaker), scored with BM25.

The search asks for a pool of at least `POOL` segments, kept per query text (the view's
last `KEPT_RANKINGS` queries, `memory.strategies.hybrid.kept_recent`), and the ranking is
its head: `Memory.query` asks again with 2k, 4k, ... while k segments fill fewer than k
passages (chunks of one document), and on the bench's synthetic documents it did so 2.35
times a query, each a full-text search of its own. The full-text search's top list is
exact, so the head of a longer list is the shorter list (the same hits and scores, checked
on both dev sets and the bench's 100k and 1M snapshots, docs/benchmarks.md)."""

from __future__ import annotations

from memory.linking import full_text_segments
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.strategies.hybrid import POOL, kept_recent


def bm25(view: SnapshotView, query: QueryContext) -> Ranking:
    pool = max(POOL, query.k)
    scored = kept_recent(
        view, "bm25_lists", (query.text, pool),
        lambda: full_text_segments(view, query.text, pool),
    )  # fmt: skip
    return Ranking(scored[: query.k], {"strategy": "bm25"})
