"""Fitting a graph strategy's blend with the flat prior (its flat share) for one corpus
kind on a benchmark's dev questions: the evaluation (`memory.evaluation.retrieval_scores`)
run once per share of a grid, scored with the metric the share is chosen by (MuSiQue
passage recall@5 for documents, LoCoMo turn recall@10 for conversations), ties to the
other recalls, then to the share nearest the strategy's current one.

What `kgmem train traversal-blend` prints: each share's figures, and the best share per
strategy, to be pinned as the strategy's default (`transforms.traversal_blend`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.evaluation import retrieval_scores
from memory.hybrid_fit import BENCHMARK_KINDS, OBJECTIVES
from memory.memory import Memory
from transforms.evaluation.retrieval_questions import QuestionSet
from transforms.evaluation.retrieval_report import RECALL_METRICS, by_strategy
from transforms.traversal_blend import flat_shares

GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
"""Flat shares tried by default (1.0 is the flat ranking itself: the ablation row)."""


@dataclass(frozen=True)
class BlendFit:
    """One strategy's figures per flat share on one benchmark, and the best share."""

    strategy: str
    kind: str
    objective: str
    figures: dict[float, dict[str, float]]
    current: float
    best: float


def fit_blend(
    memory: Memory, questions: QuestionSet, strategy: str, grid: Sequence[float] = GRID
) -> BlendFit:
    """The figures of `strategy` at every flat share of `grid` and the best share."""
    kind = BENCHMARK_KINDS[questions.benchmark]
    objective = OBJECTIVES[questions.benchmark]
    current = flat_shares(strategy, memory.snapshot.retrieval, {})[kind]
    figures: dict[float, dict[str, float]] = {}
    for share in grid:
        run = retrieval_scores(
            memory, questions, [strategy], options={"flat_share": share}, session_unit=False
        )
        if run.errors:
            raise RuntimeError(f"{strategy} at flat_share={share}: {run.errors[strategy]}")
        figures[share] = by_strategy(run.rows)[strategy]
    others = [m for m in RECALL_METRICS[questions.benchmark] if m != objective]

    def key(share: float) -> tuple[float, ...]:
        values = figures[share]
        return (values[objective], *(values.get(m, 0.0) for m in others), -abs(share - current))

    return BlendFit(strategy, kind, objective, figures, current, max(figures, key=key))
