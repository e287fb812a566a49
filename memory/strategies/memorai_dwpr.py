"""MemORAI's query-adaptive retrieval (`memorai_dwpr`, papers/memorai.md §3.3): a query
subgraph from multi-aspect seeds plus one hop, ranked by Dynamic Weighted PageRank.

1. Seeds (§3.3.1, "multi-aspect parallel retrieval"): the top-k retrievable segments by
   cosine of their embedding (the paper searches topic-segment summaries; a snapshot has
   no summaries, so the segments' own vectors stand in), the top-k entities by cosine of
   their description embedding (`linking.similar_entity_positions`: the graph index's
   unit vectors, over its IVF lists above 50k entities, option `vector_probes`), and the
   top-k facts (the paper's relation edges) by cosine of their statement ("head relation
   tail", the paper's undefined `r.desc`).
   k = 3 for each aspect, the paper's "top-k = 3". Pure top-k as in the paper: no
   similarity threshold and no name matching, so a query naming nothing in memory still
   gets a subgraph and a ranking.
2. G_q: seeds, the two ends of each seed fact, and their one-hop neighbours, with the
   induced edges (`memory.memorai_subgraph`, which also records how entity / turn /
   segment / relation map onto kgmem's entity, segment and fact nodes).
3. Eq. 1 weights: sim(q, entity) on entity–segment edges, sim(q, fact) on the two halves
   of a reified relation edge and on fact–segment provenance edges, the same weight in
   both directions. Seed vector (Eq. 2): every node of G_q with its cosine to the query
   (entity description, segment text, fact statement), clamped to 0 and L1-normalised.
4. DW-PR (Eq. 2–3, `memory.dwpr`) with damping d = 0.85: the paper gives no d; Eq. 2 is
   the classic PageRank form, whose customary d is 0.85 (HippoRAG's 0.5 is tied to its
   own PPR). Tolerance 1e-8 (L1), at most 100 iterations; both unstated in the paper.
5. Segments of G_q are ranked by their DW-PR score ("turn nodes τ are ranked by their
   final PageRank scores, and the top-m turns are retrieved", m = query.k). A subgraph
   with fewer than k segments returns fewer. Each returned segment lists up to
   `PATHS_PER_SEGMENT` fact paths from a seed that reach it (`memory.memorai_paths`),
   standing in for the paper's triplets attached to the retrieved turns.

Options read from `query.options`: `seeds` (k per aspect, default 3), `damping` (0.85),
`uniform_weights` (False; True is the paper's "Uniform (w = 1)" ablation), `tolerance`
(1e-8), `max_iterations` (100).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory import dwpr
from memory.flat_prior import flat_prior, with_graph_bonus
from memory.graph import MemoryGraph, graph_of
from memory.linking import similar_entity_positions, similar_facts
from memory.memorai_paths import anchors_of, segment_paths
from memory.memorai_subgraph import (
    QuerySubgraph,
    edge_weights,
    global_nodes,
    query_subgraph,
    structure_of,
)
from memory.nearest import probes_of
from memory.node_vectors import cosine, entity_vectors, fact_vectors, segment_vectors
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking

SEEDS_PER_ASPECT = 3
PATHS_PER_SEGMENT = 3
TOP_NODES_EXPLAINED = 5


@dataclass(frozen=True)
class Parameters:
    seeds: int = SEEDS_PER_ASPECT
    damping: float = dwpr.DAMPING
    uniform_weights: bool = False
    tolerance: float = dwpr.TOLERANCE
    max_iterations: int = dwpr.MAX_ITERATIONS

    @classmethod
    def of(cls, query: QueryContext) -> Parameters:
        o = query.options
        return cls(
            seeds=int(o.get("seeds", SEEDS_PER_ASPECT)),
            damping=float(o.get("damping", dwpr.DAMPING)),
            uniform_weights=bool(o.get("uniform_weights", False)),
            tolerance=float(o.get("tolerance", dwpr.TOLERANCE)),
            max_iterations=int(o.get("max_iterations", dwpr.MAX_ITERATIONS)),
        )


@dataclass(frozen=True)
class Seeds:
    """Graph positions of the seeds per aspect, with their cosine to the query."""

    segments: dict[int, float]
    entities: dict[int, float]
    facts: dict[int, float]

    def anchor_entities(self, graph: MemoryGraph) -> set[int]:
        """Seed entities and both ends of every seed fact."""
        facts = list(self.facts)
        ends = np.concatenate([graph.fact_head[facts], graph.fact_tail[facts]]).tolist()
        return set(self.entities) | {int(e) for e in ends}


def seeds_of(view: SnapshotView, query: QueryContext, graph: MemoryGraph, k: int) -> Seeds:
    """The three aspects' seeds: the flat prior's top segments, then the entity and fact
    searches for the query's vector, one after the other. They ran `beside` the prior on a
    worker thread until stop 33; on two cores the worker and the prior's searches slowed
    each other, and in turn measured no slower: 60 queries in processes of their own after
    the page cache was warmed, three alternating rounds, p50 26.1-27.4 ms against
    27.1-30.4 ms and p95 32.9-36.2 against 43.5-46.3 at 100k facts; p50 40.2-46.5 against
    44.9-47.1 ms at 1M. The seeds are the same either way."""
    question = view.embed_query(query.text)
    prior = flat_prior(view, query)
    weights = prior.distribution()
    entities, facts = _vector_seeds(view, query, question, k)
    return Seeds(
        segments={graph.segment_position[s]: round(weights[s], 6) for s in prior.top_segments()},
        entities=entities,
        facts=facts,
    )


def _vector_seeds(
    view: SnapshotView, query: QueryContext, question: np.ndarray, k: int
) -> tuple[dict[int, float], dict[int, float]]:
    """Seed entities and facts (graph positions with their cosine) for the query vector."""
    return (
        similar_entity_positions(view, question, k, probes_of(query.options)),
        dict(similar_facts(view, query, k, question)),
    )


def node_similarity(
    view: SnapshotView, graph: MemoryGraph, subgraph: QuerySubgraph, query_vector: np.ndarray
) -> np.ndarray:
    """Cosine to the query of every node of G_q, in its local order."""
    return np.concatenate(
        [
            cosine(entity_vectors(view, subgraph.entities), query_vector),
            cosine(segment_vectors(view, graph, subgraph.segments), query_vector),
            cosine(fact_vectors(graph, subgraph.facts), query_vector),
        ]
    )


def memorai_dwpr(view: SnapshotView, query: QueryContext) -> Ranking:
    params = Parameters.of(query)
    graph = graph_of(view, query)
    structure = structure_of(view, query)
    seeds = seeds_of(view, query, graph, params.seeds)
    prior = flat_prior(view, query)
    anchors = seeds.anchor_entities(graph)
    subgraph = query_subgraph(
        structure, global_nodes(structure, sorted(anchors), list(seeds.segments), list(seeds.facts))
    )
    similarity = node_similarity(view, graph, subgraph, view.embed_query(query.text))
    carried = np.ones(subgraph.size) if params.uniform_weights else similarity
    result = dwpr.dynamic_weighted_pagerank(
        edge_weights(subgraph, carried),
        similarity,
        damping=params.damping,
        tolerance=params.tolerance,
        max_iterations=params.max_iterations,
    )
    n_e, n_s = len(subgraph.entities), len(subgraph.segments)
    segment_scores = result.scores[n_e : n_e + n_s]
    fact_scores = result.scores[n_e + n_s :]
    own = np.argsort(-segment_scores, kind="stable")[: query.k]
    ranked = [(graph.segment_ids[int(subgraph.segments[i])], float(segment_scores[i])) for i in own]
    final = with_graph_bonus(prior, ranked)[: query.k]
    in_subgraph = set(subgraph.segments.tolist())
    fact_score = dict(zip(subgraph.facts.tolist(), fact_scores.tolist(), strict=True))
    prefixes = anchors_of(graph, set(seeds.entities), set(seeds.facts))
    paths: dict[str, list[str]] = {}
    for segment_id, _ in final:
        segment = graph.segment_position.get(segment_id)
        if segment is None or segment not in in_subgraph:
            continue
        found = segment_paths(
            graph, segment, prefixes, set(seeds.facts), fact_score, PATHS_PER_SEGMENT
        )
        if found:
            paths[graph.segment_ids[segment]] = [graph.path_text(list(p)) for p in found]
    scored = [(s, round(score, 8)) for s, score in final]
    return Ranking(scored, _explanation(graph, seeds, subgraph, result, params, fact_scores), paths)


def _explanation(
    graph: MemoryGraph,
    seeds: Seeds,
    subgraph: QuerySubgraph,
    result: dwpr.PageRankResult,
    params: Parameters,
    fact_scores: np.ndarray,
) -> dict[str, Any]:
    entity_scores = result.scores[: len(subgraph.entities)]
    best_entities = np.argsort(-entity_scores, kind="stable")[:TOP_NODES_EXPLAINED]
    best_facts = np.argsort(-fact_scores, kind="stable")[:TOP_NODES_EXPLAINED]
    return {
        "strategy": "memorai_dwpr",
        "seeds": {
            "segments": {graph.segment_ids[s]: c for s, c in seeds.segments.items()},
            "entities": {graph.entity_names[e]: c for e, c in seeds.entities.items()},
            "facts": {graph.linearized(f): c for f, c in seeds.facts.items()},
        },
        "subgraph": {
            "entities": len(subgraph.entities),
            "segments": len(subgraph.segments),
            "facts": len(subgraph.facts),
            "edges": int(subgraph.adjacency.nnz // 2),
        },
        "iterations": result.iterations,
        "converged": result.converged,
        "parameters": {
            **asdict(params),
            "edge_weights": "uniform" if params.uniform_weights else "dynamic",
        },
        "top_entities": {
            graph.entity_names[int(subgraph.entities[i])]: round(float(entity_scores[i]), 6)
            for i in best_entities
        },
        "top_facts": {
            graph.linearized(int(subgraph.facts[i])): round(float(fact_scores[i]), 6)
            for i in best_facts
        },
    }
