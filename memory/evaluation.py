"""Running retrieval benchmarks against a snapshot through the `Memory` API.

The evaluation assets and `kgmem eval` call these, so a figure in the UI and one printed by
the CLI come from the same code.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.facts import is_speculative
from memory.flat_prior import flat_prior
from memory.memory import Memory, QueryResult
from memory.reranker import RERANK_DEPTH
from memory.snapshot_view import QueryContext
from memory.strategies.registry import GRAPH_STRATEGIES, STRATEGIES
from memory.traversal import ABLATION_SUFFIX, TRAVERSAL_OPTION
from transforms.evaluation.retrieval_metrics import (
    distinct,
    grouped_means,
    mean,
    percentile,
    recall_at_k,
    reciprocal_rank,
)
from transforms.evaluation.retrieval_questions import QuestionSet, RetrievalQuestion
from transforms.evaluation.timeqa import TimeQaSet, hit_at_k
from transforms.progress import Counter


@functools.cache
def ranking_code_digest() -> str:
    """Digest of the source that ranks and scores: the query package and `transforms/`
    (strategies, encoders, metrics, question loading). An evaluation's fingerprint includes
    it, so that after a code change a snapshot is evaluated again instead of being reported
    from the rows the previous code stored."""
    import memory
    import transforms

    return source_digest(*(Path(p.__file__).parent for p in (memory, transforms)))


def source_digest(*roots: Path) -> str:
    """sha256 over every `.py` file under `roots`: each file's path (from its root's
    parent) and bytes, in sorted order."""
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def temporal_hits(
    memory: Memory, dataset: TimeQaSet, strategies: Sequence[str], ks: Sequence[int] = (1, 3, 5)
) -> list[dict[str, object]]:
    """hit@k per strategy, with the question's reference time and ignoring it, as rows
    (strategy, metric, value)."""
    rows: list[dict[str, object]] = []
    for strategy in strategies:

        def retrieve(
            text: str, k: int, valid_at: datetime | None, strategy: str = strategy
        ) -> list[str]:
            result = memory.query(text, strategy=strategy, k=k, valid_at=valid_at)
            return [hit.provenance["title"] for hit in result]

        for mode, by_k in hit_at_k(dataset.questions, retrieve, ks).items():
            rows.extend(
                {"strategy": strategy, "metric": f"hit@{k}_{mode}", "value": value}
                for k, value in by_k.items()
            )
    return rows


RETRIEVAL_KS = {"musique": (2, 5), "locomo": (3, 5, 10)}
"""The recall cut-offs of each retrieval benchmark (HippoRAG Table 2; MemORAI Tables 2-3)."""
PASSAGE_DEPTH = 10
"""MuSiQue: passages asked for per question (`Memory.query` returns distinct passages, a
passage's chunks collapsed into its best one); MRR counts ranks within this depth."""


RERANKED = "+rerank"
"""Suffix of a strategy's reranked variant (`hipporag_ppr+rerank`): the strategy's passages
with the first `rerank_depth` put in a cross-encoder's order (`Memory.query(reranker=...)`)."""
RERANKED_BY_DEFAULT = ("hipporag_ppr",)
"""Strategies whose reranked variant is evaluated when a reranker is given and no variant
is named: the best graph strategy on both dev sets."""


@dataclass(frozen=True)
class Reranking:
    """The cross-encoder of the reranked variants, and how many passages it reorders."""

    model: str
    depth: int = RERANK_DEPTH


def split_variant(name: str) -> tuple[str, bool]:
    """(strategy, reranked) of an evaluated name: `hipporag_ppr+rerank` -> (hipporag_ppr, True)."""
    if name.endswith(RERANKED):
        return name[: -len(RERANKED)], True
    return name, False


def split_ablation(name: str) -> tuple[str, dict[str, str]]:
    """(strategy, query options) of an evaluated name: `memorai_dwpr:no_traversal` ->
    (memorai_dwpr, {"traversal": "off"}), the strategy with its traversal switched off."""
    if name.endswith(ABLATION_SUFFIX):
        return name[: -len(ABLATION_SUFFIX)], {TRAVERSAL_OPTION: "off"}
    return name, {}


def base_strategy(name: str) -> str:
    """The registered strategy an evaluated name runs (`real_beam:no_traversal+rerank` ->
    `real_beam`)."""
    return split_ablation(split_variant(name)[0])[0]


def evaluated_names(strategies: Sequence[str]) -> list[str]:
    """What an evaluation runs: the strategies named, or every strategy and, after them,
    each graph strategy with its traversal off (`NAME:no_traversal`, the ablation row
    whose difference to NAME is what its traversal adds)."""
    if strategies:
        return list(strategies)
    return [*STRATEGIES, *(f"{name}{ABLATION_SUFFIX}" for name in GRAPH_STRATEGIES)]


@dataclass
class RetrievalRun:
    """Rows (strategy, metric, value) of a retrieval evaluation, and strategies that failed."""

    rows: list[dict[str, object]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    traces: dict[str, list[QuestionTrace]] = field(default_factory=dict)
    """Per strategy, per question (in order): what it ranked and why (for `misses`)."""


@dataclass(frozen=True)
class QuestionTrace:
    """One strategy's answer to one question: its ranked units (passage doc ids or turn
    segment ids, as scored), the paths of its hits and its explanation."""

    units: list[str]
    paths: dict[str, list[str]]
    explanation: dict[str, Any]


PREFILL_BLOCK = 256
"""Questions encoded ahead at a time (`SnapshotView.prefill_queries`), in batches."""


def retrieval_scores(
    memory: Memory,
    questions: QuestionSet,
    strategies: Sequence[str],
    reranking: Reranking | None = None,
    options: Mapping[str, Any] | None = None,
    session_unit: bool = True,
    progress: Path | None = None,
    jobs: int = 1,
) -> RetrievalRun:
    """Recall (and MuSiQue's MRR) per strategy, overall and per question category, with the
    query latency p50/p95 in ms and LLM calls and tokens per query (from the explanation's
    `llm_calls` / `llm_tokens`, 0 when a strategy reports none).

    LoCoMo questions are scoped to their conversation: the strategy ranks
    max(k) x (conversations in the collection) segments, the hits of the question's
    conversation are kept, and the first max(k) are its turn ranking (its session ranking:
    their distinct sessions). A strategy that raises is reported in `errors`, not scored.
    A reranked variant (`split_variant`) needs `reranking`: without it, it is an error.
    `options` go to every strategy's queries (a `NAME:no_traversal` row adds
    traversal=off). LoCoMo questions are asked a second time with sessions as the unit
    (`session_unit_recall@k`) unless `session_unit` is False.

    The work the strategies share is done once per question (issue 37): the questions
    are encoded ahead, `PREFILL_BLOCK` at a time in batches, by each encoder of the
    snapshot, and each question is asked of every strategy in turn, after the `hybrid`
    prior that the graph strategies (and `hybrid`) start from was computed for it; they
    find it, and the query's vectors, in the view's caches. The prior's time is added to
    the latency of each strategy that starts from it, so a latency stays what the query
    alone costs, less its encoding. The figures are those of one strategy at a time.
    `progress`: a progress file (`transforms.progress`) that counts the (strategy,
    question) pairs done. `jobs` > 1: the strategies are split over that many processes
    (`evaluation_jobs`), each opening the snapshot itself."""
    if jobs > 1 and len(strategies) > 1:
        from memory.evaluation_jobs import scores_in_processes

        return scores_in_processes(
            memory, questions, strategies, reranking, options, session_unit, progress, jobs
        )
    run = RetrievalRun()
    conversations = conversation_count(memory) if questions.benchmark == "locomo" else 1
    depth = query_depth(questions.benchmark, conversations)
    plans: dict[str, _Plan] = {}
    for strategy in strategies:
        try:
            plans[strategy] = _plan(strategy, reranking, options or {})
        except Exception as exc:  # one broken strategy must not hide the rest
            run.errors[strategy] = f"{type(exc).__name__}: {exc}"
    tallies = {strategy: _Tally() for strategy in plans}
    counter = Counter(progress) if progress is not None else None
    view = memory._view  # the pinned view of the snapshot
    total = len(questions.questions)
    for first in range(0, total, PREFILL_BLOCK):
        block = questions.questions[first : first + PREFILL_BLOCK]
        view.prefill_queries([question.text for question in block])
        for offset, question in enumerate(block):
            shared = _prior_ms(memory, question.text, depth, options or {}, plans.values())
            for strategy in list(tallies):
                plan = plans[strategy]
                try:
                    tallies[strategy].add(
                        _ask(memory, questions.benchmark, question, plan, depth, session_unit),
                        shared if plan.from_prior else 0.0,
                    )
                except Exception as exc:  # the strategy is reported, the others go on
                    run.errors[strategy] = f"{type(exc).__name__}: {exc}"
                    del tallies[strategy]
                    if counter is not None:  # its questions left count as done
                        counter.count(total - first - offset - 1)
                if counter is not None:
                    counter.count()
    if counter is not None:
        counter.flush()
    for strategy, tally in tallies.items():
        run.rows.extend(tally.rows(strategy, questions))
        run.traces[strategy] = tally.traces
    return run


@dataclass(frozen=True)
class _Plan:
    """How an evaluated name is asked: its strategy, query options and reranking, and
    whether it starts from the `hybrid` prior."""

    base: str
    options: dict[str, Any]
    rerank: dict[str, Any]
    from_prior: bool


def _plan(strategy: str, reranking: Reranking | None, given: Mapping[str, Any]) -> _Plan:
    variant, reranked = split_variant(strategy)
    base, ablation = split_ablation(variant)
    if reranked and reranking is None:
        raise ValueError(f"{strategy} is a reranked variant, and no reranker was given")
    if base not in STRATEGIES:
        raise ValueError(f"unknown strategy {base!r}")
    rerank = {"reranker": reranking.model, "rerank_depth": reranking.depth} if reranked else {}
    from_prior = base == "hybrid" or base in GRAPH_STRATEGIES
    return _Plan(base, {**given, **ablation}, rerank, from_prior)


def _prior_ms(
    memory: Memory, text: str, depth: int, options: Mapping[str, Any], plans: Iterable[_Plan]
) -> float:
    """Compute the question's `hybrid` prior, as the strategies will ask for it, when one
    of `plans` starts from it (into the view's cache of kept rankings); its time in ms."""
    if not any(plan.from_prior and not plan.rerank for plan in plans):
        return 0.0
    started = time.perf_counter()
    context = QueryContext(text, depth, None, is_speculative(text), dict(options), depth)
    flat_prior(memory._view, context)
    return (time.perf_counter() - started) * 1000.0


def _ask(
    memory: Memory,
    benchmark: str,
    question: RetrievalQuestion,
    plan: _Plan,
    depth: int,
    session_unit: bool,
) -> tuple[dict[str, float], float, QueryResult, QuestionTrace]:
    """One strategy's scores of one question, its latency in ms, its result and trace."""
    asked = {"strategy": plan.base, "k": depth, "options": plan.options, **plan.rerank}
    started = time.perf_counter()
    result = memory.query(question.text, **asked)
    latency = (time.perf_counter() - started) * 1000.0
    hits = [h.provenance | {"segment_id": h.segment_id} for h in result.hits]
    scores = question_scores(benchmark, question, hits)
    if benchmark == "locomo" and session_unit:
        sessions = memory.query(question.text, unit="session", **asked)
        units = [h.provenance | {"segment_id": h.segment_id} for h in sessions.hits]
        scores |= session_unit_scores(question, units)
    return scores, latency, result, _trace(benchmark, question, result)


@dataclass
class _Tally:
    """One strategy's answers so far: scores, latencies, LLM use and traces per question."""

    scores: list[dict[str, float]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    calls: list[float] = field(default_factory=list)
    tokens: list[float] = field(default_factory=list)
    traces: list[QuestionTrace] = field(default_factory=list)

    def add(
        self, asked: tuple[dict[str, float], float, QueryResult, QuestionTrace], shared_ms: float
    ) -> None:
        """Add one question's answer (`_ask`), with the shared prior's time in ms."""
        scores, latency, result, trace = asked
        self.scores.append(scores)
        self.latencies.append(latency + shared_ms)
        self.calls.append(float(result.explanation.get("llm_calls", 0) or 0))
        self.tokens.append(float(result.explanation.get("llm_tokens", 0) or 0))
        self.traces.append(trace)

    def rows(self, strategy: str, questions: QuestionSet) -> list[dict[str, object]]:
        """Rows (strategy, metric, value): the means per category and overall, and costs."""
        by_group = grouped_means(self.scores, [q.category for q in questions.questions])
        rows = [
            {
                "strategy": strategy,
                "metric": metric if group == "overall" else f"{metric}[{group}]",
                "value": value,
            }
            for group, values in by_group.items()
            for metric, value in values.items()
        ]
        summary = {
            "questions": float(len(questions.questions)),
            "latency_p50_ms": percentile(self.latencies, 50),
            "latency_p95_ms": percentile(self.latencies, 95),
            "llm_calls_per_query": mean(self.calls),
            "llm_tokens_per_query": mean(self.tokens),
        }
        return rows + [{"strategy": strategy, "metric": m, "value": v} for m, v in summary.items()]


def _trace(benchmark: str, question: RetrievalQuestion, result: QueryResult) -> QuestionTrace:
    units, paths = [], {}
    for hit in result.hits:
        if benchmark == "locomo" and hit.provenance["doc_id"] != question.scope_doc_id:
            continue
        unit = hit.provenance["doc_id"] if benchmark == "musique" else hit.segment_id
        units.append(str(unit))
        if hit.paths:
            paths[str(unit)] = hit.paths
    return QuestionTrace(units, paths, result.explanation)


MISS_DEPTH = {"musique": 5, "locomo": 10}
"""A gold unit counts as missed when it is not among this many units (the headline k)."""
EXPLANATION_KEYS = (
    "seeds",
    "flat",
    "query_links",
    "named_in_query",
    "query_entities",
    "flat_entities",
    "walk_top",
    "top_paths",
    "weights",
)


def misses(questions: QuestionSet, run: RetrievalRun) -> list[dict[str, Any]]:
    """For each gold unit a strategy left out of its first `MISS_DEPTH` units: the
    question, the unit, its rank under every evaluated strategy (None: not within the
    evaluated depth), and what the strategy started from and walked (its seeds, the flat
    ranking it began with, its paths), so a reader can see why it was missed."""
    depth = MISS_DEPTH[questions.benchmark]
    found: list[dict[str, Any]] = []
    for index, question in enumerate(questions.questions):
        for strategy, traces in run.traces.items():
            trace = traces[index]
            for unit in sorted(set(question.gold) - set(trace.units[:depth])):
                found.append(
                    {
                        "question_id": question.question_id,
                        "question": question.text,
                        "category": question.category,
                        "gold": unit,
                        "strategy": strategy,
                        "rank": _rank(trace.units, unit),
                        "ranks": {s: _rank(t[index].units, unit) for s, t in run.traces.items()},
                        "retrieved": trace.units[:depth],
                        "explanation": {
                            k: trace.explanation[k]
                            for k in EXPLANATION_KEYS
                            if k in trace.explanation
                        },
                        "paths": {
                            u: trace.paths[u] for u in trace.units[:depth] if u in trace.paths
                        },
                    }
                )
    return found


def _rank(units: list[str], unit: str) -> int | None:
    return units.index(unit) + 1 if unit in units else None


def query_depth(benchmark: str, conversations: int = 1) -> int:
    """Units asked of a strategy per question: MuSiQue `PASSAGE_DEPTH` passages; LoCoMo
    max(k) turns per conversation in the collection (the question's are kept)."""
    return PASSAGE_DEPTH if benchmark == "musique" else max(RETRIEVAL_KS[benchmark]) * conversations


def question_scores(
    benchmark: str, question: RetrievalQuestion, hits: list[dict[str, object]]
) -> dict[str, float]:
    """The metrics of one question from its ranked hits (rows with `segment_id`, `doc_id`
    and `session_id`): passage recall and MRR, or turn and session recall."""
    ks = RETRIEVAL_KS[benchmark]
    if benchmark == "musique":
        return _passage_scores(question, hits, ks)
    return _turn_scores(question, hits, ks)


def _passage_scores(
    question: RetrievalQuestion, hits: list[dict[str, object]], ks: Sequence[int]
) -> dict[str, float]:
    passages = distinct(str(h["doc_id"]) for h in hits)
    scores = {f"recall@{k}": recall_at_k(passages, question.gold, k) for k in ks}
    return scores | {"mrr": reciprocal_rank(passages, question.gold)}


def _turn_scores(
    question: RetrievalQuestion, hits: list[dict[str, object]], ks: Sequence[int]
) -> dict[str, float]:
    in_scope = [h for h in hits if h["doc_id"] == question.scope_doc_id][: max(ks)]
    turns = [str(h["segment_id"]) for h in in_scope]
    sessions = distinct(f"{h['doc_id']}/{h['session_id']}" for h in in_scope)
    scores = {f"turn_recall@{k}": recall_at_k(turns, question.gold, k) for k in ks}
    return scores | {
        f"session_recall@{k}": recall_at_k(sessions, question.gold_sessions, k) for k in ks
    }


def session_unit_scores(
    question: RetrievalQuestion, hits: list[dict[str, object]]
) -> dict[str, float]:
    """Session recall@k over a ranking of sessions (`Memory.query(unit="session")`: k
    distinct sessions, each by its best turn), the question's conversation's first max(k)."""
    ks = RETRIEVAL_KS["locomo"]
    in_scope = [h for h in hits if h["doc_id"] == question.scope_doc_id][: max(ks)]
    sessions = distinct(f"{h['doc_id']}/{h['session_id']}" for h in in_scope)
    return {
        f"session_unit_recall@{k}": recall_at_k(sessions, question.gold_sessions, k) for k in ks
    }


SEGMENT_COLUMNS = ("segment_id", "doc_id", "kind", "title", "turn_id", "session_id")


def snapshot_segments(memory: Memory) -> list[dict[str, object]]:
    """The snapshot's segments (the columns that resolve benchmark gold ids)."""
    segments = memory._view.segments  # the pinned view of the snapshot
    return segments.select(list(SEGMENT_COLUMNS)).to_pylist()


def conversation_count(memory: Memory) -> int:
    return max(1, len({s["doc_id"] for s in snapshot_segments(memory) if s["kind"] == "turn"}))
