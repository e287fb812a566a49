"""What kgmem knows about relations: canonical names and cardinality.

Canonical names: extractors say the same thing in different words ("move to" and "live
in"; "leave" is the retraction of "work at"). `RelationRegistry.canonical` maps a raw
relation onto (canonical relation, negated), so that the fact fold sees one key per
meaning. Unknown relations keep their own name.

Cardinality (REAL, "Non-Destructive Temporal Evolution"):
- `single`: at any valid instant a head has at most one tail (`live_in`): a new tail
  closes the old interval at the new fact's start;
- `single_by_tail`: the same, keyed on the tail (a company has one CEO at a time:
  `ceo_of` is functional on its tail, which REAL's (head, relation) key cannot express);
- `multi`: values coexist (`likes`): parallel edges, nothing is closed;
- unknown: treated as `multi` "to avoid data loss" (REAL).

The configured registry wins; for other relations cardinality is learned from the
collection (`learn_cardinality`), and the learned value is kept with its evidence. REAL
gives no learning method; the rule here is deliberately conservative: a relation is
learned `multi` as soon as one head asserts two different tails in the same segment, and
`single` only when at least `min_support` heads change tail over time and none ever
asserts two at once; otherwise it stays unknown.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

SINGLE, SINGLE_BY_TAIL, MULTI, UNKNOWN = "single", "single_by_tail", "multi", "unknown"
CARDINALITIES = (SINGLE, SINGLE_BY_TAIL, MULTI, UNKNOWN)

DEFAULT_ALIASES: dict[str, tuple[str, bool]] = {
    "move_to": ("live_in", False),
    "relocate_to": ("live_in", False),
    "reside_in": ("live_in", False),
    "join": ("work_at", False),
    "work_for": ("work_at", False),
    "leave": ("work_at", True),
    "quit": ("work_at", True),
    "move_from": ("live_in", True),
    "base_in": ("locate_in", False),
    "headquarter_in": ("locate_in", False),
}
"""Raw relation -> (canonical relation, is a retraction of it)."""

DEFAULT_CARDINALITY: dict[str, str] = {
    "live_in": SINGLE,
    "work_at": SINGLE,
    "locate_in": SINGLE,
    "base_at": SINGLE,
    "ceo_of": SINGLE_BY_TAIL,
    "lead": SINGLE_BY_TAIL,
    "has_error": MULTI,
    "like": MULTI,
    "dislike": MULTI,
    "prefer": MULTI,
    "LocatedAt": SINGLE,
    "IsA": MULTI,
    "PartOf": MULTI,
    "HasProperty": MULTI,
    "CausedBy": MULTI,
    "UsedFor": MULTI,
    "RelatedTo": MULTI,
}


@dataclass(frozen=True)
class CardinalityDecision:
    """The cardinality used for a relation, where it came from, and the evidence."""

    relation: str
    cardinality: str
    source: str  # "registry" | "learned" | "default"
    evidence: dict[str, int] = field(default_factory=dict)

    @property
    def effective(self) -> str:
        """Cardinality the fold applies: unknown behaves as multi."""
        return MULTI if self.cardinality == UNKNOWN else self.cardinality


@dataclass(frozen=True)
class RelationRegistry:
    """Configured aliases and cardinalities (defaults above), plus the learning threshold."""

    aliases: Mapping[str, tuple[str, bool]] = field(default_factory=lambda: dict(DEFAULT_ALIASES))
    cardinality: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_CARDINALITY))
    min_support: int = 3

    def __post_init__(self) -> None:
        bad = {r: c for r, c in self.cardinality.items() if c not in CARDINALITIES}
        if bad:
            raise ValueError(f"unknown cardinality values {bad}; use one of {CARDINALITIES}")

    def canonical(self, relation: str, negated: bool) -> tuple[str, bool]:
        """(canonical relation, negated) for a raw relation and its polarity."""
        name, retracts = self.aliases.get(relation, (relation, False))
        return name, negated != retracts

    def decide(
        self, observations: Iterable[tuple[str, str, str, str]]
    ) -> dict[str, CardinalityDecision]:
        """Cardinality per relation from (relation, head, tail, segment) positive observations."""
        by_relation: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        for relation, head, tail, segment in observations:
            by_relation[relation].append((head, tail, segment))
        decisions = {}
        for relation, rows in sorted(by_relation.items()):
            if relation in self.cardinality:
                decisions[relation] = CardinalityDecision(
                    relation, self.cardinality[relation], "registry"
                )
            else:
                decisions[relation] = learn_cardinality(relation, rows, self.min_support)
        return decisions


def learn_cardinality(
    relation: str, rows: Iterable[tuple[str, str, str]], min_support: int
) -> CardinalityDecision:
    """Learn a relation's cardinality from (head, tail, segment) observations (see module doc)."""
    tails_by_head: dict[str, set[str]] = defaultdict(set)
    tails_by_segment: dict[tuple[str, str], set[str]] = defaultdict(set)
    for head, tail, segment in rows:
        tails_by_head[head].add(tail)
        tails_by_segment[(head, segment)].add(tail)
    evidence = {
        "heads": len(tails_by_head),
        "heads_changing_tail": sum(len(t) > 1 for t in tails_by_head.values()),
        "segments_with_parallel_tails": sum(len(t) > 1 for t in tails_by_segment.values()),
    }
    if evidence["segments_with_parallel_tails"]:
        cardinality = MULTI
    elif evidence["heads_changing_tail"] >= min_support:
        cardinality = SINGLE
    else:
        cardinality = UNKNOWN
    return CardinalityDecision(relation, cardinality, "learned", evidence)


def cardinality_rows(
    collection: str, decisions: Mapping[str, CardinalityDecision]
) -> list[dict[str, object]]:
    """Rows of the `relation_cardinality` table: the decision per relation with its evidence."""
    now = datetime.now(UTC)
    return [
        {
            "collection": collection,
            "relation": d.relation,
            "cardinality": d.cardinality,
            "source": d.source,
            "evidence": json.dumps(d.evidence),
            "decided_at": now,
        }
        for d in decisions.values()
    ]


RETRACT_PREFIX = "retract:"


def alias_config(aliases: Mapping[str, tuple[str, bool]]) -> dict[str, str]:
    """Aliases as plain strings for configuration ('retract:work_at' for a retraction)."""
    return {raw: (RETRACT_PREFIX if neg else "") + name for raw, (name, neg) in aliases.items()}


def parse_alias_config(config: Mapping[str, str]) -> dict[str, tuple[str, bool]]:
    """Inverse of `alias_config`."""
    return {
        raw: (value.removeprefix(RETRACT_PREFIX), value.startswith(RETRACT_PREFIX))
        for raw, value in config.items()
    }
