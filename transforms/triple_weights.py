"""KGERMAR's triple weight and filter (eq. 4 and §2.3 step 5).

    w(h, r, t) = alpha * conf(h, r, t) + (1 - alpha) * freq(h, r, t) / max freq(h', r', t')

kept when w > theta_conf; alpha = 0.7 and theta_conf = 0.5 as in the paper, both
configurable.

Definitions the paper leaves open:
- A triple is (head entity, relation, tail entity) after consolidation: head and tail are
  consolidation keys (`transforms.consolidation.normalize_name` of the mention text), so
  "Acme Corp" and "ACME" are one head.
- `freq` is the number of asserted (not negated) candidates of that triple, one per
  classified mention pair, within the scope: the whole collection by default, or one
  document (`scope="doc_id"`, the paper's per-context graph). The maximum runs over the
  triples of the same scope.
- `conf` is the highest candidate confidence of the triple (the calibrated probability of
  the classifier): the best evidence decides, as `transforms.facts` folds confidences.
Both passes are needed (all counts before any weight), so weighting is a fold over the
scope's candidates, not a per-pair step as Algorithm 1 draws it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from transforms.consolidation import normalize_name

ALPHA = 0.7
THETA_CONF = 0.5

TripleKey = tuple[Hashable, str, Hashable]


@dataclass(frozen=True)
class WeightedTriple:
    """A triple with its aggregated confidence, frequency and KGERMAR weight."""

    key: TripleKey
    confidence: float
    frequency: int
    weight: float


def weigh(
    observations: Iterable[tuple[TripleKey, float]], alpha: float = ALPHA
) -> dict[TripleKey, WeightedTriple]:
    """Weight of every triple of one scope from its (key, confidence) observations."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
    confidence: dict[TripleKey, float] = {}
    frequency: dict[TripleKey, int] = defaultdict(int)
    for key, conf in observations:
        confidence[key] = max(conf, confidence.get(key, 0.0))
        frequency[key] += 1
    top = max(frequency.values(), default=1)
    return {
        key: WeightedTriple(
            key=key,
            confidence=confidence[key],
            frequency=frequency[key],
            weight=alpha * confidence[key] + (1 - alpha) * frequency[key] / top,
        )
        for key in confidence
    }


def candidate_key(row: Mapping[str, Any]) -> TripleKey:
    """(head key, relation, tail key) of a RELATION_CANDIDATES row."""
    return normalize_name(row["head_text"]), row["relation"], normalize_name(row["tail_text"])


def filter_candidates(
    rows: Iterable[Mapping[str, Any]],
    alpha: float = ALPHA,
    theta_conf: float = THETA_CONF,
    scope: str | None = None,
) -> list[dict[str, Any]]:
    """The asserted candidates whose triple has w > `theta_conf`, confidence set to w.

    `scope` is a column to weigh within (e.g. "doc_id"); None weighs the whole input.
    Negated candidates are retractions, not assertions: they pass through unweighted.
    """
    rows = [dict(row) for row in rows]
    observations: dict[Any, list[tuple[TripleKey, float]]] = defaultdict(list)
    for row in rows:
        if not row["negated"]:
            observations[row[scope] if scope else None].append(
                (candidate_key(row), float(row["confidence"]))
            )
    weights = {value: weigh(members, alpha) for value, members in observations.items()}
    kept = []
    for row in rows:
        if row["negated"]:
            kept.append(row)
            continue
        weight = weights[row[scope] if scope else None][candidate_key(row)].weight
        if weight > theta_conf:
            kept.append({**row, "confidence": round(weight, 4)})
    return kept
