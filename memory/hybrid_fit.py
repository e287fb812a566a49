"""Fitting the `hybrid` strategy's weights for one corpus kind on a benchmark's dev questions.

Each question's signal lists are retrieved once, with the pool the strategy uses at the
evaluation's depth; every point of a simplex grid over the available signals (step 0.1:
66 points for three) re-fuses them, ranks passages (or turns) as `Memory.query` does, and
is scored with the evaluation's own metric (`memory.evaluation.question_scores`): MuSiQue
passage recall@5 for documents, LoCoMo turn recall@10 for conversations. Ties go to the
other recalls, then to the point nearest the current defaults, then to grid order, so the
fit is deterministic.

The fit also reports a two-fold cross-validated figure (fit on even questions, score on
odd, and the reverse), so that what the grid gained on the questions it saw can be told
apart from what carries over to questions it did not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from memory.evaluation import conversation_count, query_depth, question_scores
from memory.fusion_fit import simplex_grid
from memory.memory import Memory, passage_groups
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.hybrid import POOL, available_signals, signal_lists
from transforms.evaluation.retrieval_questions import QuestionSet, RetrievalQuestion
from transforms.hybrid_weights import DEFAULT_WEIGHTS, normalised
from transforms.rank_fusion import combine, normalise

BENCHMARK_KINDS = {"musique": "documents", "locomo": "conversations"}
"""The corpus kind whose weights a benchmark's questions fit."""
OBJECTIVES = {"musique": "recall@5", "locomo": "turn_recall@10"}


@dataclass(frozen=True)
class HybridFit:
    """Fitted weights of one corpus kind and how they, the defaults and each signal alone
    score on the questions."""

    kind: str
    benchmark: str
    objective: str
    weights: dict[str, float]
    score: float
    default_score: float
    cross_validated_score: float
    signal_scores: dict[str, float]
    questions: int
    step: float
    grid_points: int
    snapshot_id: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Prepared:
    """One question with its normalised signal lists and its candidates' rows."""

    question: RetrievalQuestion
    normal: Mapping[str, tuple[dict[str, float], float]]
    rows: Mapping[str, Mapping[str, Any]]

    @classmethod
    def of(
        cls, view: SnapshotView, question: RetrievalQuestion, depth: int, pool: int
    ) -> _Prepared:
        signals = signal_lists(view, QueryContext(question.text, depth), pool)
        candidates = {segment for scored in signals.values() for segment, _ in scored}
        rows = {s: {**view.segment(s), "segment_id": s} for s in candidates}
        return cls(question, normalise(signals), rows)


def fit_hybrid_weights(memory: Memory, questions: QuestionSet, step: float = 0.1) -> HybridFit:
    """The weights over the snapshot's signals that maximise the benchmark's objective."""
    benchmark = questions.benchmark
    if benchmark not in BENCHMARK_KINDS:
        raise ValueError(f"no corpus kind for benchmark {benchmark!r}; use {list(BENCHMARK_KINDS)}")
    if not questions.questions:
        raise ValueError("no evaluable question to fit the hybrid weights on")
    view: SnapshotView = memory._view
    kind = BENCHMARK_KINDS[benchmark]
    conversations = conversation_count(memory) if benchmark == "locomo" else 1
    depth = query_depth(benchmark, conversations)
    pool = max(POOL, 2 * depth)
    prepared = [_Prepared.of(view, q, depth, pool) for q in questions.questions]
    available = available_signals(view)
    grid = simplex_grid(step, available)
    default = normalised(DEFAULT_WEIGHTS[kind], available)
    objective = OBJECTIVES[benchmark]

    def ranked_key(points: Sequence[_Prepared]) -> Any:
        def key(weights: dict[str, float]) -> tuple[float, ...]:
            means = _mean_scores(view, points, weights, benchmark, depth)
            spread = sum((weights[s] - default[s]) ** 2 for s in available)
            others = tuple(v for m, v in sorted(means.items()) if m != objective)
            return (means[objective], *others, -spread)

        return key

    best = max(grid, key=ranked_key(prepared))
    held_out = [
        _mean_scores(
            view,
            prepared[1 - fold :: 2],
            max(grid, key=ranked_key(prepared[fold::2])),
            benchmark,
            depth,
        )[objective]
        for fold in (0, 1)
    ]
    halves = [len(prepared[1::2]), len(prepared[0::2])]
    return HybridFit(
        kind=kind,
        benchmark=benchmark,
        objective=objective,
        weights={s: round(w, 6) for s, w in best.items()},
        score=round(_mean_scores(view, prepared, best, benchmark, depth)[objective], 6),
        default_score=round(_mean_scores(view, prepared, default, benchmark, depth)[objective], 6),
        cross_validated_score=round(
            sum(s * n for s, n in zip(held_out, halves, strict=True)) / sum(halves), 6
        ),
        signal_scores={
            s: round(_mean_scores(view, prepared, {s: 1.0}, benchmark, depth)[objective], 6)
            for s in available
        },
        questions=len(prepared),
        step=step,
        grid_points=len(grid),
        snapshot_id=view.snapshot.snapshot_id,
    )


def _mean_scores(
    view: SnapshotView,
    points: Sequence[_Prepared],
    weights: Mapping[str, float],
    benchmark: str,
    depth: int,
) -> dict[str, float]:
    """Mean of every metric over `points` with their lists fused by `weights`."""
    totals: dict[str, float] = {}
    for point in points:
        fused = combine(point.normal, lambda _segment: weights)
        hits = [group[0][0] for group in passage_groups(fused, point.rows.__getitem__)][:depth]
        hits = [point.rows[segment] for segment in hits]
        for metric, value in question_scores(benchmark, point.question, hits).items():
            totals[metric] = totals.get(metric, 0.0) + value
    return {metric: total / len(points) for metric, total in totals.items()}
