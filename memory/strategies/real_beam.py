"""REAL retrieval (`real_beam`, papers/real.md §4): anchor root entities with intents, run
one semantic-evaluator-guided hybrid beam search per root over the facts that pass the
temporal, stability and intent filters, repair starved beams by counterfactual templates
within the budget B_cf, aggregate the final paths into evidence and rank the segments
behind it.

Pieces: `memory.real.anchors` (roots and intents), `memory.real.space` (filters, TopM),
`memory.real.beam` (Algorithm 1), `memory.real.evaluator` (S_QR, S_LC, S_AS),
`memory.real.repair` (Table I templates), `memory.real.evidence` (aggregation, segments).

Options (`QueryContext.options`), paper defaults in brackets:
- `beam_width` (k = 5), `max_depth` (D_max = 3 hops), `expansions` (m = 5),
  `delta_qr` / `delta_lc` (0.5 each);
- `evaluator`: "embedding" (default) or "llm"; for "llm": `llm_backend` ("openai",
  "llama_cpp", "transformers"; else $KGMEM_LLM_BACKEND), `llm_model`, `llm_base_url`,
  `llm_response_format`, `llm_timeout_s` (60), `llm_max_attempts` (2), `llm_cache`
  (else $KGMEM_LLM_CACHE, else the workspace's `llm_cache.duckdb`);
- `repairs`: the counterfactual templates enabled (all of `repair.TEMPLATES`; [] for
  none).
θ_stable is `memory.facts.THETA_STABLE` (0.8), the threshold the fact store applies.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memory.flat_prior import flat_prior, with_graph_bonus
from memory.real.anchors import anchor
from memory.real.beam import BeamParams, SearchTrace, beam_search
from memory.real.evaluator import LLMEvaluator, evaluator_for
from memory.real.evidence import aggregate, rank_segments
from memory.real.intents import expected_answer_type, query_intent
from memory.real.paths import Path, Scores
from memory.real.repair import TEMPLATES, Repairer
from memory.real.space import SearchSpace
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking

MAX_EXPLAINED_PATHS = 10


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
    options = dict(query.options)
    params = beam_params(options)
    space = SearchSpace.of(view, query, params.m)
    prior = flat_prior(view, query)
    anchors = anchor(view, space.graph, query.text, prior.seed_entities(view))
    expected = expected_answer_type(query.text)
    evaluator = evaluator_for(view, query.text, options, space.query_vector, expected)
    repairer = Repairer(space, options.get("repairs", TEMPLATES))
    final: dict[Path, Scores] = {}
    traces: list[SearchTrace] = []
    for root in anchors:
        result = beam_search(
            Path(root.entity, root.name, root.intent),
            space.expand,
            repairer,
            evaluator.score,
            params,
        )
        final.update(result.final)
        traces.append(result.trace)
    evidence = aggregate(final)
    scored, paths = rank_segments(space.graph, evidence, query.k)
    scored = with_graph_bonus(prior, scored)[: query.k]
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
    return Ranking(scored, explanation, paths)


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
