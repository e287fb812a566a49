"""MemORAI's query-adaptive retrieval (`memorai_dwpr`, papers/memorai.md §3.3): a query
subgraph from multi-aspect seeds plus one hop, ranked by Dynamic Weighted PageRank, and
blended with the flat `hybrid` ranking it starts from.

Graph (`memory.memorai_subgraph`, where the mapping is written out): the paper's turn
nodes are our segments; its topic-segment nodes are session nodes (conversations) and
document and topic nodes (documents); its entity nodes are our entities plus phrase
nodes as description-less concept nodes, with speaker and day nodes as provenance
nodes; its relation edges are our typed facts (reified as fact nodes), their
`source_turns` our facts' supporting segments.

1. Seeds (§3.3.1, "multi-aspect parallel retrieval"): the flat prior's top
   `memory.flat_prior.SEED_SEGMENTS` segments (the paper searches topic-segment summaries
   by cosine; our strongest query–segment similarity is the `hybrid` ranking, so its top
   segments are the segment seeds), the top-k entities by cosine of their description
   embedding (`linking.similar_entity_positions`: the graph index's unit vectors, over its
   IVF lists above 50k entities, option `vector_probes`), and the top-k facts (the
   paper's relation edges) by cosine of their statement ("head relation tail", the
   paper's undefined `r.desc`). k = 3 for the entity and fact aspects, the paper's
   "top-k = 3". Pure top-k as in the paper: no similarity threshold and no name matching,
   so a query naming nothing in memory still gets a subgraph and a ranking.
2. G_q: seeds, the two ends of each seed fact, and their one-hop neighbours, plus the
   segments that a seed segment's specific entities and nodes link to (at most
   `BRIDGE_CAP` segments each: the bounded segment → node → segment hop that stands in
   for the paper's seed topic segment → its turns; LoCoMo dev as below, turn R@10 76.0 /
   76.8 / 78.6 at caps 0 / 10 / 30, and 79.1 / 79.0 / 79.5 at 10 / 30 / 50 with the
   pinned flat share 0.2: 10, the cheaper), with the induced edges.
3. Eq. 1 weights: sim(q, entity) on entity–segment edges, sim(q, fact) on the two halves
   of a reified relation edge and on fact–segment provenance edges, on node–segment
   edges the node's surrogate similarity (its specificity times the mean cosine of its
   segments in G_q; it has no vector), and on turn – next-turn edges that of a two-turn
   topic segment (`memory.memorai_subgraph.TURN_PAIR_SPECIFICITY`), the same weight in
   both directions.
   Seed vector (Eq. 2, "seed(v) equal to their semantic similarity to q"): each segment's
   similarity to the query as the flat prior measures it, its mass in the prior's
   distribution (softmax of the fused `hybrid` scores at temperature 0.5), 0 elsewhere
   (`prior_seed`). The paper's own reading, every node's cosine (entity description,
   segment text, fact statement), spreads the reset over the whole subgraph: measured on
   LoCoMo dev (first 300 questions, flat share 0.3, hybrid turn R@10 65.9) it gave turn
   R@10 67.0 against 76.8 with the prior's mass; the cosines still weigh the edges.
   Uniform edge weights (the paper's w = 1 ablation) there: 75.3, so Eq. 1 adds 1.5.
4. DW-PR (Eq. 2–3, `memory.dwpr`) with damping d = 0.85: the paper gives no d; Eq. 2 is
   the classic PageRank form, whose customary d is 0.85 (LoCoMo dev as above: 76.8
   against 77.0 at 0.5, so the customary value stays). Tolerance 1e-8 (L1), at most 100
   iterations; both unstated in the paper.
5. The segments of G_q, scored by the log of their DW-PR mass ("turn nodes τ are ranked by
   their final PageRank scores"), are blended with the flat ranking
   (`memory.traversal.blended`, the flat share per corpus kind pinned by the snapshot,
   `transforms.traversal_blend`): the paper ranks turns by DW-PR alone, over a graph
   whose turns an LLM gated; ours holds every turn, and the paper is silent on a prior.
   Each returned segment lists up to `PATHS_PER_SEGMENT` fact paths from a seed that
   reach it (`memory.memorai_paths`), standing in for the paper's triplets attached to
   the retrieved turns.

Options read from `query.options`: `seeds` (k per entity and fact aspect, default 3),
`bridge_cap` (`BRIDGE_CAP`; 0 is the paper's one hop alone), `damping` (0.85),
`uniform_weights` (False; True is the paper's "Uniform (w = 1)" ablation), `tolerance`
(1e-8), `max_iterations` (100), `flat_share` (the blend's flat share, every kind).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from memory import dwpr
from memory.flat_prior import flat_prior, kept_per_query
from memory.graph import MemoryGraph, graph_of
from memory.linking import similar_entity_positions, similar_facts
from memory.memorai_paths import anchors_of, segments_paths
from memory.memorai_subgraph import (
    BRIDGE_CAP,
    KIND_NAMES,
    NODE,
    QuerySubgraph,
    edge_weights,
    global_nodes,
    node_similarity,
    provenance_of,
    query_subgraph,
)
from memory.nearest import probes_of
from memory.node_vectors import cosine, entity_vectors, fact_vectors, segment_vectors
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.traversal import blended

SEEDS_PER_ASPECT = 3
PATHS_PER_SEGMENT = 3
TOP_NODES_EXPLAINED = 5
NAME = "memorai_dwpr"


@dataclass(frozen=True)
class Parameters:
    seeds: int = SEEDS_PER_ASPECT
    bridge_cap: int = BRIDGE_CAP
    damping: float = dwpr.DAMPING
    uniform_weights: bool = False
    tolerance: float = dwpr.TOLERANCE
    max_iterations: int = dwpr.MAX_ITERATIONS

    @classmethod
    def of(cls, query: QueryContext) -> Parameters:
        o = query.options
        return cls(
            seeds=int(o.get("seeds", SEEDS_PER_ASPECT)),
            bridge_cap=int(o.get("bridge_cap", BRIDGE_CAP)),
            damping=float(o.get("damping", dwpr.DAMPING)),
            uniform_weights=bool(o.get("uniform_weights", False)),
            tolerance=float(o.get("tolerance", dwpr.TOLERANCE)),
            max_iterations=int(o.get("max_iterations", dwpr.MAX_ITERATIONS)),
        )


@dataclass(frozen=True)
class Seeds:
    """Graph positions of the seeds per aspect, with their cosine to the query (segments:
    their prior mass)."""

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


def query_similarity(
    view: SnapshotView, graph: MemoryGraph, subgraph: QuerySubgraph, query_vector: np.ndarray
) -> np.ndarray:
    """Cosine to the query of every node of G_q, in its local order; the structural and
    phrase nodes, which have no vector, get their surrogate (`node_similarity`)."""
    return node_similarity(
        subgraph,
        np.concatenate(
            [
                cosine(entity_vectors(view, subgraph.entities), query_vector),
                cosine(segment_vectors(view, graph, subgraph.segments), query_vector),
                cosine(fact_vectors(graph, subgraph.facts), query_vector),
                np.zeros(len(subgraph.nodes)),
            ]
        ),
    )


def prior_seed(graph: MemoryGraph, subgraph: QuerySubgraph, mass: dict[str, float]) -> np.ndarray:
    """The seed vector (Eq. 2) over G_q's local order: each segment's similarity to the
    query as the flat prior measures it (its mass in `FlatPrior.distribution`, the softmax
    of the fused `hybrid` scores), 0 for the other nodes and for segments outside the
    prior's pool."""
    reset = np.zeros(subgraph.size)
    positions = np.fromiter((graph.segment_position[s] for s in mass), np.int64, len(mass))
    at = np.searchsorted(subgraph.segments, positions)
    inside = at < len(subgraph.segments)
    inside[inside] = subgraph.segments[at[inside]] == positions[inside]
    values = np.fromiter(mass.values(), np.float64, len(mass))
    reset[len(subgraph.entities) + at[inside]] = values[inside]
    return reset


