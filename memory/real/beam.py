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

Several roots' searches run together a depth at a time (`beam_searches`): the same
searches, with what a depth's beams need read at once (`prepare`) and, given `HopSteps`,
candidates kept as (parent, hop) pairs and scored a depth at once (`_level_hops`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from memory.real.paths import (
    Hop,
    Path,
    Scores,
    best_first,
    extended_text,
    path_score,
    scored_values,
)

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
    scored = [(p, path_score(p, s)) for p, s in pool.items()]
    return [p for p, _ in best_first(scored, itemgetter(1), lambda x: x[0].text)[:k]]


def beam_search(
    root: Path, expand: Expander, repair: Expander, evaluate: Evaluate, params: BeamParams
) -> SearchResult:
    """P_final of one root (Algorithm 1's inner loops), with its scores and trace."""
    return beam_searches([root], expand, repair, evaluate, params)[0]


@dataclass(frozen=True)
class HopSteps:
    """The search's steps a hop at a time, for a search that builds the paths it keeps
    only: `expand` and `repair` give the hops the path-level ones extend the path by (in
    their order), `score` the scores of the paths extended by each hop with a state, for
    several paths' hops at once, and `adopt` keeps that state on the path once built
    (`EmbeddingEvaluator.score_many`, `adopt`). Of ~650 candidate paths a query at 100k
    facts, ~100 become beams."""

    expand: Callable[[list[Path]], list[list[Hop]]]
    """Per path, the hops of its expansions (for several paths at once)."""
    repair: Callable[[Path], list[Hop]]
    score: Callable[[Sequence[tuple[Path, Sequence[Hop]]]], list[list[Scored]]]
    """Per (parent, hops), per hop: the S_QR, S_LC, S_AS of the parent extended by it and
    a state."""
    adopt: Callable[[Path, Scored], Scores]
    """Keep a scored hop's state on the path built with it; its scores."""


def beam_searches(
    roots: Sequence[Path],
    expand: Expander,
    repair: Expander,
    evaluate: Evaluate,
    params: BeamParams,
    prepare: Callable[[list[Path]], None] | None = None,
    steps: HopSteps | None = None,
) -> list[SearchResult]:
    """`beam_search` of every root, run level by level together: at each depth every
    root's beams are expanded before any root's next ones, and `prepare` (when given) is
    first told all the beams about to be expanded, so that what their ends need is read
    at once (`SearchSpace.prepare`: one read of their edge vectors, where the searches
    one after the other read each end's alone). The searches share nothing else: each
    root's result is the one its own `beam_search` gives. With `steps` (the same search
    a hop at a time), candidates stay (parent, hop) pairs until kept as beams: the same
    pool in the same order, ranked by the same scores and texts (`_level_hops`)."""
    searches = [_Search(root) for root in roots]
    for depth in range(params.max_depth):
        active = [search for search in searches if not search.done]
        if not active:
            break
        if prepare is not None:
            prepare([path for search in active for path in search.beams])
        if steps is None:
            for search in active:
                search.level(depth, expand, repair, evaluate, params)
        else:
            _level_hops(active, depth, steps, evaluate, params)
    results = []
    for search in searches:
        for path in search.beams:
            search.final.setdefault(path, search.pool[path])
        results.append(SearchResult(search.final, search.trace))
    return results


class _Search:
    """One root's search in progress (Algorithm 1's state between two depths)."""

    def __init__(self, root: Path) -> None:
        self.trace = SearchTrace(visited={root.root})
        self.final: dict[Path, Scores] = {}
        self.beams = [root]
        self.pool: dict[Path, Scores] = {}
        self.done = False

    def level(
        self, depth: int, expand: Expander, repair: Expander, evaluate: Evaluate, params: BeamParams
    ) -> None:
        """Expand every beam once (one hop deeper); `done` once the search ends."""
        trace, final = self.trace, self.final
        pool: dict[Path, Scores] = {}
        self.pool = pool
        every_beam_stopped = True
        delta_qr, delta_lc = params.delta_qr, params.delta_lc
        for path in self.beams:
            candidates = expand(path)[: params.m]
            scores = evaluate([path, *candidates])
            own, expanded = scores[0], scores[1:]
            trace.beams += 1
            trace.evaluator_calls += 1
            trace.visited.update([p.end for p in candidates])
            best, reasons, reliable = _counterfactual(
                [(s.relevance, s.coherence, s.sufficiency) for s in expanded], delta_qr, delta_lc
            )
            if reasons:
                trace.counterfactual_triggers += 1
                trace.reasons.update(reasons)
                budget = max(0, params.m - reliable)
                _merge_repairs(path, repair, evaluate, budget, pool, trace)
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
            self.beams = []
            self.done = True
            return
        self.beams = top_k(pool, params.k)
        if every_beam_stopped:
            self.done = True


def _counterfactual(
    scores: list[tuple[float, float, float]], delta_qr: float, delta_lc: float
) -> tuple[float, list[str], int]:
    """(best S_AS, counterfactual reasons, reliable candidates) of a beam's expansions,
    given as (S_QR, S_LC, S_AS) in one pass: the reasons are "no_candidates", or
    "low_relevance" / "low_coherence" where no candidate reaches delta_qr / delta_lc; a
    reliable candidate reaches both (the repair budget is m less their count)."""
    best = relevance = coherence = float("-inf")
    reliable = 0
    for r, c, a in scores:  # the maxima as `max` finds them
        if a > best:
            best = a
        if r > relevance:
            relevance = r
        if c > coherence:
            coherence = c
        reliable += r >= delta_qr and c >= delta_lc
    if not scores:
        return best, ["no_candidates"], reliable
    reasons = ["low_relevance"] if relevance < delta_qr else []
    if coherence < delta_lc:
        reasons.append("low_coherence")
    return best, reasons, reliable


Scored = tuple[float, float, float, Any]
"""(S_QR, S_LC, S_AS, state) of a hop (`HopSteps.score`)."""
Entry = tuple[float, Path, Hop, Scored]
"""A candidate of `_level_hops`: (S(P|q), parent, hop, its scores)."""


def _level_hops(
    searches: list[_Search], depth: int, steps: HopSteps, evaluate: Evaluate, params: BeamParams
) -> None:
    """`_Search.level` of every search, with candidates as (parent, hop) entries (`Entry`),
    in phases over all their beams: every beam's hops, all of them scored together, every
    repair needed, all of those scored together; then each search takes its beams in
    order as `level` does (repairs merged, then expansions pooled), so every pool, trace
    and final path is `level`'s. A pool is a list (a level's candidates are distinct
    paths: each beam's hops are distinct edges, and beams differ), ranked as `top_k`
    ranks the dict, and only the k kept are built as paths."""
    jobs = [(search, path) for search in searches for path in search.beams]
    owns = [evaluate([path])[0] for _, path in jobs]
    expansions = [hops[: params.m] for hops in steps.expand([path for _, path in jobs])]
    expanded = steps.score([(path, hops) for (_, path), hops in zip(jobs, expansions, strict=True)])
    delta_qr, delta_lc = params.delta_qr, params.delta_lc
    plans = []
    for scores in expanded:
        best, reasons, reliable = _counterfactual(
            [(r, c, a) for r, c, a, _ in scores], delta_qr, delta_lc
        )
        budget = max(0, params.m - reliable) if reasons else 0
        plans.append((best, reasons, budget))
    repairs = {j: steps.repair(path) for j, (_, path) in enumerate(jobs) if plans[j][2] > 0}
    repaired = [j for j, hops in repairs.items() if hops]
    recovered = dict(
        zip(repaired, steps.score([(jobs[j][1], repairs[j]) for j in repaired]), strict=True)
    )
    pools: dict[int, list[Entry]] = {id(search): [] for search in searches}
    stopped = {id(search): True for search in searches}
    for j, (search, path) in enumerate(jobs):
        trace, pool = search.trace, pools[id(search)]
        hops, scores, own = expansions[j], expanded[j], owns[j]
        best, reasons, budget = plans[j]
        trace.beams += 1
        trace.evaluator_calls += 1
        trace.visited.update([hop.target for hop in hops])
        if reasons:
            trace.counterfactual_triggers += 1
            trace.reasons.update(reasons)
            if j in recovered:
                _merge_entries(path, repairs[j], recovered[j], budget, pool, trace)
        if own.sufficiency >= best:
            if path.hops:
                search.final[path] = own
            continue
        stopped[id(search)] = False
        confidence, floor = path.confidence, own.sufficiency
        for hop, score in zip(hops, scores, strict=True):
            if score[2] > floor:
                value = scored_values(score[0], score[1], score[2], confidence * hop.confidence)
                pool.append((value, path, hop, score))
    for search in searches:
        pool = pools[id(search)]
        search.trace.depth = depth + 1
        if not pool:
            search.beams = []
            search.done = True
            continue
        search.beams, search.pool = [], {}
        for _, parent, hop, score in best_first(pool, itemgetter(0), _entry_text)[: params.k]:
            beam = parent.extend(hop)
            search.pool[beam] = steps.adopt(beam, score)
            search.beams.append(beam)
        if stopped[id(search)]:
            search.done = True


def _entry_text(entry: Entry) -> str:
    return extended_text(entry[1], entry[2])


def _merge_entries(
    path: Path,
    hops: list[Hop],
    recovered: list[Scored],
    budget: int,
    pool: list[Entry],
    trace: SearchTrace,
) -> None:
    """`_merge_repairs` of the recovered hops of `path` and their scores (`_level_hops`)."""
    trace.evaluator_calls += 1
    confidence = path.confidence
    ranked = best_first(
        [
            (scored_values(s[0], s[1], s[2], confidence * hop.confidence), path, hop, s)
            for hop, s in zip(hops, recovered, strict=True)
        ],
        itemgetter(0),
        _entry_text,
    )
    for entry in ranked[:budget]:
        pool.append(entry)
        hop = entry[2]
        trace.visited.add(hop.target)
        trace.repairs[hop.repair or "none"] += 1


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
    ranked = best_first(
        [(p, s, path_score(p, s)) for p, s in zip(recovered, scores, strict=True)],
        itemgetter(2),
        lambda x: x[0].text,
    )
    for candidate, score, _ in ranked[:budget]:
        pool[candidate] = score
        trace.visited.add(candidate.end)
        trace.repairs[candidate.hops[-1].repair or "none"] += 1
