"""REAL's semantic-evaluator-guided hybrid beam search from one root (Algorithm 1), as a
pure function of three callables, so it runs the same on the memory graph and on a toy.

Per step t < D_max, every beam path P:
1. `expand(P)`: the filtered, TopM-pre-ranked normal candidates N_cand (at most m);
2. one evaluator call scores P and its expansions P' (S_QR, S_LC, S_AS);
3. NeedCounterfactual — N_cand empty, max S_QR(P') < δ_QR or max S_LC(P') < δ_LC — runs
   `repair(P)` (constrained traversals from the rule templates); the recovered paths are
   scored (a second call) and the top B_cf = max(0, m − |N_rel|) by S(P|q) join the pool,
   N_rel being the expansions with S_QR ≥ δ_QR and S_LC ≥ δ_LC (§III-D);
4. Stop if S_AS(P) ≥ max S_AS(P') (P goes to P_final; an empty P' counts as −∞), else the
   expansions with S_AS(p) > S_AS(P) join the pool.
The pool is pruned to the k best by S(P|q) (`path_score`); the search ends when the pool
is empty, every beam stopped, or D_max hops were taken.

Gaps of Algorithm 1 closed here (papers/real.md §4.7): beams still active when the search
ends (D_max reached, or only counterfactual paths left after every beam stopped) are
flushed into P_final; a root that stops before its first hop contributes no evidence (a
bare entity carries no fact to serialize); paths are simple (no entity twice), which the
expander and repairer guarantee.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memory.real.paths import Path, Scores, path_score

Expander = Callable[[Path], list[Path]]
Evaluate = Callable[[Sequence[Path]], list[Scores]]


@dataclass(frozen=True)
class BeamParams:
    """REAL's defaults: beam width k = 5, depth D_max = 3 hops, m = 5 expansions per beam,
    δ_QR = δ_LC = 0.5 (Tables IV and §III-D)."""

    k: int = 5
    max_depth: int = 3
    m: int = 5
    delta_qr: float = 0.5
    delta_lc: float = 0.5


@dataclass
class SearchTrace:
    """What one root's search did, for the explanation (the paper's efficiency metrics)."""

    beams: int = 0
    evaluator_calls: int = 0
    counterfactual_triggers: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    repairs: Counter[str] = field(default_factory=Counter)
    """Per template, the recovered paths merged into the pool (within the budget)."""
    visited: set[int] = field(default_factory=set)
    depth: int = 0


@dataclass
class SearchResult:
    final: dict[Path, Scores]
    trace: SearchTrace


def counterfactual_reasons(scores: Sequence[Scores], params: BeamParams) -> list[str]:
    """NeedCounterfactual(P', P): why the normal expansion of a beam is unreliable."""
    if not scores:
        return ["no_candidates"]
    reasons = []
    if max(s.relevance for s in scores) < params.delta_qr:
        reasons.append("low_relevance")
    if max(s.coherence for s in scores) < params.delta_lc:
        reasons.append("low_coherence")
    return reasons


def repair_budget(scores: Sequence[Scores], params: BeamParams) -> int:
    """B_cf = max(0, m − |N_rel|)."""
    reliable = sum(
        s.relevance >= params.delta_qr and s.coherence >= params.delta_lc for s in scores
    )
    return max(0, params.m - reliable)


def top_k(pool: dict[Path, Scores], k: int) -> list[Path]:
    """The k best paths by S(P|q); ties broken by path text, so the search is deterministic."""
    return sorted(pool, key=lambda p: (-path_score(p, pool[p]), p.text))[:k]


def beam_search(
    root: Path, expand: Expander, repair: Expander, evaluate: Evaluate, params: BeamParams
) -> SearchResult:
    """P_final of one root (Algorithm 1's inner loops), with its scores and trace."""
    trace = SearchTrace(visited={root.root})
    final: dict[Path, Scores] = {}
    beams, pool = [root], {}
    for depth in range(params.max_depth):
        pool = {}
        every_beam_stopped = True
        for path in beams:
            candidates = expand(path)[: params.m]
            scores = evaluate([path, *candidates])
            own, expanded = scores[0], scores[1:]
            trace.beams += 1
            trace.evaluator_calls += 1
            trace.visited.update(p.end for p in candidates)
            reasons = counterfactual_reasons(expanded, params)
            if reasons:
                trace.counterfactual_triggers += 1
                trace.reasons.update(reasons)
                _merge_repairs(path, repair, evaluate, repair_budget(expanded, params), pool, trace)
            best = max((s.sufficiency for s in expanded), default=float("-inf"))
            if own.sufficiency >= best:
                if path.hops:
                    final[path] = own
                continue
            every_beam_stopped = False
            for candidate, score in zip(candidates, expanded, strict=True):
                if score.sufficiency > own.sufficiency:
                    pool[candidate] = score
        trace.depth = depth + 1
        if not pool:
            beams = []
            break
        beams = top_k(pool, params.k)
        if every_beam_stopped:
            break
    for path in beams:
        final.setdefault(path, pool[path])
    return SearchResult(final, trace)


def _merge_repairs(
    path: Path,
    repair: Expander,
    evaluate: Evaluate,
    budget: int,
    pool: dict[Path, Scores],
    trace: SearchTrace,
) -> None:
    """Score the counterfactual paths of `path` and merge the best `budget` of them."""
    if budget <= 0:
        return
    recovered = repair(path)
    if not recovered:
        return
    scores = evaluate(recovered)
    trace.evaluator_calls += 1
    ranked = sorted(
        zip(recovered, scores, strict=True), key=lambda ps: (-path_score(*ps), ps[0].text)
    )
    for candidate, score in ranked[:budget]:
        pool[candidate] = score
        trace.visited.add(candidate.end)
        trace.repairs[candidate.hops[-1].repair or "none"] += 1
