"""GRAM's structure-aware Search (`gram_paths`): relational paths of at most L edges between
the query's entities, over typed facts and the passage graph's untyped links, linearized
`[s] -[p]-> [o] ; …`; the segments on them ranked by their best path and blended with
the flat prior.

GRAM (papers/gram.md §4.1, Eq. 3) answers a search with the relational paths of length
≤ L among the entities of the query, linearized into text; its graph is built by an LLM
(entities, then relations among them). Our graph (`memory.link_graph`), LLM-free:

- GRAM's entity nodes V_t: the passage graph's nodes (`memory.passage_links`): entities,
  and the topic/title, phrase, session, speaker and day nodes as further untyped
  entities; segments are vertices too, as the evidence of untyped relations;
- GRAM's relation triplets E_t: the typed facts (relation extraction), and the untyped
  `mentioned_with` relation of two nodes a segment names (node – segment – node: the
  segment is its evidence; an entity – passage – title node chain is the bridge of a
  two-hop question), and `next_turn` between consecutive turns of a session. Hubs (nodes
  of more than `passage_links.HUB_SEGMENTS` segments) join no untyped relation.

The paper leaves L, the mapping from query to entities, path ranking and result limits
open. The choices made here:

- Query entities: the entities the query names (any alias as a normalised n-gram, GRAM's
  entity extraction + alignment at query time), the `FLAT_ANCHORS` (3) entities of the
  flat ranking's top segments and its `SEED_NODES` (5) seed nodes (the linkable passage
  nodes of those segments, by prior mass times specificity: `passage_links.seed_nodes`);
  where the query names no entity that joins an untyped relation (none, or only hubs),
  also the topic/title and phrase nodes it names. Anchors without any edge are dropped;
  with none left, the `FALLBACK_ANCHORS` (3) entities whose description is most similar
  to the query (cosine ≥ 0.5), as in the notes' `topk_nodes_by_similarity` fallback.
- L = `MAX_LENGTH` = 4 edges: two untyped relations (A – passage – title – passage – B,
  MuSiQue's two-hop bridge) or up to four facts (the datasets need 2.4–2.65 supporting
  facts on average, Table 1).
- Two or more query entities: every pair is searched bidirectionally for the simple paths
  joining them (`memory.relational_paths`). If only one entity is found, or no pair is
  joined within L, the paths of length ≤ L starting from each query entity are used.
- Paths are scored by max(mean cosine of the query to the path's edge statements, 0) ×
  the product of the edges' confidences (the paper has no scoring). An edge's statement
  is its fact's for a fact, its segment's vector for a mention, the mean of the two
  turns' cosines for a next turn; its confidence is the fact's, the square root of the
  node's specificity for a mention (so node – segment – node carries the node's
  specificity, HippoRAG's 1 / #segments), `NEXT_TURN_CONFIDENCE` for a next turn.
  Per pair (or per start entity) the `PATHS_PER_PAIR` (10) best are kept; each side of a
  search stops after `EXPANSION_LIMIT` (2000) partial paths.
- The path's segments (the segments it passes through and those stating its facts) score
  the best kept path they are on; the first `CANDIDATES` by that score are blended by
  the log of the score with the flat `hybrid` ranking (`memory.traversal.blended`, the
  flat share per corpus kind pinned by the snapshot). Each lists (best first, at most
  `PATHS_PER_SEGMENT` = 5) the linearized paths it is on.

Paths are shown in reading order (the direction that follows most of their facts head to
tail), so a path found from an entity may be printed ending at it.

Options read from `query.options`: `max_length` (L), `paths_per_pair`, `flat_share`.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from memory.flat_prior import flat_prior, kept_per_query
from memory.graph import MemoryGraph, graph_of
from memory.link_graph import FACT, KIND_NAMES, MENTION, NEXT_TURN, LinkGraph, link_graph
from memory.linking import named_entities, positions, similar_entities
from memory.nearest import probes_of
from memory.node_vectors import fact_vectors
from memory.passage_links import PassageLinks, named_nodes, passage_links, seed_nodes
from memory.relational_paths import RelationalPath, Search, paths_among, paths_from, reading_order
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.traversal import blended

FLAT_ANCHORS = 3
"""Entities of the flat ranking's top segments added to the named ones as anchors."""
SEED_NODES = 5
"""Passage nodes of the flat ranking's top segments added as anchors
(`passage_links.seed_nodes`; option `seed_nodes`). LoCoMo dev, first 300 questions, turn
R@10 at flat share 0.3 with 0 / 5 / 10 seed nodes: 65.2 / 76.2 / 74.1 (hybrid 65.9): the
seed nodes (sessions, days, specific phrases of the top turns) carry the gain."""
MAX_LENGTH = 4
PATHS_PER_PAIR = 10
EXPANSION_LIMIT = 2000
PATHS_PER_SEGMENT = 5
FALLBACK_ANCHORS = 3
TOP_PATHS_EXPLAINED = 10
CANDIDATES = 200
"""Segments of the paths that are blended with the flat ranking."""
NEXT_TURN_CONFIDENCE = 0.5
"""Confidence of a next-turn edge: adjacency is a weaker link than a shared node."""


