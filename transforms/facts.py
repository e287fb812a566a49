"""Folding relation candidates into facts, and facts into append-only fact versions.

`fold_facts` groups candidates by (head entity, relation, tail entity): the sources are
every supporting segment, the confidence the highest candidate confidence, `valid_from`
the earliest time a supporting segment was observed. A negated candidate ("no longer
works at") closes the fact's valid interval at the negation's observed time; a negation
of a fact never asserted is quarantined. Grouping is a fold per key, so the result does
not depend on input order.

`plan_versions` compares the folded facts with the current version of each fact and
returns only the new versions to append: nothing is updated or deleted. The operation
says what changed (insert, close, confidence-upgrade, merge-interval, retract). Version
ids hash the previous version and the new content, so planning twice appends nothing.
REAL's cardinality rules and bitemporal as-of logic deepen this in the versioning issue.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from transforms.consolidation import entity_id, normalize_name
from transforms.ids import content_id
from transforms.quarantine import QuarantineRecord

STAGE = "fact_versions"


@dataclass
class FactState:
    """The believed state of one fact after folding all of its candidates."""

    fact_id: str
    head_entity_id: str
    relation: str
    tail_entity_id: str
    confidence: float
    valid_from: datetime | None
    valid_to: datetime | None
    source_segment_ids: list[str] = field(default_factory=list)
    extractor: str = ""


def fold_facts(
    collection: str,
    candidates: Iterable[Mapping[str, Any]],
    observed_at: Mapping[str, datetime | None],
) -> tuple[list[FactState], list[QuarantineRecord]]:
    """Fold candidates (with `segment_id`) into fact states; observed times by segment id."""
    positive: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    negative: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    quarantined: list[QuarantineRecord] = []
    for cand in candidates:
        head, tail = normalize_name(cand["head_text"]), normalize_name(cand["tail_text"])
        if not head or not tail or head == tail:
            reason = "self-relation" if head and head == tail else "entity name normalises to ''"
            quarantined.append(_quarantine(cand, reason))
            continue
        key = (entity_id(collection, head), cand["relation"], entity_id(collection, tail))
        (negative if cand["negated"] else positive)[key].append(cand)
    for key in sorted(set(negative) - set(positive)):
        quarantined.extend(
            _quarantine(c, "retraction of a fact never asserted") for c in negative[key]
        )
    facts = [
        _fact_state(collection, key, positive[key], negative.get(key, []), observed_at)
        for key in sorted(positive)
    ]
    return facts, quarantined


def _quarantine(cand: Mapping[str, Any], reason: str) -> QuarantineRecord:
    raw = f"{cand['head_text']} | {cand['relation']} | {cand['tail_text']}"
    return QuarantineRecord(
        STAGE, cand.get("doc_id", ""), f"segment {cand['segment_id']}", reason, raw
    )


def _earliest(times: Iterable[datetime | None]) -> datetime | None:
    known = [t for t in times if t is not None]
    return min(known) if known else None


def _fact_state(
    collection: str,
    key: tuple[str, str, str],
    asserted: list[Mapping[str, Any]],
    negated: list[Mapping[str, Any]],
    observed_at: Mapping[str, datetime | None],
) -> FactState:
    head_id, relation, tail_id = key
    valid_from = _earliest(observed_at.get(c["segment_id"]) for c in asserted)
    closing = [observed_at.get(c["segment_id"]) for c in negated]
    valid_to = _earliest(
        t for t in closing if t is not None and (valid_from is None or t > valid_from)
    )
    return FactState(
        fact_id=content_id("fact", collection, head_id, relation, tail_id),
        head_entity_id=head_id,
        relation=relation,
        tail_entity_id=tail_id,
        confidence=round(max(float(c["confidence"]) for c in asserted), 4),
        valid_from=valid_from,
        valid_to=valid_to,
        source_segment_ids=sorted({c["segment_id"] for c in [*asserted, *negated]}),
        extractor=",".join(sorted({c["extractor"] for c in asserted})),
    )


def plan_versions(
    collection: str,
    facts: Iterable[FactState],
    current: Mapping[str, Mapping[str, Any]],
    names: Mapping[str, str],
    recorded_at: datetime,
) -> list[dict[str, Any]]:
    """New version rows that move `current` (latest version by fact id) to `facts`."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for fact in facts:
        seen.add(fact.fact_id)
        previous = current.get(fact.fact_id)
        operation = _operation(fact, previous)
        if operation is not None:
            rows.append(_version_row(collection, fact, operation, previous, names, recorded_at))
    for fact_id in sorted(set(current) - seen):
        previous = current[fact_id]
        if previous["operation"] != "retract":
            gone = _state_of(previous)
            rows.append(_version_row(collection, gone, "retract", previous, names, recorded_at))
    return rows


def _operation(fact: FactState, previous: Mapping[str, Any] | None) -> str | None:
    if previous is None or previous["operation"] == "retract":
        return "insert"
    if fact.valid_to != previous["valid_to"]:
        return "close"
    if fact.confidence > previous["confidence"]:
        return "confidence-upgrade"
    if (
        fact.valid_from != previous["valid_from"]
        or fact.source_segment_ids != list(previous["source_segment_ids"])
        or fact.confidence != previous["confidence"]
    ):
        return "merge-interval"
    return None


def _state_of(row: Mapping[str, Any]) -> FactState:
    return FactState(
        fact_id=row["fact_id"],
        head_entity_id=row["head_entity_id"],
        relation=row["relation"],
        tail_entity_id=row["tail_entity_id"],
        confidence=row["confidence"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        source_segment_ids=list(row["source_segment_ids"]),
        extractor=row["extractor"],
    )


def _version_row(
    collection: str,
    fact: FactState,
    operation: str,
    previous: Mapping[str, Any] | None,
    names: Mapping[str, str],
    recorded_at: datetime,
) -> dict[str, Any]:
    previous_id = previous["version_id"] if previous else None
    return {
        "version_id": content_id(
            previous_id,
            operation,
            fact.fact_id,
            fact.confidence,
            fact.valid_from,
            fact.valid_to,
            fact.source_segment_ids,
        ),
        "fact_id": fact.fact_id,
        "collection": collection,
        "head_entity_id": fact.head_entity_id,
        "head_name": names.get(fact.head_entity_id, ""),
        "relation": fact.relation,
        "tail_entity_id": fact.tail_entity_id,
        "tail_name": names.get(fact.tail_entity_id, ""),
        "confidence": fact.confidence,
        "valid_from": fact.valid_from,
        "valid_to": fact.valid_to,
        "recorded_from": recorded_at,
        "operation": operation,
        "supersedes": previous_id,
        "source_segment_ids": fact.source_segment_ids,
        "extractor": fact.extractor,
    }
