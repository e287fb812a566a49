"""The passage graph of a snapshot: retrievable segments and the nodes they link to, as one
sparse matrix, for random walks that start from the flat ranking.

Nodes: every segment (chunk or turn), every entity a segment mentions (`entity_ids`), and
every structural node of `transforms.graph_nodes` (`node_ids`: document topics, document,
session, speaker, day) and phrase node of `transforms.phrases`. Edges, all undirected:

- segment – node, weighted by the node's specificity, HippoRAG's inverse of the number of
  segments linked to it (a node shared by two passages is a strong bridge, a hub shared
  by a thousand is a weak one), times `PHRASE_WEIGHT` for phrase nodes;
- entity – entity for every fact valid at the query's coordinates, weighted by the fact's
  confidence times the lesser specificity of its two ends;
- entity – entity for every untyped link of the snapshot's `links` table
  (`transforms.entity_links`: co-occurrence at weight 0.1, synonyms at their cosine), times
  its kind's `ENTITY_LINK_WEIGHTS` factor and the lesser specificity of its two ends;
- turn – next turn of the same session (`next_segment_id`), weight `NEXT_TURN_WEIGHT`.

The segment – node incidence and the next turns come precomputed from the snapshot's
graph index (`transforms.graph_index`); the matrix and its row-normalised transition are
assembled from them once per view (per fact coordinates) with vectorised operations and
cached; a walk is a few sparse matrix–vector products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc
import scipy.sparse as sp

from memory.graph import graph_of
from memory.snapshot_view import QueryContext, SnapshotView

PHRASE_WEIGHT = 0.3
"""Factor on the links of phrase nodes (`transforms.phrases`), against 1 for entities and
structural nodes (option `phrase_weight`). Chosen on the dev sets (hipporag_ppr): without
phrase nodes MuSiQue R@5 76.2 and LoCoMo turn/session R@10 77.9/88.5; with them at 1.0,
MuSiQue 75.3; at 0.3, MuSiQue 75.8 and LoCoMo 78.4/88.9; at 0.1, MuSiQue 75.8. Phrases
are a small net change either way on these sets: common nouns bridge conversation turns
("support group") more than encyclopedia passages, whose bridges are titles and names."""
PHRASE_PREFIX = "phrase:"
ENTITY_LINK_WEIGHTS = {"co_occurs": 0.0, "synonym": 0.0}
"""Factor on untyped entity links by kind (options `co_occurs_weight`, `synonym_weight`;
0 leaves a kind out). Off by default, as measured on the dev sets (hipporag_ppr, MuSiQue
R@5 / LoCoMo turn R@10, without links 75.8 / 78.3): co-occurrence at factor 1 costs MuSiQue
1.7 points (74.1), at 0.3 0.7 (75.1), at 0.1 nothing; synonyms at 1 cost 1.0 (74.8), at
0.3 0.5 (75.3); both at 1, 2.1 (73.7). LoCoMo is unchanged by either (100 co-occurrence
and 5 synonym links over 164 entities). A direct entity – entity edge lets the walk skip
the passage that joins the two, and MiniLM names at cosine 0.8 pair "Lester Holt" with
"Carlos Holt" as readily as "LGBTQ" with "LGBT"; the links stay in the snapshot for the
strategies and weights that gain from them."""
NEXT_TURN_WEIGHT = 1.0
"""Weight of a turn – next-turn edge, against a specificity of at most 1 for node links."""
ITERATIONS = 30
TOLERANCE = 1e-9


@dataclass(frozen=True)
class PassageGraph:
    """Segments, nodes and the transition matrix over [segments | nodes]."""

    segment_ids: list[str]
    node_ids: list[str]
    segment_position: dict[str, int]
    node_position: dict[str, int]
    specificity: np.ndarray
    """Per node: 1 / number of segments linked to it."""
    transition: sp.csr_matrix
    """Column-stochastic where a node has edges: `transition @ x` spreads mass x."""

    @property
    def n_segments(self) -> int:
        return len(self.segment_ids)

    def walk(self, reset: np.ndarray, damping: float) -> np.ndarray:
        """Personalised PageRank r = (1 - d) p + d T r from the reset vector `reset`
        (any non-negative vector over [segments | nodes]); mass that reaches a node
        without edges returns to p. Returns r, summing to 1."""
        p = reset / reset.sum()
        rank = p.copy()
        for _ in range(ITERATIONS):
            spread = self.transition @ rank
            updated = (1 - damping) * p + damping * (spread + (rank.sum() - spread.sum()) * p)
            if np.abs(updated - rank).sum() < TOLERANCE:
                return updated
            rank = updated
        return rank


def passage_graph(view: SnapshotView, query: QueryContext) -> PassageGraph:
    """The passage graph for the query's fact coordinates, built once per view."""
    phrase_weight = float(query.options.get("phrase_weight", PHRASE_WEIGHT))
    link_weights = {
        kind: float(query.options.get(f"{kind}_weight", weight))
        for kind, weight in ENTITY_LINK_WEIGHTS.items()
    }
    key = ("passage_graph", phrase_weight, *link_weights.values(), *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = _build(view, query, phrase_weight, link_weights)
    return view.cache[key]


def _build(
    view: SnapshotView, query: QueryContext, phrase_weight: float, link_weights: dict[str, float]
) -> PassageGraph:
    """The passage graph from the snapshot's graph index: its segment – node incidence and
    next turns are precomputed, the fact edges are the query's selection; no per-segment
    or per-fact Python loop."""
    index = view.graph_index
    links = index.segment_nodes
    specificity = 1.0 / np.maximum(np.asarray(links.sum(axis=0)).ravel(), 1.0)
    is_phrase = pc.starts_with(index.node_ids, PHRASE_PREFIX).to_numpy(zero_copy_only=False)
    kind_weight = np.where(is_phrase, phrase_weight, 1.0)
    weighted = (links @ sp.diags(specificity * kind_weight)).tocsr()
    entity_edges = _facts(view, query, specificity) + _entity_links(view, specificity, link_weights)
    adjacency = sp.bmat(
        [[_next_turns(index.next_segment), weighted], [weighted.T, entity_edges]], format="csr"
    )
    degree = np.asarray(adjacency.sum(axis=0)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    names = view.node_names
    return PassageGraph(
        segment_ids=names.segment_ids,
        node_ids=names.passage_nodes,
        segment_position=view.segment_index,
        node_position=names.passage_position,
        specificity=specificity,
        transition=(adjacency @ sp.diags(inverse)).tocsr(),
    )


def _next_turns(following: np.ndarray) -> sp.csr_matrix:
    """Turn – next-turn edges, both directions."""
    turns = np.flatnonzero(following >= 0)
    weights = np.full(len(turns), NEXT_TURN_WEIGHT)
    return _symmetric(turns, np.asarray(following[turns], np.int64), weights, len(following))


def _entity_links(
    view: SnapshotView, specificity: np.ndarray, kind_weights: dict[str, float]
) -> sp.csr_matrix:
    """Entity – entity edges of the snapshot's untyped links (none where it pins no
    `links` table, a snapshot built before they existed)."""
    n = len(specificity)
    walked = {kind: weight for kind, weight in kind_weights.items() if weight > 0}
    if not walked or "links" not in view.snapshot.lance_versions:
        return sp.csr_matrix((n, n))  # nothing to walk: the table is not read
    links = view.table("links").to_arrow()
    nodes = view.graph_index.node_ids
    a = np.asarray(pc.index_in(links.column("head_id"), nodes).fill_null(-1).to_numpy(), np.int64)
    b = np.asarray(pc.index_in(links.column("tail_id"), nodes).fill_null(-1).to_numpy(), np.int64)
    factor = np.zeros(links.num_rows)
    for kind, weight in walked.items():
        factor[pc.equal(links.column("kind"), kind).to_numpy()] = weight
    kept = (a >= 0) & (b >= 0) & (factor > 0)
    a, b = a[kept], b[kept]
    weight = np.asarray(links.column("weight").to_numpy(), np.float64)[kept] * factor[kept]
    return _symmetric(a, b, weight * np.minimum(specificity[a], specificity[b]), n)


def _symmetric(a: np.ndarray, b: np.ndarray, weights: np.ndarray, n: int) -> sp.csr_matrix:
    """The n x n matrix of undirected edges a[i] – b[i] of `weights`, both directions set."""
    return sp.csr_matrix((np.r_[weights, weights], (np.r_[a, b], np.r_[b, a])), shape=(n, n))


def _facts(view: SnapshotView, query: QueryContext, specificity: np.ndarray) -> sp.csr_matrix:
    """Entity – entity edges of the query's facts between entities the segments mention,
    weighted by confidence times the lesser specificity of the two ends."""
    graph = graph_of(view, query)
    entity_node = view.graph_index.entity_node
    a, b = entity_node[graph.fact_head], entity_node[graph.fact_tail]
    kept = (a >= 0) & (b >= 0) & (a != b)
    a, b = a[kept], b[kept]
    weights = graph.fact_confidence[kept] * np.minimum(specificity[a], specificity[b])
    n = len(specificity)
    upper = sp.csr_matrix((weights, (a, b)), shape=(n, n))
    return (upper + upper.T).tocsr()
