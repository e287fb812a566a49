"""REAL's exploration intents at query time: the intent of a query (or clause), the intent
label of a stored fact, which labels a beam of a given intent may traverse, and the answer
type a question expects.

The paper has an LLM decouple one intent per root entity from "the semantic goal of the
query, the entity role, the expected answer type, temporal expressions ..." and gives no
prompt; here the same cues are read deterministically (so retrieval is reproducible and
free of LLM calls unless the evaluator is an LLM):

- Query intent: cue words per intent (the paper's triggers: "because" → CAUSAL,
  "before/after" and time markers → TEMPORAL, comparisons → CONTRAST, change over time →
  EVOLUTION; FACT otherwise). A query with cues of several intents takes the first in
  `PRIORITY` (CAUSAL, CONTRAST, EVOLUTION, TEMPORAL): "When did Sam move?" asks about a
  change, not a date alone.
- Fact intent: our fact table stores no intent column (the fact stage keeps relation,
  cardinality and validity only), so a fact's label is derived from what it does keep:
  relation words (causes/leads_to → CAUSAL, precedes/follows/succeeds → TEMPORAL,
  unlike/prefers_over → CONTRAST, becomes/moves → EVOLUTION); a single-valued relation or
  a closed version (its value changes over time) → EVOLUTION; otherwise FACT.
- Compatibility (paper: "for a causal intent only edges labeled CAUSAL are allowed",
  temporal intents keep TEMPORAL edges; the rest is unspecified): a FACT beam accepts every
  label; CAUSAL accepts CAUSAL; TEMPORAL and EVOLUTION accept each other (a change is an
  event in time); CONTRAST accepts CONTRAST and EVOLUTION (an old value contrasts with its
  successor). The filter is hard, as in Algorithm 1; counterfactual repair (symmetry,
  hyponymy, causality templates) is what admits other labels when a beam starves.
- Path intent ι_u after a hop (unspecified): the beam keeps its root's intent.
- Expected answer type: the noun after "which/what" ("which city" → Location), else
  "where" → Location, "who/whom/whose" → Person; None when the question names no type.
"""

from __future__ import annotations

import functools
import re

from schemas.llm_outputs import Intent

FACT, CAUSAL, TEMPORAL, CONTRAST, EVOLUTION = (
    Intent.FACT.value,
    Intent.CAUSAL.value,
    Intent.TEMPORAL.value,
    Intent.CONTRAST.value,
    Intent.EVOLUTION.value,
)
INTENTS = (FACT, CAUSAL, TEMPORAL, CONTRAST, EVOLUTION)
PRIORITY = (CAUSAL, CONTRAST, EVOLUTION, TEMPORAL)

COMPATIBLE: dict[str, frozenset[str]] = {
    FACT: frozenset(INTENTS),
    CAUSAL: frozenset({CAUSAL}),
    TEMPORAL: frozenset({TEMPORAL, EVOLUTION}),
    EVOLUTION: frozenset({EVOLUTION, TEMPORAL}),
    CONTRAST: frozenset({CONTRAST, EVOLUTION}),
}
"""Beam intent -> the fact intent labels its expansions may traverse."""

_QUERY_CUES = {
    CAUSAL: r"why|because|caus\w*|reasons?|due to|lead to|led to|leads to|result\w*|what made",
    CONTRAST: r"compar\w*|differ\w*|versus|vs\.?|unlike|instead|rather than|whereas|"
    r"better than|worse than",
    EVOLUTION: r"used to|any ?more|no longer|still|chang\w*|mov(?:e|ed|es|ing)|switch\w*|"
    r"now|history|evolv\w*|former\w*|over time|bec[ao]me|previous\w*",
    TEMPORAL: r"before|after|when|since|until|earlier|later|first|last|date|year|timeline|"
    r"during|at the time|as of",
}
QUERY_CUES = {
    intent: re.compile(rf"\b(?:{cues})\b", re.IGNORECASE) for intent, cues in _QUERY_CUES.items()
}

_RELATION_WORDS = {
    CAUSAL: {"cause", "causes", "caused", "lead", "leads", "led", "result", "results", "trigger"}
    | {"triggers", "because", "due", "enable", "enables", "prevent", "prevents", "produce"},
    TEMPORAL: {"precede", "precedes", "follow", "follows", "before", "after", "succeed"}
    | {"succeeds", "since", "until", "during", "prior", "replace", "replaces"},
    CONTRAST: {"unlike", "differ", "differs", "contrast", "versus", "vs", "instead", "than"}
    | {"prefer", "prefers", "compare", "conflict", "oppose"},
    EVOLUTION: {"become", "became", "change", "changes", "move", "moved", "switch", "evolve"},
}
TAXONOMIC_WORDS = {"subclass", "subclassof", "isa", "type", "kind", "instance", "part", "member"}
"""Relation words of class membership, the facts the hyponymy template reasons over."""

ANSWER_TYPES = {
    "Location": {"city", "cities", "country", "countries", "town", "place", "location"}
    | {"region", "continent"},
    "Person": {"person", "people", "ceo", "founder", "leader", "manager", "designer"},
    "Organization": {"company", "employer", "organization", "organisation", "firm", "team"}
    | {"office", "department", "site", "lab", "labs"},
}
_WHICH = re.compile(r"\b(?:which|what)\s+(\w+)", re.IGNORECASE)
_WHERE = re.compile(r"\bwhere\b", re.IGNORECASE)
_WHO = re.compile(r"\bwho(?:m|se)?\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[;?!]|,|\bbut\b|\bwhile\b|\band\b", re.IGNORECASE)


def query_intent(text: str) -> str:
    """The exploration intent a text's cue words ask for (FACT when it has none)."""
    for intent in PRIORITY:
        if QUERY_CUES[intent].search(text):
            return intent
    return FACT


def clauses(text: str) -> list[str]:
    """The query split at clause boundaries, so that each root gets its own clause's intent."""
    return [part.strip() for part in _CLAUSE.split(text) if part and part.strip()]


def relation_words(relation: str) -> set[str]:
    return {w for w in re.split(r"[_\W]+", relation.lower()) if w}


@functools.lru_cache(maxsize=65_536)
def fact_intent(relation: str, cardinality: str | None, closed: bool) -> str:
    """The intent label of a stored fact (see the module docstring); memoised, since a
    graph has few distinct relations and a search labels the same ones again and again."""
    words = relation_words(relation)
    for intent in (CAUSAL, TEMPORAL, CONTRAST, EVOLUTION):
        if words & _RELATION_WORDS[intent]:
            return intent
    if closed or (cardinality or "").startswith("single"):
        return EVOLUTION
    return FACT


@functools.lru_cache(maxsize=65_536)
def is_taxonomic(relation: str) -> bool:
    words = relation_words(relation)
    return bool(words & TAXONOMIC_WORDS) or relation.lower() in {"is_a", "be_a", "subclass_of"}


def compatible(beam_intent: str, label: str) -> bool:
    """IntentCompatible(ι_u, ι_beam): may a beam of `beam_intent` traverse a `label` fact?"""
    return label in COMPATIBLE[beam_intent]


def expected_answer_type(text: str) -> str | None:
    """The entity type a question's answer should have, or None if it names none."""
    for match in _WHICH.finditer(text):
        noun = match.group(1).lower()
        for kind, nouns in ANSWER_TYPES.items():
            if noun in nouns or noun.removesuffix("s") in nouns:
                return kind
    if _WHERE.search(text):
        return "Location"
    if _WHO.search(text):
        return "Person"
    return None
