"""Lexical retrieval: BM25 over each segment's search text (its span with its title or
speaker), from the graph index's postings, or LanceDB's native full-text index where the
snapshot's graph index has none (`memory.linking.full_text_segments`).

The search asks for a pool of at least `POOL` segments, kept per query text (the view's
last `KEPT_RANKINGS` queries, `memory.strategies.hybrid.kept_recent`), and the ranking is
its head: `Memory.query` asks again with 2k, 4k, ... while k segments fill fewer than k
passages (chunks of one document), and on the bench's synthetic documents it did so 2.35
times a query, each a full-text search of its own. Both searches' top lists are exact,
so the head of a longer list has the shorter list's scores and hits, up to the order of
tied segments where LanceDB searches (the postings order ties by row); on both dev sets
the quality figures were identical (docs/benchmarks.md)."""

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
