"""Fitting KGERMAR's fusion weights on a dev split: a grid search over the λ simplex.

The paper learns λ1..λ3 by gradient descent through its LM; offline we have questions
with gold segments instead, and only three parameters, so an exhaustive simplex grid
(step 0.1: 66 points) maximising recall@k is both exact at that resolution and cheap:
each question's three bank lists are retrieved once, and every grid point only re-fuses
them. Ties on recall go to the higher MRR, then to the point nearest the default weights
(the least committed choice), then to grid order, so the fit is deterministic.

Questions: pairs (question text, gold segment ids). `read_questions` loads them from
JSONL with a "question" and either "gold_segment_ids" or "gold_contains" (one string or
a list; every retrievable segment of the snapshot whose text contains one of them,
case-insensitively, is gold), so a dev split can be written without knowing ids.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memory.fusion_weights import BANKS, DEFAULT_WEIGHTS
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.kgermar_fusion import Banks, bank_budget, fuse, retrieve_banks
from schemas.tables import EXTRACTABLE_KINDS

Question = tuple[str, Collection[str]]


@dataclass(frozen=True)
class FusionFit:
    """The fitted weights and how well they and the default do on the questions."""

    weights: dict[str, float]
    recall_at_k: float
    mrr: float
    default_recall_at_k: float
    k: int
    step: float
    grid_points: int
    questions: int
    structural_available: bool
    snapshot_id: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def simplex_grid(step: float, names: Sequence[str] = BANKS) -> list[dict[str, float]]:
    """Every weighting of `names` with each weight a multiple of `step` and a sum of 1
    (three names, step 0.1: 66 points), in lexicographic order of the weights."""
    parts = round(1.0 / step)
    if parts < 1 or abs(parts * step - 1.0) > 1e-9:
        raise ValueError(f"step must divide 1 evenly, got {step}")
    if not names:
        raise ValueError("the grid needs at least one name")
    shares = [
        combo
        for combo in itertools.product(range(parts + 1), repeat=len(names) - 1)
        if sum(combo) <= parts
    ]
    return [
        dict(zip(names, [*(c / parts for c in combo), (parts - sum(combo)) / parts], strict=True))
        for combo in shares
    ]


def fit_fusion_weights(
    memory_or_view: Any, questions: Sequence[Question], k: int = 5, step: float = 0.1
) -> FusionFit:
    """λ maximising mean recall@k of the gold segments over `questions` (a `Memory` or a
    `SnapshotView`), with the per-bank budget the strategy uses by default (K)."""
    view: SnapshotView = getattr(memory_or_view, "_view", memory_or_view)
    usable = [(text, set(gold)) for text, gold in questions if gold]
    if not usable:
        raise ValueError("no question has gold segments to fit the fusion weights on")
    budget = bank_budget(k, {})
    banks = [retrieve_banks(view, QueryContext(text, k), budget) for text, _ in usable]
    golds = [gold for _, gold in usable]
    grid = simplex_grid(step)

    def key(weights: dict[str, float]) -> tuple[float, float, float]:
        recall, mrr = _evaluate(banks, golds, weights, k)
        spread = sum((weights[b] - DEFAULT_WEIGHTS[b]) ** 2 for b in BANKS)
        return recall, mrr, -spread

    best = max(grid, key=key)  # max keeps the first of equal keys: grid order
    recall, mrr = _evaluate(banks, golds, best, k)
    return FusionFit(
        weights={b: round(w, 6) for b, w in best.items()},
        recall_at_k=round(recall, 6),
        mrr=round(mrr, 6),
        default_recall_at_k=round(_evaluate(banks, golds, DEFAULT_WEIGHTS, k)[0], 6),
        k=k,
        step=step,
        grid_points=len(grid),
        questions=len(usable),
        structural_available=all(not b.missing for b in banks),
        snapshot_id=view.snapshot.snapshot_id,
    )


def read_questions(path: str | Path, view: SnapshotView) -> list[Question]:
    """(question, gold segment ids) pairs from a JSONL file (see the module docstring)."""
    texts = view.segments.select(["segment_id", "kind", "text"]).to_pylist()
    retrievable = [s for s in texts if s["kind"] in EXTRACTABLE_KINDS]
    pairs = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        record = json.loads(line)
        if "question" not in record:
            raise ValueError(f"{path}:{number}: no 'question'")
        gold = set(record.get("gold_segment_ids", []))
        wanted = record.get("gold_contains", [])
        for needle in [wanted] if isinstance(wanted, str) else wanted:
            gold |= {s["segment_id"] for s in retrievable if needle.lower() in s["text"].lower()}
        pairs.append((record["question"], sorted(gold)))
    return pairs


def _evaluate(
    banks: Sequence[Banks], golds: Sequence[set[str]], weights: dict[str, float], k: int
) -> tuple[float, float]:
    """Mean recall@k and MRR (first gold hit) of the fused rankings."""
    recall = reciprocal = 0.0
    for bank, gold in zip(banks, golds, strict=True):
        ranked = [segment for segment, _ in fuse(bank, weights, k)]
        recall += len(gold.intersection(ranked)) / len(gold)
        first = next((i for i, s in enumerate(ranked, 1) if s in gold), None)
        reciprocal += 1.0 / first if first else 0.0
    return recall / len(banks), reciprocal / len(banks)
