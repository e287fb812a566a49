"""GRAM's structure-aware Search (`gram_paths`): relational paths of at most L facts between
the query's entities, linearized `[s] -[p]-> [o] ; …`, and the segments supporting them.

GRAM (papers/gram.md §4.1, Eq. 3) answers a search with the relational paths of length
≤ L among the entities of the query, linearized into text; it leaves L, the mapping from
query to entities, path ranking and result limits open. The choices made here:

- Query entities: the entities the query names (any alias as a normalised n-gram, GRAM's
  entity extraction + alignment at query time) that are an end of at least one fact
  valid for the query. If there are none, the `FALLBACK_ANCHORS` (3) entities whose
  description is most similar to the query (cosine ≥ 0.5) and that have facts, as in the
  notes' `topk_nodes_by_similarity` fallback.
- L = `MAX_LENGTH` = 3: the paper gives none (the notes' sketch uses 2); its datasets need
  2.4–2.65 supporting facts on average (Table 1), so 3 covers most multi-hop chains.
- Two or more query entities: every pair is searched bidirectionally for the simple paths
  joining them (`memory.relational_paths`). If only one entity is found, or no pair is
  joined within L, the paths of length ≤ L starting from each query entity are used.
- Paths are scored by max(mean cosine of the query to the path's fact statements, 0) ×
  the product of the facts' confidences (the paper has no scoring). Per pair (or per
  start entity) the `PATHS_PER_PAIR` (10) best are kept; each side of a search stops after
  `EXPANSION_LIMIT` (2000) partial paths.
- Segments supporting any fact of a kept path are ranked by the score of the best path
  they support, then by how many distinct facts of kept paths and how many kept paths
  they support; each lists (best first, at most
  `PATHS_PER_SEGMENT` = 5) the linearized paths it supports. Only retrievable segments
  (chunks and turns) are ranked. No other retriever fills the list: a query whose entities
  have no paths returns fewer than k segments, as GRAM's Search returns only paths.

Paths are shown in reading order (the direction that follows most of their facts head to
tail), so a path found from an entity may be printed ending at it.

Options read from `query.options`: `max_length` (L), `paths_per_pair`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from memory.flat_prior import flat_prior, kept_per_query, with_graph_bonus
from memory.graph import MemoryGraph, graph_of
from memory.linking import named_entities, positions, similar_entities
from memory.nearest import probes_of
from memory.node_vectors import fact_vectors
from memory.relational_paths import (
    RelationalPath,
    Search,
    paths_among,
    paths_from,
    reading_order,
)
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking

FLAT_ANCHORS = 3
"""Entities of the flat ranking's top segments added to the named ones as anchors."""
MAX_LENGTH = 3
PATHS_PER_PAIR = 10
EXPANSION_LIMIT = 2000
PATHS_PER_SEGMENT = 5
FALLBACK_ANCHORS = 3
TOP_PATHS_EXPLAINED = 10


def gram_paths(view: SnapshotView, query: QueryContext) -> Ranking:
    best, explanation = kept_per_query(view, "gram_paths", query, lambda: _paths(view, query))
    prior = flat_prior(view, query)
    scored, paths = _rank_segments(view, graph_of(view, query), best, query.k)
    return Ranking(with_graph_bonus(prior, scored)[: query.k], explanation, paths)


