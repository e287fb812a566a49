"""`hybrid`: flat retrieval fused from full text (BM25), the main encoder and, where the
snapshot has its vectors, a second encoder, by normalised scores with weights per corpus
kind. It is the ranking that the graph strategies start from.

Each signal returns its top `candidate_pool` segments (`max(POOL, 2k)`, k the one the
query first asked for, so the ranking does not change as `Memory.query` widens k);
`transforms.rank_fusion.fuse` z-normalises each list and adds them with the weights of
each segment's corpus kind (`transforms.hybrid_weights`: documents and conversations
differ, since lexical overlap carries conversations and meaning carries encyclopedic
passages). A signal the snapshot lacks is dropped and the remaining weights renormalised;
a signal that returns nothing for a query (BM25 on a question of stop words) adds nothing.

Options: `hybrid_weights` ({corpus kind: {signal: weight}}) overrides the weights pinned
in the snapshot. `--explain` shows the weights, where they came from, the signals used and
each hit's per-signal contribution.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from memory.corpus_kinds import weights_by_kind
from memory.linking import beside, full_text_segments, nearest_segments, similar_segments
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from transforms.brevity_prior import OPTION as BREVITY_OPTION
from transforms.brevity_prior import brevity_weights, with_brevity_prior
from transforms.hybrid_weights import SIGNALS, normalised, resolve_weights
from transforms.rank_fusion import Scored, combine, contributions, normalise

POOL = 50
"""Candidates per signal (at least; 2k when k is larger)."""
WEIGHTS_OPTION = "hybrid_weights"
EXPLAINED_HITS = 10
KEPT_RANKINGS = 8
"""Fused rankings a view keeps (`hybrid_ranking`), and strategies' per-query work."""
T = TypeVar("T")


def candidate_pool(query: QueryContext) -> int:
    """Candidates per signal of the query's flat searches: `POOL`, or twice the k first
    asked (`QueryContext.depth`) when that is larger. Not the widened k: a pool growing
    with it re-normalised the fused scores, so the best chunk of a long document at k=1
    was another than at k=5 (issue 37, 3.3)."""
    return max(POOL, 2 * (query.depth or query.k))


def available_signals(view: SnapshotView) -> tuple[str, ...]:
    """The signals the snapshot has: the second encoder's only with its vectors."""
    return tuple(s for s in SIGNALS if s != "dense_fusion" or view.fusion_encoder is not None)


def signal_lists(view: SnapshotView, query: QueryContext, pool: int) -> dict[str, Scored]:
    """Each available signal's top `pool` (segment id, raw score), best first.

    The query is encoded first, then the full-text search runs on a worker thread while
    this one searches the vectors: both searches wait in LanceDB's own runtime, outside the
    interpreter, so the lexical signal costs little beyond the dense one. The full-text
    search is not started before the encoding: the encoder's many small numpy steps hold
    the interpreter between its matrix products, and on two cores the two contended for
    it and for the cores (at 1M facts, `hybrid` p50 23.4 ms started before, 20.8 ms after,
    60 queries alternating in one process; the encoding alone 7.3 ms, the full-text search
    5.3 ms)."""
    vector = view.embed_query(query.text)
    lexical = beside(full_text_segments, view, query.text, pool)
    dense = nearest_segments(view, vector, pool)
    fusion = (
        similar_segments(view, query.text, pool, second_encoder=True)
        if view.fusion_encoder is not None
        else None
    )
    signals: dict[str, Scored] = {"bm25": lexical.result(), "dense": dense}
    if fusion is not None:
        signals["dense_fusion"] = fusion
    return signals


def hybrid_ranking(
    view: SnapshotView, query: QueryContext, pool: int | None = None
) -> tuple[list[tuple[str, float]], dict[str, Any]]:
    """Fused (segment id, score) of every candidate, best first, and its explanation.

    Kept per (query text, pool, `hybrid_weights` option) for the view's last
    `KEPT_RANKINGS` queries: a graph strategy asks for its flat prior again as
    `Memory.query` widens its fetch to fill k passages (the pool stays, `candidate_pool`),
    and every strategy of an evaluation asks for the same question's prior, whatever its
    other options (traversal=off). Shared, so callers must not change what it returns."""
    return _kept(view, query, pool)[0]


def hybrid_signals(
    view: SnapshotView, query: QueryContext, pool: int | None = None
) -> dict[str, Scored]:
    """The signal lists (`signal_lists`) that `hybrid_ranking` of the same arguments
    fused, kept with it: a strategy that needs a signal's top list of at most `pool`
    (KGERMAR's contextual and semantic banks) reads its head instead of searching again.
    Shared, so callers must not change what it returns."""
    return _kept(view, query, pool)[1]


def _kept(
    view: SnapshotView, query: QueryContext, pool: int | None
) -> tuple[tuple[list[tuple[str, float]], dict[str, Any]], dict[str, Scored]]:
    """(`hybrid_ranking`, `hybrid_signals`) of the arguments, from the view's kept ones."""
    pool = pool or candidate_pool(query)
    read = {name: query.options.get(name) for name in (WEIGHTS_OPTION, BREVITY_OPTION)}
    key = (query.text, pool, json.dumps(read, sort_keys=True, default=str))
    return kept_recent(view, "hybrid_rankings", key, lambda: _fused(view, query, pool))


def kept_recent(view: SnapshotView, name: str, key: Hashable, compute: Callable[[], T]) -> T:
    """`compute()` kept under `key` in the view's cache `name`, which holds the last
    `KEPT_RANKINGS` keys asked for (a per-query result, asked again as `Memory.query`
    widens its fetch; bounded, so a long session does not grow it)."""
    kept: OrderedDict[Hashable, Any] = view.cache.setdefault(name, OrderedDict())
    if key in kept:
        kept.move_to_end(key)
        return kept[key]
    kept[key] = compute()
    if len(kept) > KEPT_RANKINGS:
        kept.popitem(last=False)
    return kept[key]


def _fused(
    view: SnapshotView, query: QueryContext, pool: int
) -> tuple[tuple[list[tuple[str, float]], dict[str, Any]], dict[str, Scored]]:
    signals = signal_lists(view, query, pool)
    weights, sources = resolve_weights(view.snapshot.retrieval, query.options)
    available = available_signals(view)
    by_kind = {kind: normalised(w, available) for kind, w in weights.items()}

    weights_of = weights_by_kind(view, by_kind)
    normal = normalise(signals)
    fused = combine(normal, weights_of)
    brevity = brevity_weights(view.snapshot.retrieval, query.options)
    lexical = view.lexical_search
    if lexical is not None and any(brevity.values()):
        ids = [segment_id for segment_id, _ in fused]
        brevity_of = weights_by_kind(view, brevity)
        fused = with_brevity_prior(fused, lexical.term_counts(ids), [brevity_of(s) for s in ids])
    explanation = {
        "strategy": "hybrid",
        "signals": {name: len(scored) for name, scored in signals.items()},
        "encoders": {"dense": view.snapshot.embedding_model, "dense_fusion": view.fusion_encoder},
        "weights": by_kind,
        "weights_source": sources,
        "contributions": {
            segment_id: contributions(segment_id, normal, weights_of(segment_id))
            for segment_id, _ in fused[:EXPLAINED_HITS]
        },
    }
    return (fused, explanation), signals


def hybrid(view: SnapshotView, query: QueryContext) -> Ranking:
    fused, explanation = hybrid_ranking(view, query)
    return Ranking([(s, round(score, 6)) for s, score in fused[: query.k]], explanation)