@dataclass(frozen=True)
class Traversal:
    """A query's DW-PR over its subgraph and the blend with the flat ranking: all of
    `memorai_dwpr` but the cut at k and the paths (kept per query by `kept_per_query`)."""

    ranked: list[tuple[str, float]]
    seeds: Seeds
    subgraph: QuerySubgraph
    fact_scores: np.ndarray
    explanation: dict[str, Any]
    paths: dict[int, list[str]] = field(default_factory=dict)
    """The path texts of each segment (graph position) an ask has listed paths for: the
    asks of one query share them, as `Memory.query`'s widened ask lists its first k's
    again (~0.07 ms a segment at 100k facts)."""


def memorai_dwpr(view: SnapshotView, query: QueryContext) -> Ranking:
    graph = graph_of(view, query)
    walked = kept_per_query(view, NAME, query, lambda: _traverse(view, query, graph))
    final = walked.ranked[: query.k]
    positions = [graph.segment_position.get(segment_id) for segment_id, _ in final]
    if any(p is not None and p not in walked.paths for p in positions):
        _find_paths(graph, walked, [p for p in positions if p is not None])
    paths = {
        graph.segment_ids[p]: list(walked.paths[p])
        for p in positions
        if p is not None and walked.paths.get(p)
    }
    scored = [(s, round(score, 8)) for s, score in final]
    return Ranking(scored, walked.explanation, paths)