def gram_paths(view: SnapshotView, query: QueryContext) -> Ranking:
    ranked, explanation, paths = kept_per_query(
        view, "gram_paths", query, lambda: _search(view, query)
    )
    top = ranked[: query.k]
    return Ranking(top, explanation, {s: paths[s] for s, _ in top if s in paths})


def link_graph_of(view: SnapshotView, query: QueryContext) -> LinkGraph:
    """GRAM's search graph for the query's fact coordinates, built once per view."""
    key = ("gram_link_graph", *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = link_graph(passage_links(view), graph_of(view, query))
    return view.cache[key]


def _search(
    view: SnapshotView, query: QueryContext
) -> tuple[list[tuple[str, float]], dict[str, Any], dict[str, list[str]]]:
    """The blended ranking, the explanation and the paths behind each segment: all of
    `gram_paths` but the cut at k (kept per query by `kept_per_query`)."""
    graph = graph_of(view, query)
    links = passage_links(view)
    edges = link_graph_of(view, query)
    max_length = int(query.options.get("max_length", MAX_LENGTH))
    per_pair = int(query.options.get("paths_per_pair", PATHS_PER_PAIR))
    prior = flat_prior(view, query)
    degree = np.diff(edges.entity_facts.indptr)

    def vertices(entities: dict[str, float]) -> list[int]:
        nodes = (int(links.entity_node[e]) for e in positions(graph, entities))
        return [v for v in nodes if v >= 0 and degree[v] > 0]

    named = vertices(named_entities(view, query.text))
    flat = vertices(prior.seed_entities(view, FLAT_ANCHORS))
    linkable = any(links.linkable[v] for v in named)
    titled = [] if linkable else [v for v in named_nodes(links, query.text) if degree[v] > 0]
    count = int(query.options.get("seed_nodes", SEED_NODES))
    seeded = [v for v, _ in seed_nodes(view, links, prior, count) if degree[v] > 0]
    anchors = list(dict.fromkeys([*named, *flat, *seeded, *titled]))
    entities_from = "named, flat ranking and named nodes"
    if not anchors:
        similar = similar_entities(
            view, query.text, FALLBACK_ANCHORS, probes=probes_of(query.options)
        )
        anchors = vertices(similar)
        entities_from = "similar"
    searches = paths_among(edges, anchors, max_length, EXPANSION_LIMIT)
    mode = "between_entities"
    if not any(len(s) for s in searches):
        mode = "from_entity"
        searches = [paths_from(edges, a, max_length, EXPANSION_LIMIT) for a in anchors]
    similarity, confidence = _edge_scores(view, query, graph, links, edges, searches)
    kept: dict[tuple[int, ...], tuple[float, RelationalPath]] = {}
    for search in searches:
        scores = search.scores(similarity, confidence)
        for index in np.argsort(-scores, kind="stable")[:per_pair]:
            path = reading_order(edges, search.path(int(index)))
            kept.setdefault(tuple(sorted(path.facts)), (float(scores[index]), path))
    best = sorted(kept.values(), key=lambda item: -item[0])
    walked, paths = _rank_segments(view, graph, links, edges, best)
    ranked, shares = blended(view, query, prior, walked, "gram_paths")
    found = Counter[int]()
    for search in searches:
        found.update(search.lengths())
    explanation = {
        "strategy": "gram_paths",
        "max_length": max_length,
        "paths_per_pair": per_pair,
        "query_entities": [_name(links, graph, a) for a in anchors if a in named],
        "flat_entities": [_name(links, graph, a) for a in anchors if a in flat and a not in named],
        "seed_nodes": [_name(links, graph, a) for a in seeded],
        "named_nodes": [_name(links, graph, a) for a in anchors if a in titled],
        "flat": prior.summary(),
        "flat_share": shares,
        "entities_from": entities_from,
        "mode": mode,
        "paths_found": {str(n): found[n] for n in range(1, max_length + 1)},
        "paths_kept": len(best),
        "truncated": any(s.truncated for s in searches),
        "top_paths": [
            {"path": _path_text(view, graph, links, edges, p), "score": round(score, 6)}
            for score, p in best[:TOP_PATHS_EXPLAINED]
        ],
    }
    return ranked, explanation, paths


def _name(links: PassageLinks, graph: MemoryGraph, vertex: int) -> str:
    return links.name(vertex, graph.entity_names)


def _edge_scores(
    view: SnapshotView,
    query: QueryContext,
    graph: MemoryGraph,
    links: PassageLinks,
    edges: LinkGraph,
    searches: list[Search],
) -> tuple[np.ndarray, np.ndarray]:
    """Per edge of the link graph, its statement's cosine to the query and its
    confidence; cosines are computed for the edges on found paths only (0 elsewhere)."""
    query_vector = view.embed_query(query.text)
    on_paths = np.unique(np.concatenate([np.zeros(0, np.int64), *(s.facts() for s in searches)]))
    similarity = np.zeros(len(edges.kind))
    kind = edges.kind[on_paths]
    facts = on_paths[kind == FACT]
    if len(facts):
        similarity[facts] = fact_vectors(graph, edges.ref[facts]) @ query_vector
    mentions = on_paths[kind == MENTION]
    similarity[mentions] = links.similarity(edges.fact_tail[mentions] - edges.n_nodes, query_vector)
    turns = on_paths[kind == NEXT_TURN]
    ends = np.concatenate([edges.fact_head[turns], edges.fact_tail[turns]]) - edges.n_nodes
    pair = links.similarity(ends, query_vector)
    similarity[turns] = (pair[: len(turns)] + pair[len(turns) :]) / 2.0
    confidence = np.full(len(edges.kind), NEXT_TURN_CONFIDENCE)
    is_fact = edges.kind == FACT
    confidence[is_fact] = graph.fact_confidence[edges.ref[is_fact]]
    is_mention = edges.kind == MENTION
    confidence[is_mention] = np.sqrt(links.specificity[edges.fact_head[is_mention]])
    return similarity, confidence


def _path_segments(graph: MemoryGraph, edges: LinkGraph, path: RelationalPath) -> list[int]:
    """The segments a path passes through, then those stating its facts, each once."""
    found = [edges.segment(v) for v in path.entities if v >= edges.n_nodes]
    for edge in path.facts:
        if edges.kind[edge] == FACT:
            found += graph.segments_of_fact(int(edges.ref[edge]))
    return list(dict.fromkeys(found))


def _rank_segments(
    view: SnapshotView,
    graph: MemoryGraph,
    links: PassageLinks,
    edges: LinkGraph,
    best: list[tuple[float, RelationalPath]],
) -> tuple[list[tuple[str, float]], dict[str, list[str]]]:
    """The first `CANDIDATES` retrievable segments by (best path score, distinct path edges
    on them, paths through them, position), scored by the log of that best score (paths
    of score 0 rank nothing), and the linearized paths each is on, best first."""
    retrievable = view.retrievable_segments
    top: dict[int, float] = {}
    supported: dict[int, list[RelationalPath]] = {}
    on: dict[int, set[int]] = {}
    for score, path in best:
        if score <= 0:
            continue
        for segment in _path_segments(graph, edges, path):
            if retrievable[segment]:
                top.setdefault(segment, score)
                on.setdefault(segment, set()).update(path.facts)
                supported.setdefault(segment, []).append(path)

    def rank(s: int) -> tuple[float, int, int, int]:
        return -top[s], -len(on[s]), -len(supported[s]), s

    order = sorted(top, key=rank)[:CANDIDATES]
    scored = [(graph.segment_ids[s], math.log(top[s])) for s in order]
    paths = {
        graph.segment_ids[s]: [
            _path_text(view, graph, links, edges, p) for p in supported[s][:PATHS_PER_SEGMENT]
        ]
        for s in order[: TOP_PATHS_EXPLAINED * 5]
    }
    return scored, paths


def _path_text(
    view: SnapshotView,
    graph: MemoryGraph,
    links: PassageLinks,
    edges: LinkGraph,
    path: RelationalPath,
) -> str:
    """A path linearized edge by edge: a fact as stored (`[s] -[p]-> [o]`), an untyped
    edge `[a] -[mentioned_in|next_turn]-> [b]` with a segment shown by its id."""

    def vertex(v: int) -> str:
        segment = edges.segment(v)
        return graph.segment_ids[segment] if segment >= 0 else _name(links, graph, v)

    parts = []
    for a, edge in zip(path.entities, path.facts, strict=False):
        if edges.kind[edge] == FACT:
            parts.append(graph.linearized(int(edges.ref[edge])))
        else:
            b = int(edges.fact_tail[edge] if edges.fact_head[edge] == a else edges.fact_head[edge])
            parts.append(f"[{vertex(a)}] -[{KIND_NAMES[edges.kind[edge]]}]-> [{vertex(b)}]")
    return " ; ".join(parts)
