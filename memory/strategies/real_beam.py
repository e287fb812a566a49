"""REAL retrieval (`real_beam`, papers/real.md §4): anchor root entities with intents, run
one semantic-evaluator-guided hybrid beam search per root over the facts that pass the
temporal, stability and intent filters, repair starved beams by counterfactual templates
within the budget B_cf, aggregate the final paths into evidence and rank the segments
behind it.

The graph (REAL's LLM-built memory graph, made of LLM-free stand-ins): REAL's entities E
are the passage graph's nodes (entities, and topic/title, phrase, session, speaker and day
nodes); its edges are the typed facts (sextuples with validity and confidence) and the
untyped relations of `memory.real.links`: `mentioned_with` between two nodes one segment
names (evidence: that segment; an entity and the title node of a passage that names it
is MuSiQue's two-hop bridge), `next_turn` between nodes of consecutive turns (evidence:
both turns), weighted by the geometric mean of the two ends' specificities (1 / #segments);
hubs (`passage_links.HUB_SEGMENTS`) leave only through the flat prior's pool. Roots: the
named entities, the flat prior's seed entities and its `SEED_NODES` seed nodes
(`passage_links.seed_nodes`), and the topic/phrase nodes the query names where it names
no linkable entity. The beam search (k, D_max, m, the filters, the evaluator, the
repairs) is the paper's, unchanged. Where the paper is silent (how evidence ranks
passages, and any prior): an evidence path weighs S(P|q) times its root's weight, the
prior mass its root carries (`_root_weights`: the seed mass of its node plus a floor), so
a path from a node only the flat ranking's top passages name (the bridge to a two-hop
question's second passage) counts most; the evidence paths' segments (each hop's
evidence, each node's segments at `MENTION_WEIGHT`) score the sum of the weights of the
paths crediting them (`memory.real.evidence`); the first `CANDIDATES` by score are
blended by its log with the flat `hybrid` ranking (`memory.traversal.blended`, the flat
share per corpus kind pinned by the snapshot).

Pieces: `memory.real.anchors` (roots and intents), `memory.real.space` (filters, TopM),
`memory.real.beam` (Algorithm 1), `memory.real.evaluator` (S_QR, S_LC, S_AS),
`memory.real.repair` (Table I templates), `memory.real.evidence` (aggregation, segments).

How it runs (issue 35's latency, the same results bit for bit): the roots' searches go a
depth at a time together (`beam.beam_searches`); before each depth, what the beams' ends
need and no earlier query read is read for all of them at once (edges and their
filters, link tables, co-occurring entities, edge vector blocks: `SearchSpace.prepare`,
`Repairer.prepare`); with the embedding evaluator, candidates stay (parent, hop) pairs,
a depth's hops are scored in one pass (`EmbeddingEvaluator.score_many`) and only the
beams kept are built as paths (`beam.HopSteps`). At 100k facts, 30 queries, query vectors
prefilled, one BLAS thread: ~41 ms a query before, ~22 ms after (`real_beam` alone;
the flat prior is ~3 ms of both). Like every query, it runs on one OpenBLAS thread
(`Memory.query`, `transforms.cpu_lanes`): the TopM products of a hub's ~1,600
co-occurring and edge rows are large enough (from ~1,200 rows of 384) for OpenBLAS to
hand half to a second thread, whose wake-up on a busy core cost more than the product (at
100k facts, no second encoder, 30 queries: 39.4 ms a query with the pool, 33.2 ms on one
thread).

Options (`QueryContext.options`), paper defaults in brackets:
- `beam_width` (k = 5), `max_depth` (D_max = 3 hops), `expansions` (m = 5),
  `delta_qr` / `delta_lc` (0.5 each);
- `evaluator`: "embedding" (default) or "llm"; for "llm": `llm_backend` ("openai",
  "llama_cpp", "transformers"; else $KGMEM_LLM_BACKEND), `llm_model`, `llm_base_url`,
  `llm_response_format`, `llm_timeout_s` (60), `llm_max_attempts` (2), `llm_cache`
  (else $KGMEM_LLM_CACHE, else the workspace's `llm_cache.duckdb`);
- `repairs`: the counterfactual templates enabled (all of `repair.TEMPLATES`; [] for
  none);
- `seed_nodes` (`SEED_NODES`), `flat_share` (the blend's, per `transforms.traversal_blend`);
- `untyped_links`: "on" (default) or "off", the typed facts alone (no passage links, no
  seed nodes as roots): what the untyped relations add, and the graph the repairs'
  tests read.
θ_stable is `memory.facts.THETA_STABLE` (0.8), the threshold the fact store applies.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from memory.flat_prior import flat_prior, kept_per_query
from memory.passage_links import passage_links, seed_nodes
from memory.real.anchors import anchor
from memory.real.beam import BeamParams, HopSteps, SearchTrace, beam_searches
from memory.real.evaluator import EmbeddingEvaluator, LLMEvaluator, evaluator_for
from memory.real.evidence import aggregate, rank_segments
from memory.real.intents import expected_answer_type, query_intent
from memory.real.paths import Path, Scores
from memory.real.repair import CO_OCCURRENCE, TEMPLATES, Repairer
from memory.real.space import SearchSpace
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.traversal import blended

MAX_EXPLAINED_PATHS = 10
SEED_NODES = 5
"""Passage nodes of the flat ranking's top segments that root searches too
(`passage_links.seed_nodes`; option `seed_nodes`). LoCoMo dev, first 300 questions, turn
R@10 at flat share 0.5 with 0 / 5 / 10 seed nodes: 69.6 / 72.7 / 69.8 (hybrid 65.9); each
seed is one more beam search (p50 ~39 ms at 0, ~103 ms at 10 on the loaded dev machine)."""
ROOT_FLOOR = 0.1
"""A root's weight beyond its seed mass, as a share of the heaviest seed node's. MuSiQue
dev R@5 at flat share 0.5 with evidence summed per segment: unweighted roots 72.4; floor
0 / 0.1 / 0.5: 73.1 / 74.0 / 71.9; LoCoMo dev (first 400) turn R@10 at 0.5: 0 / 0.1:
74.3 / 75.0 (unweighted, best credit per segment: 73.1)."""
CANDIDATES = 200
"""Segments of the evidence (by their best credit) blended with the flat ranking."""


def beam_params(options: dict[str, Any]) -> BeamParams:
    defaults = BeamParams()
    return BeamParams(
        k=int(options.get("beam_width", defaults.k)),
        max_depth=int(options.get("max_depth", defaults.max_depth)),
        m=int(options.get("expansions", defaults.m)),
        delta_qr=float(options.get("delta_qr", defaults.delta_qr)),
        delta_lc=float(options.get("delta_lc", defaults.delta_lc)),
    )


def real_beam(view: SnapshotView, query: QueryContext) -> Ranking:
    """The search's ranking cut at k, its paths for those segments; the search itself is
    kept per query (`kept_per_query`): `Memory.query` asks again with 2k when k segments
    fill fewer than k passages, and every root's beam search ran again for it (at 100k
    facts, 15 beam searches a query instead of 8: p50 75 ms against 45)."""
    ranked, found, explanation = kept_per_query(
        view, "real_beam", query, lambda: _search(view, query)
    )
    scored = [(segment, round(score, 6)) for segment, score in ranked[: query.k]]
    paths = {segment: found[segment] for segment, _ in scored if segment in found}
    return Ranking(scored, explanation, paths)


def _search(
    view: SnapshotView, query: QueryContext
) -> tuple[list[tuple[str, float]], dict[str, Any], dict[str, Any]]:
    """Every root's beam search, the evidence ranked and blended with the prior: (the
    blended ranking, the linearized paths per segment, the explanation)."""
    options = dict(query.options)
    params = beam_params(options)
    prior = flat_prior(view, query)
    untyped = str(options.get("untyped_links", "on")).lower()
    if untyped not in ("on", "off"):
        raise ValueError(f"option untyped_links must be 'on' or 'off', got {untyped!r}")
    links = passage_links(view) if untyped == "on" else None
    focus, seeded, masses = None, [], {}
    if links is not None:
        focus = np.zeros(links.n_segments, bool)
        focus[[view.segment_index[s] for s, _ in prior.fused]] = True
        masses = dict(seed_nodes(view, links, prior))
        seeded = list(masses.items())[: int(options.get("seed_nodes", SEED_NODES))]
    space = SearchSpace.of(view, query, params.m, links, focus)
    anchors = anchor(view, space.graph, query.text, prior.seed_entities(view), links, seeded)
    expected = expected_answer_type(query.text)
    evaluator = evaluator_for(view, query.text, options, space.query_vector, expected)
    repairer = Repairer(space, options.get("repairs", TEMPLATES))
    final: dict[Path, Scores] = {}
    traces: list[SearchTrace] = []
    steps = None
    if isinstance(evaluator, EmbeddingEvaluator):  # paths built only for the beams kept
        steps = HopSteps(space.expand_many, repairer.hops, evaluator.score_many, evaluator.adopt)
    co_occurring = CO_OCCURRENCE in repairer.templates

    def prepare(paths: list[Path]) -> None:
        space.prepare(paths, co_occurring)
        repairer.prepare(paths)

    results = beam_searches(
        [Path(root.entity, root.name, root.intent) for root in anchors],
        space.expand,
        repairer,
        evaluator.score,
        params,
        prepare,
        steps,
    )
    for result in results:
        final.update(result.final)
        traces.append(result.trace)
    evidence = aggregate(final, _root_weights(space, masses) if links is not None else None)
    walked, paths = rank_segments(space.graph, evidence, CANDIDATES, links)
    logs = [(segment, math.log(score)) for segment, score in walked if score > 0]
    ranked, shares = blended(view, query, prior, logs, "real_beam")
    explanation: dict[str, Any] = {
        "strategy": "real_beam",
        "params": {
            "beam_width": params.k,
            "max_depth": params.max_depth,
            "expansions": params.m,
            "theta_stable": space.theta_stable,
            "delta_qr": params.delta_qr,
            "delta_lc": params.delta_lc,
        },
        "reference_time": space.reference_time.isoformat(),
        "query_intent": query_intent(query.text),
        "expected_answer_type": expected,
        "seeds": [a.as_dict() for a in anchors],
        "flat": prior.summary(),
        "flat_share": shares,
        "evaluator": "llm" if isinstance(evaluator, LLMEvaluator) else "embedding",
        "paths": [
            {
                "root": item.path.root_name,
                "intent": item.path.intent,
                "path": item.path.text,
                "evidence": item.path.serialized(),
                "scores": item.scores.as_dict(),
                "score": round(item.score, 6),
                "repairs": item.path.repairs,
            }
            for item in evidence[:MAX_EXPLAINED_PATHS]
        ],
        **_search_summary(traces),
    }
    if isinstance(evaluator, LLMEvaluator):
        stats = evaluator.stats
        explanation |= {
            "llm_calls": stats.llm_calls,
            "llm_tokens": stats.prompt_tokens + stats.completion_tokens,
            "llm_cache_hits": stats.cache_hits,
            "llm_failures": evaluator.failures,
        }
    return ranked, paths, explanation


def _root_weights(space: SearchSpace, masses: dict[int, float]) -> Callable[[int], float]:
    """A root's weight: the seed mass of its passage node (the prior mass of the top
    segments naming it times its specificity, `passage_links.seed_nodes`) plus
    `ROOT_FLOOR` times the heaviest node's, so a root no top segment names still counts."""
    floor = ROOT_FLOOR * max(masses.values(), default=1.0)
    return lambda root: masses.get(space.node_of(root), 0.0) + floor


def _search_summary(traces: list[SearchTrace]) -> dict[str, Any]:
    """The per-root traces summed: beams, evaluator calls, repairs and why they fired."""
    reasons: Counter[str] = Counter()
    repairs: Counter[str] = Counter()
    for trace in traces:
        reasons.update(trace.reasons)
        repairs.update(trace.repairs)
    beams = sum(t.beams for t in traces)
    triggers = sum(t.counterfactual_triggers for t in traces)
    return {
        "beams": beams,
        "evaluator_calls": sum(t.evaluator_calls for t in traces),
        "visited_nodes": len(set().union(*(t.visited for t in traces))) if traces else 0,
        "counterfactual": {
            "triggered": triggers,
            "rate": round(triggers / beams, 4) if beams else 0.0,
            "reasons": dict(sorted(reasons.items())),
            "repairs": dict(sorted(repairs.items())),
        },
    }
