"""Folding extracted assertions into fact intervals, and fact intervals into versions.

Assertions: every relation candidate becomes an assertion (head entity, canonical
relation, tail entity, time, confidence, polarity) through the relation registry. Its
time is the explicit `valid_from` an extractor gave, else the time its segment was
observed; undated assertions sort first.

Fold (REAL's non-destructive temporal update, made order-independent): the assertions
of one key, (head, relation) or (tail, relation) for `single_by_tail`, are sorted by
(time, polarity, tail, segment) and replayed on a timeline:
- a positive assertion of an open value confirms it (confidence upgraded by noisy-OR,
  the interval's sources grow);
- a positive assertion of a new value opens an interval; for single-valued relations it
  first closes every open value at the new start (half-open intervals `[from, to)`, so
  the old and the new value are never valid at the same instant);
- a negated assertion ("no longer", "left", GRAM's remove) closes the open interval of
  its value at its time; one that closes nothing is quarantined;
- an explicit end (`valid_to`) closes the interval there.
A value asserted again after its interval closed opens a new interval, so a living city
that changes back is a new fact. Undated assertions of a single-valued relation cannot
be ordered and are kept as parallel values until a dated value closes them. Because the
replay sees the sorted set of a key's assertions, the result is the same whatever order
the assertions arrived in (a back-dated statement processed last lands where its date
says), and keys are independent, so the fold runs per key in parallel (Beam GroupByKey).

Versions (`plan_versions`): the folded intervals are compared with the current version of
each fact; only new versions are appended (insert, close, confidence-upgrade,
merge-interval, retract), never an update or delete. Version ids hash the previous
version and the new content, so planning twice appends nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from schemas.tables import FactOperation
from transforms.consolidation import entity_id, normalize_name
from transforms.ids import content_id
from transforms.quarantine import QuarantineRecord
from transforms.relation_registry import (
    MULTI,
    SINGLE,
    SINGLE_BY_TAIL,
    CardinalityDecision,
    RelationRegistry,
)
from transforms.reported_speech import REPORTED_FACTOR, is_reported, reported_extractor
from transforms.triple_weights import filter_candidates

STAGE = "fact_versions"
CONFIDENCE_CAP = 0.9999
THETA_STABLE = 0.8
"""REAL's θ_stable: facts below this confidence are speculative, left out of retrieval
unless a query is speculative, and out of entity descriptions."""


@dataclass(frozen=True)
class Assertion:
    """One extracted statement about a fact, in canonical form."""

    head_id: str
    relation: str
    tail_id: str
    time: datetime | None
    confidence: float
    negated: bool
    segment_id: str
    extractor: str
    until: datetime | None = None
    doc_id: str = ""

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.time is not None,
            self.time or datetime.min,
            self.negated,
            self.tail_id,
            self.head_id,
            self.segment_id,
        )


@dataclass
class FactState:
    """One valid-time interval of a fact (h, r, t), as the fold believes it."""

    fact_id: str
    head_entity_id: str
    relation: str
    tail_entity_id: str
    confidence: float
    valid_from: datetime | None
    valid_to: datetime | None
    source_segment_ids: list[str] = field(default_factory=list)
    extractor: str = ""
    cardinality: str = MULTI


def noisy_or(a: float, b: float) -> float:
    """Confidence after a confirmation: 1 - (1 - a)(1 - b), capped below 1."""
    return round(min(CONFIDENCE_CAP, 1.0 - (1.0 - a) * (1.0 - b)), 4)


def to_assertions(
    collection: str,
    candidates: Iterable[Mapping[str, Any]],
    observed_at: Mapping[str, datetime | None],
    registry: RelationRegistry,
    entity_of: Mapping[str, str] | None = None,
) -> tuple[list[Assertion], list[QuarantineRecord]]:
    """Canonical assertions of relation candidates; unusable candidates are quarantined.

    Names resolve to entities through `entity_of` (normalised key -> entity id, the
    `entity_same_as` links), falling back to the key's own id for unresolved names."""
    entity_of = entity_of or {}
    assertions, rejected = [], []
    for cand in candidates:
        head, tail = normalize_name(cand["head_text"]), normalize_name(cand["tail_text"])
        if not head or not tail or head == tail:
            reason = "self-relation" if head and head == tail else "entity name normalises to ''"
            rejected.append(_quarantine(cand, reason))
            continue
        relation, negated = registry.canonical(cand["relation"], bool(cand["negated"]))
        confidence, extractor = float(cand["confidence"]), cand["extractor"]
        if _reported(cand):
            confidence, extractor = confidence * REPORTED_FACTOR, reported_extractor(extractor)
        assertions.append(
            Assertion(
                head_id=entity_of.get(head) or entity_id(collection, head),
                relation=relation,
                tail_id=entity_of.get(tail) or entity_id(collection, tail),
                time=cand.get("valid_from") or observed_at.get(cand["segment_id"]),
                confidence=confidence,
                negated=negated,
                segment_id=cand["segment_id"],
                extractor=extractor,
                until=cand.get("valid_to"),
                doc_id=cand.get("doc_id", ""),
            )
        )
    return assertions, rejected


