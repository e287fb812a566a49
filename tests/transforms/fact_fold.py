"""The per-key fold run in process over unweighted candidates, for tests of the fold's own
rules (cardinality, retractions, order independence) and as the reference the Beam fold
(`pipelines.fact_versions.FoldFacts`) is compared with. Production weighs candidates
first (`transforms.facts.prepare_facts`) and folds in Beam."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from transforms.facts import (
    Assertion,
    FactState,
    cardinality_decisions,
    fold_key,
    fold_key_of,
    to_assertions,
    unmatched_record,
)
from transforms.quarantine import QuarantineRecord
from transforms.relation_registry import MULTI, CardinalityDecision, RelationRegistry


def fold_facts(
    collection: str,
    candidates: list[Mapping[str, Any]],
    observed_at: Mapping[str, datetime | None],
    registry: RelationRegistry | None = None,
) -> tuple[list[FactState], list[QuarantineRecord], dict[str, CardinalityDecision]]:
    """Canonicalise, decide cardinality, fold every key: (facts, rejected, decisions)."""
    registry = registry or RelationRegistry()
    assertions, rejected = to_assertions(collection, candidates, observed_at, registry)
    decisions = cardinality_decisions(assertions, registry)
    groups: dict[tuple[str, str], list[Assertion]] = defaultdict(list)
    for a in assertions:
        decision = decisions.get(a.relation)
        groups[fold_key_of(a, decision.effective if decision else MULTI)].append(a)
    facts: list[FactState] = []
    for key in sorted(groups):
        decision = decisions.get(key[1])
        folded, unmatched = fold_key(
            collection, groups[key], decision.effective if decision else MULTI
        )
        facts.extend(folded)
        rejected.extend(unmatched_record(a) for a in unmatched)
    return facts, rejected, decisions