def _find_paths(graph: MemoryGraph, walked: Traversal, segments: list[int]) -> None:
    """Fill `walked.paths` for the `segments` it lacks: up to `PATHS_PER_SEGMENT` fact
    paths from a seed to each (none for a segment outside G_q)."""
    in_subgraph = set(walked.subgraph.segments.tolist())
    fact_score = dict(zip(walked.subgraph.facts.tolist(), walked.fact_scores.tolist(), strict=True))
    prefixes = anchors_of(graph, set(walked.seeds.entities), set(walked.seeds.facts))
    missing = [s for s in dict.fromkeys(segments) if s not in walked.paths]
    reached = [s for s in missing if s in in_subgraph]
    found = dict(
        zip(
            reached,
            segments_paths(
                graph, reached, prefixes, set(walked.seeds.facts), fact_score, PATHS_PER_SEGMENT
            ),
            strict=True,
        )
    )
    for segment in missing:
        walked.paths[segment] = [graph.path_text(list(p)) for p in found.get(segment, [])]


def _traverse(view: SnapshotView, query: QueryContext, graph: MemoryGraph) -> Traversal:
    params = Parameters.of(query)
    structure = provenance_of(view, query)
    seeds = seeds_of(view, query, graph, params.seeds)
    prior = flat_prior(view, query)
    seed_nodes = global_nodes(
        structure, sorted(seeds.anchor_entities(graph)), list(seeds.segments), list(seeds.facts)
    )
    subgraph = query_subgraph(
        structure,
        seed_nodes,
        global_nodes(structure, [], list(seeds.segments), []),
        params.bridge_cap,
    )
    similarity = query_similarity(view, graph, subgraph, view.embed_query(query.text))
    carried = np.ones(subgraph.size) if params.uniform_weights else similarity
    reset = prior_seed(graph, subgraph, prior.distribution())
    result = dwpr.dynamic_weighted_pagerank(
        edge_weights(subgraph, carried),
        reset,
        damping=params.damping,
        tolerance=params.tolerance,
        max_iterations=params.max_iterations,
    )
    n_e, n_s, n_f = len(subgraph.entities), len(subgraph.segments), len(subgraph.facts)
    segment_scores = result.scores[n_e : n_e + n_s]
    logs = np.log(segment_scores + 1e-12)  # one pass: the same bits as per entry
    order = np.argsort(-logs, kind="stable")  # best first, ties in subgraph order
    ids = graph.segment_ids
    walked = [
        (ids[s], v)
        for s, v in zip(subgraph.segments[order].tolist(), logs[order].tolist(), strict=True)
    ]
    ranked, shares = blended(view, query, prior, walked, NAME)
    fact_scores = result.scores[n_e + n_s : n_e + n_s + n_f]
    node_ids = view.graph_index.node_ids
    explanation = _explanation(graph, seeds, subgraph, result, params, fact_scores, shares)
    explanation["top_nodes"] = {
        node_ids[int(structure.node_positions[n])].as_py(): round(float(score), 6)
        for n, score in _best_nodes(subgraph, result.scores)
    }
    return Traversal(ranked, seeds, subgraph, fact_scores, explanation)


def _explanation(
    graph: MemoryGraph,
    seeds: Seeds,
    subgraph: QuerySubgraph,
    result: dwpr.PageRankResult,
    params: Parameters,
    fact_scores: np.ndarray,
    shares: dict[str, float],
) -> dict[str, Any]:
    n_e, n_s, n_f = len(subgraph.entities), len(subgraph.segments), len(subgraph.facts)
    entity_scores = result.scores[:n_e]
    best_entities = np.argsort(-entity_scores, kind="stable")[:TOP_NODES_EXPLAINED]
    best_facts = np.argsort(-fact_scores, kind="stable")[:TOP_NODES_EXPLAINED]
    return {
        "strategy": NAME,
        "seeds": {
            "segments": {graph.segment_ids[s]: c for s, c in seeds.segments.items()},
            "entities": {graph.entity_names[e]: c for e, c in seeds.entities.items()},
            "facts": {graph.linearized(f): c for f, c in seeds.facts.items()},
        },
        "subgraph": {
            "entities": n_e,
            "segments": n_s,
            "facts": n_f,
            KIND_NAMES[NODE] + "s": len(subgraph.nodes),
            "edges": int(subgraph.adjacency.nnz // 2),
        },
        "iterations": result.iterations,
        "converged": result.converged,
        "parameters": {
            **asdict(params),
            "edge_weights": "uniform" if params.uniform_weights else "dynamic",
        },
        "flat_share": shares,
        "top_entities": {
            graph.entity_names[int(subgraph.entities[i])]: round(float(entity_scores[i]), 6)
            for i in best_entities
        },
        "top_facts": {
            graph.linearized(int(subgraph.facts[i])): round(float(fact_scores[i]), 6)
            for i in best_facts
        },
    }


def _best_nodes(subgraph: QuerySubgraph, scores: np.ndarray) -> list[tuple[int, float]]:
    """The structural and phrase nodes of most DW-PR mass: (structure node, mass)."""
    at = len(scores) - len(subgraph.nodes)
    node_scores = scores[at:]
    best = np.argsort(-node_scores, kind="stable")[:TOP_NODES_EXPLAINED]
    return [(int(subgraph.nodes[i]), float(node_scores[i])) for i in best]