def _reported(cand: Mapping[str, Any]) -> bool:
    """Whether the candidate's words are reported speech in its segment (`segment_text`
    with the span's offsets; a candidate without offsets, an LLM triplet, is not checked)."""
    text, start, end = cand.get("segment_text"), cand.get("span_start"), cand.get("span_end")
    return (
        text is not None and start is not None and end is not None and is_reported(text, start, end)
    )


def _quarantine(cand: Mapping[str, Any], reason: str) -> QuarantineRecord:
    raw = f"{cand['head_text']} | {cand['relation']} | {cand['tail_text']}"
    return QuarantineRecord(
        STAGE, cand.get("doc_id", ""), f"segment {cand['segment_id']}", reason, raw
    )


def fold_key_of(assertion: Assertion, cardinality: str) -> tuple[str, str]:
    """The key a fact is folded under: (tail, relation) when functional on the tail."""
    anchor = assertion.tail_id if cardinality == SINGLE_BY_TAIL else assertion.head_id
    return anchor, assertion.relation


def cardinality_decisions(
    assertions: Iterable[Assertion], registry: RelationRegistry
) -> dict[str, CardinalityDecision]:
    """Cardinality of every relation in `assertions` (registry first, else learned)."""
    return registry.decide(
        (a.relation, a.head_id, a.tail_id, a.segment_id) for a in assertions if not a.negated
    )


@dataclass
class _Interval:
    head: str
    tail: str
    start: datetime | None
    confidence: float
    sources: set[str]
    extractors: set[str]
    end: datetime | None = None


def fold_key(
    collection: str, assertions: Iterable[Assertion], cardinality: str
) -> tuple[list[FactState], list[Assertion]]:
    """Fold the assertions of one key into fact intervals; return (facts, unmatched negations)."""
    exclusive = cardinality in (SINGLE, SINGLE_BY_TAIL)
    by_tail = cardinality == SINGLE_BY_TAIL
    open_: dict[str, _Interval] = {}
    closed: list[_Interval] = []
    unmatched: list[Assertion] = []
    ordered = sorted(assertions, key=Assertion.sort_key)
    for a in ordered:
        value = a.head_id if by_tail else a.tail_id
        if a.negated:
            interval = open_.pop(value, None)
            if interval is None:
                unmatched.append(a)
                continue
            interval.end = a.time
            interval.sources.add(a.segment_id)
            closed.append(interval)
            continue
        if value in open_:
            current = open_[value]
            current.confidence = noisy_or(current.confidence, a.confidence)
            current.sources.add(a.segment_id)
            current.extractors.add(a.extractor)
        else:
            if exclusive and a.time is not None:
                for other in [v for v, iv in open_.items() if v != value]:
                    interval = open_.pop(other)
                    interval.end = a.time
                    closed.append(interval)
            open_[value] = _Interval(
                a.head_id, a.tail_id, a.time, a.confidence, {a.segment_id}, {a.extractor}
            )
        if a.until is not None and (a.time is None or a.until > a.time):
            interval = open_.pop(value)
            interval.end = a.until
            closed.append(interval)
    relation = ordered[0].relation if ordered else ""
    intervals = [*closed, *open_.values()]
    return _fact_states(collection, intervals, relation, cardinality), unmatched


