"""HippoRAG-style personalized PageRank over the entity–segment graph.

Nodes are the snapshot's entities and retrievable segments. Edges: segment–entity for
every mention (weight 1) and entity–entity for every fact valid in the snapshot (weight =
fact confidence; facts valid at the query's reference time and stable unless the query
is speculative), both undirected. The personalization vector follows HippoRAG 2: query
entities (aliases found in the query text, weight 1; the ends of the 5 facts most
similar to the query, HippoRAG 2's query-to-triple linking, weight = cosine; the
entities whose description is most similar to the query, weight = cosine), each divided
by the number of segments mentioning the entity (HippoRAG's node specificity, so that a
hub entity does not drown the rest), and every segment with `PASSAGE_NODE_WEIGHT` (0.05)
times its min-max normalised dense score, as HippoRAG 2 does. Damping 0.5 as in
HippoRAG. Segments are ranked by their PageRank mass, so a passage two hops away from a
query entity (a person's office's city) is reachable although it shares no words with
the query.

The graph is a scipy CSR matrix built once per view; each query is a few sparse
matrix–vector products, never a Python loop over nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.strategies.dense import dense_scores
from transforms.consolidation import normalize_name
from transforms.embedding import encode

DAMPING = 0.5
PASSAGE_NODE_WEIGHT = 0.05
ENTITY_SEEDS_BY_SIMILARITY = 3
FACT_SEEDS = 5
MIN_ENTITY_SIMILARITY = 0.5
MAX_NGRAM = 5
ITERATIONS = 50
TOLERANCE = 1e-8

_WORD = re.compile(r"[\w'’-]+")


@dataclass(frozen=True)
class EntitySegmentGraph:
    """Node index and row-normalised transition matrix of a snapshot's graph."""

    entity_ids: list[str]
    segment_ids: list[str]
    transition: sp.csr_matrix
    passages_of: np.ndarray
    """Per entity, the number of segments that mention it (HippoRAG's node specificity)."""

    @property
    def n_entities(self) -> int:
        return len(self.entity_ids)


def _build_graph(view: SnapshotView, query: QueryContext) -> EntitySegmentGraph:
    entity_ids = view.entities.column("entity_id").to_pylist()
    segment_ids = view.segments.column("segment_id").to_pylist()
    position = {e: i for i, e in enumerate(entity_ids)}
    n_e, n = len(entity_ids), len(entity_ids) + len(segment_ids)
    rows, cols, weights = [], [], []
    for s_index, linked in enumerate(view.segments.column("entity_ids").to_pylist()):
        for entity in linked or []:
            if entity in position:
                rows.append(n_e + s_index)
                cols.append(position[entity])
                weights.append(1.0)
    for fact in view.facts(query):
        head, tail = position.get(fact["head_entity_id"]), position.get(fact["tail_entity_id"])
        if head is not None and tail is not None:
            rows.append(head)
            cols.append(tail)
            weights.append(float(fact["confidence"]))
    upper = sp.coo_matrix((weights, (rows, cols)), shape=(n, n)).tocsr()
    adjacency = (upper + upper.T).tocsr()
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    passages = np.asarray((adjacency[:n_e, n_e:] > 0).sum(axis=1)).ravel()
    return EntitySegmentGraph(entity_ids, segment_ids, sp.diags(inverse) @ adjacency, passages)