def _paths(
    view: SnapshotView, query: QueryContext
) -> tuple[list[tuple[float, RelationalPath]], dict[str, Any]]:
    """The kept paths, best first, and the explanation: all of `gram_paths` but the
    segments ranked at k (kept per query by `kept_per_query`)."""
    graph = graph_of(view, query)
    max_length = int(query.options.get("max_length", MAX_LENGTH))
    per_pair = int(query.options.get("paths_per_pair", PATHS_PER_PAIR))
    prior = flat_prior(view, query)
    named = _with_facts(graph, named_entities(view, query.text))
    flat = _with_facts(graph, prior.seed_entities(view, FLAT_ANCHORS))
    anchors = list(dict.fromkeys([*named, *flat]))
    entities_from = "named and flat ranking"
    if not anchors:
        anchors = _with_facts(
            graph,
            similar_entities(view, query.text, FALLBACK_ANCHORS, probes=probes_of(query.options)),
        )
        entities_from = "similar"
    searches = paths_among(graph, anchors, max_length, EXPANSION_LIMIT)
    mode = "between_entities"
    if not any(len(s) for s in searches):
        mode = "from_entity"
        searches = [paths_from(graph, a, max_length, EXPANSION_LIMIT) for a in anchors]
    similarity = _fact_similarity(view, query, graph, searches)
    kept: dict[tuple[int, ...], tuple[float, RelationalPath]] = {}
    for search in searches:
        scores = search.scores(similarity, graph.fact_confidence)
        for index in np.argsort(-scores, kind="stable")[:per_pair]:
            path = reading_order(graph, search.path(int(index)))
            kept.setdefault(tuple(sorted(path.facts)), (float(scores[index]), path))
    best = sorted(kept.values(), key=lambda item: -item[0])
    found = Counter[int]()
    for search in searches:
        found.update(search.lengths())
    explanation = {
        "strategy": "gram_paths",
        "max_length": max_length,
        "paths_per_pair": per_pair,
        "query_entities": [graph.entity_names[a] for a in anchors if a in named],
        "flat_entities": [graph.entity_names[a] for a in anchors if a not in named],
        "flat": prior.summary(),
        "entities_from": entities_from,
        "mode": mode,
        "paths_found": {str(n): found[n] for n in range(1, max_length + 1)},
        "paths_kept": len(best),
        "truncated": any(s.truncated for s in searches),
        "top_paths": [
            {"path": graph.path_text(list(p.facts)), "score": round(score, 6)}
            for score, p in best[:TOP_PATHS_EXPLAINED]
        ],
    }
    return best, explanation


def _with_facts(graph: MemoryGraph, entities: dict[str, float]) -> list[int]:
    """Graph positions of `entities` that are an end of at least one of the query's facts
    (an entity without facts is on no path), in the order given."""
    degree = np.diff(graph.entity_facts.indptr)
    return [e for e in positions(graph, entities) if degree[e] > 0]


def _fact_similarity(
    view: SnapshotView, query: QueryContext, graph: MemoryGraph, searches: list[Search]
) -> np.ndarray:
    """Cosine of the query to each fact on a found path (0 for facts on none)."""
    similarity = np.zeros(len(graph.facts))
    facts = np.unique(np.concatenate([np.zeros(0, np.int64), *(s.facts() for s in searches)]))
    if len(facts):
        similarity[facts] = fact_vectors(graph, facts) @ view.embed_query(query.text)
    return similarity


def _rank_segments(
    view: SnapshotView,
    graph: MemoryGraph,
    best: list[tuple[float, RelationalPath]],
    k: int,
) -> tuple[list[tuple[str, float]], dict[str, list[str]]]:
    """Segments by (best supported path score, number of distinct path facts supported,
    number of paths supported, position), with the linearized paths each supports, best
    first."""
    retrievable = view.retrievable_segments
    top: dict[int, float] = {}
    supported: dict[int, list[str]] = {}
    facts: dict[int, set[int]] = {}
    for score, path in best:
        text = graph.path_text(list(path.facts))
        for fact in path.facts:
            for segment in graph.segments_of_fact(fact):
                if retrievable[segment]:
                    top.setdefault(segment, score)
                    facts.setdefault(segment, set()).add(fact)
                    if text not in supported.setdefault(segment, []):
                        supported[segment].append(text)

    def rank(s: int) -> tuple[float, int, int, int]:
        return -top[s], -len(facts[s]), -len(supported[s]), s

    order = sorted(top, key=rank)[:k]
    scored = [(graph.segment_ids[s], round(top[s], 6)) for s in order]
    paths = {graph.segment_ids[s]: supported[s][:PATHS_PER_SEGMENT] for s in order}
    return scored, paths