def _fact_states(
    collection: str, intervals: list[_Interval], relation: str, cardinality: str
) -> list[FactState]:
    ordinal: dict[tuple[str, str], int] = defaultdict(int)
    facts = []
    for iv in sorted(
        intervals, key=lambda i: (i.head, i.tail, i.start is not None, i.start or datetime.min)
    ):
        triple = (iv.head, iv.tail)
        facts.append(
            FactState(
                fact_id=content_id("fact", collection, iv.head, relation, iv.tail, ordinal[triple]),
                head_entity_id=iv.head,
                relation=relation,
                tail_entity_id=iv.tail,
                confidence=round(iv.confidence, 4),
                valid_from=iv.start,
                valid_to=iv.end,
                source_segment_ids=sorted(iv.sources),
                extractor=",".join(sorted(iv.extractors)),
                cardinality=cardinality,
            )
        )
        ordinal[triple] += 1
    return facts


@dataclass(frozen=True)
class PreparedFacts:
    """What the fold reads: canonical assertions, the relations' cardinality decisions,
    and the candidates set aside on the way (unresolved, below weight)."""

    assertions: list[Assertion]
    decisions: dict[str, CardinalityDecision]
    rejected: list[QuarantineRecord]


def prepare_facts(
    collection: str,
    candidates: list[Mapping[str, Any]],
    registry: RelationRegistry,
    entity_of: Mapping[str, str],
    alpha: float,
    theta_conf: float,
) -> PreparedFacts:
    """The fact stage before its per-key fold: each document's triples weighed (KGERMAR:
    w = α·conf + (1−α)·freq/maxfreq, kept when w > θ_conf, w becoming the confidence, the
    others quarantined), the kept ones canonicalised against the entities, and the
    cardinality of every relation decided over the whole collection."""
    observed = {c["segment_id"]: c["observed_at"] for c in candidates}
    weighted = filter_candidates(candidates, alpha, theta_conf, scope="doc_id")
    assertions, rejected = to_assertions(collection, weighted, observed, registry, entity_of)
    rejected.extend(below_weight(candidates, weighted, theta_conf))
    return PreparedFacts(assertions, cardinality_decisions(assertions, registry), rejected)


def unmatched_record(a: Assertion) -> QuarantineRecord:
    """Quarantine record of a retraction that closes no interval valid at its time."""
    reason = "retraction of a fact not valid at that time"
    return QuarantineRecord(
        STAGE,
        a.doc_id,
        f"segment {a.segment_id}",
        reason,
        f"{a.head_id} | {a.relation} | {a.tail_id}",
    )


def below_weight(
    candidates: Iterable[Mapping[str, Any]], kept: Iterable[Mapping[str, Any]], theta_conf: float
) -> list[QuarantineRecord]:
    """Quarantine records of the candidates the triple-weight filter did not keep."""
    kept_ids = {c["id"] for c in kept}
    reason = f"KGERMAR triple weight w <= θ_conf ({theta_conf})"
    return [_quarantine(c, reason) for c in candidates if c["id"] not in kept_ids]


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
        if previous["operation"] != FactOperation.RETRACT:
            gone = _state_of(previous)
            rows.append(
                _version_row(collection, gone, FactOperation.RETRACT, previous, names, recorded_at)
            )
    return rows


def _operation(fact: FactState, previous: Mapping[str, Any] | None) -> FactOperation | None:
    if previous is None or previous["operation"] == FactOperation.RETRACT:
        return FactOperation.INSERT
    if fact.valid_to != previous["valid_to"]:
        return FactOperation.CLOSE
    if fact.confidence > previous["confidence"]:
        return FactOperation.CONFIDENCE_UPGRADE
    changed = (
        fact.valid_from != previous["valid_from"]
        or fact.source_segment_ids != list(previous["source_segment_ids"])
        or fact.confidence != previous["confidence"]
        or fact.cardinality != previous.get("cardinality", fact.cardinality)
    )
    return FactOperation.MERGE_INTERVAL if changed else None


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
        cardinality=row.get("cardinality", MULTI),
    )


def _version_row(
    collection: str,
    fact: FactState,
    operation: FactOperation,
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
        "cardinality": fact.cardinality,
    }