def graph_of(view: SnapshotView, query: QueryContext) -> EntitySegmentGraph:
    """The graph of the query's facts, built on first use and kept in the view's cache."""
    key = ("ppr_graph", *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = _build_graph(view, query)
    return view.cache[key]


def link_query_entities(view: SnapshotView, text: str) -> dict[str, float]:
    """Entities named in `text` (any alias, as a normalised n-gram), weight 1."""
    words = _WORD.findall(text)
    found: dict[str, float] = {}
    for size in range(min(MAX_NGRAM, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            entity = view.alias_index.get(normalize_name(" ".join(words[start : start + size])))
            if entity:
                found[entity] = 1.0
    return found


def similar_entities(view: SnapshotView, text: str) -> dict[str, float]:
    """The entities whose description embedding is closest to the query (cosine weights)."""
    hits = (
        view.table("entities")
        .search(view.embed_query(text))
        .limit(ENTITY_SEEDS_BY_SIMILARITY)
        .to_list()
    )
    similar = {h["entity_id"]: 1.0 - h["_distance"] / 2.0 for h in hits}
    return {e: round(s, 4) for e, s in similar.items() if s >= MIN_ENTITY_SIMILARITY}


def fact_linked_entities(view: SnapshotView, query: QueryContext) -> dict[str, float]:
    """HippoRAG 2's query-to-triple linking: the ends of the facts most similar to the query,
    weighted by that similarity (fact texts are "head relation tail", embedded once per view)."""
    facts = view.facts(query)
    if not facts:
        return {}
    key = ("fact_vectors", *query.fact_filter)
    if key not in view.cache:
        texts = [
            f"{f['head_name']} {f['relation'].replace('_', ' ')} {f['tail_name']}" for f in facts
        ]
        view.cache[key] = encode(texts, view.snapshot.embedding_model)
    similarity = view.cache[key] @ view.embed_query(query.text)
    linked: dict[str, float] = {}
    for index in np.argsort(-similarity)[:FACT_SEEDS]:
        fact = facts[index]
        for entity in (fact["head_entity_id"], fact["tail_entity_id"]):
            linked[entity] = max(linked.get(entity, 0.0), round(float(similarity[index]), 4))
    return {e: s for e, s in linked.items() if s >= MIN_ENTITY_SIMILARITY}


def personalized_pagerank(transition: sp.csr_matrix, personalization: np.ndarray) -> np.ndarray:
    """Power iteration of r = (1 - d) p + d Tᵀ r; mass of dangling nodes returns to p."""
    p = personalization / personalization.sum()
    rank = p.copy()
    transposed = transition.T.tocsr()
    for _ in range(ITERATIONS):
        spread = transposed @ rank
        updated = (1 - DAMPING) * p + DAMPING * spread + DAMPING * (rank.sum() - spread.sum()) * p
        if np.abs(updated - rank).sum() < TOLERANCE:
            return updated
        rank = updated
    return rank


def ppr(view: SnapshotView, query: QueryContext) -> Ranking:
    text, k = query.text, query.k
    graph = graph_of(view, query)
    named = link_query_entities(view, text)
    seeds: dict[str, float] = {}
    for found in (similar_entities(view, text), fact_linked_entities(view, query), named):
        for entity, weight in found.items():
            seeds[entity] = max(seeds.get(entity, 0.0), weight)
    personalization = np.zeros(graph.transition.shape[0])
    position = {e: i for i, e in enumerate(graph.entity_ids)}
    for entity, weight in seeds.items():
        personalization[position[entity]] += weight / max(graph.passages_of[position[entity]], 1)
    segment_position = {s: graph.n_entities + i for i, s in enumerate(graph.segment_ids)}
    dense = dense_scores(view, text, len(graph.segment_ids))
    if dense:
        scores = np.array([score for _, score in dense])
        low, span = scores.min(), max(float(np.ptp(scores)), 1e-9)
        for (segment_id, _), score in zip(dense, scores, strict=True):
            personalization[segment_position[segment_id]] += (
                PASSAGE_NODE_WEIGHT * (score - low) / span
            )
    if personalization.sum() == 0:
        return Ranking([], {"strategy": "ppr", "seeds": {}})
    rank = personalized_pagerank(graph.transition, personalization)
    segment_rank = rank[graph.n_entities :]
    top = np.argsort(-segment_rank)[:k]
    names = dict(
        zip(
            view.entities.column("entity_id").to_pylist(),
            view.entities.column("name").to_pylist(),
            strict=True,
        )
    )
    return Ranking(
        [(graph.segment_ids[i], round(float(segment_rank[i]), 8)) for i in top],
        {
            "strategy": "ppr",
            "damping": DAMPING,
            "seeds": {names[e]: w for e, w in sorted(seeds.items(), key=lambda x: -x[1])},
            "named_in_query": sorted(names[e] for e in named),
        },
    )
