"""HippoRAG-style personalized PageRank over the entity–segment graph (`hipporag_ppr`).

Nodes are the snapshot's entities and retrievable segments. Edges: segment–entity for
every mention (weight 1) and entity–entity for every fact of the query's coordinates
(weight = fact confidence), both undirected. The personalization vector follows
HippoRAG 2: query entities (aliases found in the query text, weight 1; the ends of the 5
facts most similar to the query, HippoRAG 2's query-to-triple linking, weight = cosine;
the 3 entities whose description is most similar to the query, weight = cosine), each
divided by the number of segments mentioning the entity (HippoRAG's node specificity, so
that a hub entity does not drown the rest), and the top `PASSAGE_SEEDS` segments by dense
score with `PASSAGE_NODE_WEIGHT` (0.05) times their min-max normalised score, as HippoRAG 2
does. Damping 0.5 as in HippoRAG. Segments are ranked by their PageRank mass, so a
passage two hops away from a query entity (a person's office's city) is reachable
although it shares no words with the query.

HippoRAG 2 seeds every passage; seeding only the top `PASSAGE_SEEDS` (the rest would get
a normalised weight near 0 anyway) keeps the dense lookup an indexed top-k search rather
than a scan of all segments. The transition matrix is built once per view; each query is
a few sparse matrix–vector products.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from memory.graph import MemoryGraph, graph_of
from memory.linking import named_entities, query_entities, similar_segments
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking

DAMPING = 0.5
PASSAGE_NODE_WEIGHT = 0.05
PASSAGE_SEEDS = 100
ITERATIONS = 50
TOLERANCE = 1e-8


def transition_of(view: SnapshotView, query: QueryContext) -> tuple[sp.csr_matrix, np.ndarray]:
    """Row-normalised transition matrix over [entities | segments] and, per entity, the
    number of segments mentioning it; cached per fact coordinates."""
    key = ("ppr_transition", *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = _transition(graph_of(view, query))
    return view.cache[key]


def _transition(graph: MemoryGraph) -> tuple[sp.csr_matrix, np.ndarray]:
    n_e = graph.n_entities
    adjacency = sp.bmat(
        [[graph.entity_adjacency, graph.entity_segments], [graph.mentions, None]], format="csr"
    )
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    passages = np.asarray(graph.entity_segments.sum(axis=1)).ravel()[:n_e]
    return (sp.diags(inverse) @ adjacency).tocsr(), passages


def personalized_pagerank(
    transition: sp.csr_matrix, personalization: np.ndarray, damping: float = DAMPING
) -> np.ndarray:
    """Power iteration of r = (1 - d) p + d Tᵀ r; mass of dangling nodes returns to p."""
    p = personalization / personalization.sum()
    rank = p.copy()
    transposed = transition.T.tocsr()
    for _ in range(ITERATIONS):
        spread = transposed @ rank
        updated = (1 - damping) * p + damping * spread + damping * (rank.sum() - spread.sum()) * p
        if np.abs(updated - rank).sum() < TOLERANCE:
            return updated
        rank = updated
    return rank


def ppr(view: SnapshotView, query: QueryContext) -> Ranking:
    graph = graph_of(view, query)
    transition, passages_of = transition_of(view, query)
    seeds = query_entities(view, query)
    personalization = np.zeros(transition.shape[0])
    for entity, weight in seeds.items():
        position = graph.entity_position[entity]
        personalization[position] += weight / max(passages_of[position], 1)
    dense = similar_segments(view, query.text, PASSAGE_SEEDS)
    if dense:
        scores = np.array([score for _, score in dense])
        low, span = scores.min(), max(float(np.ptp(scores)), 1e-9)
        for (segment_id, _), score in zip(dense, scores, strict=True):
            node = graph.n_entities + graph.segment_position[segment_id]
            personalization[node] += PASSAGE_NODE_WEIGHT * (score - low) / span
    if personalization.sum() == 0:
        return Ranking([], {"strategy": "hipporag_ppr", "seeds": {}})
    rank = personalized_pagerank(transition, personalization)
    segment_rank = rank[graph.n_entities :]
    top = np.argsort(-segment_rank, kind="stable")[: query.k]
    name = dict(zip(graph.entity_ids, graph.entity_names, strict=True))
    return Ranking(
        [(graph.segment_ids[i], round(float(segment_rank[i]), 8)) for i in top],
        {
            "strategy": "hipporag_ppr",
            "damping": DAMPING,
            "seeds": {name[e]: w for e, w in sorted(seeds.items(), key=lambda x: -x[1])},
            "named_in_query": sorted(name[e] for e in named_entities(view, query.text)),
        },
    )
