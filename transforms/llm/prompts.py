"""Versioned extraction prompts: REAL atomic facts, MemORAI turn-cited triplets and
PersonalAI theses.

A prompt is addressed as "name/vN" (`real_atomic_facts/v1`); any change to its wording,
examples or output schema gets a new version, so cached answers of the old one are never
served for the new one. Each prompt is an instruction plus few-shot examples (made-up
people and firms, so nothing leaks from the sample corpus) and renders a segment the same
way: its date, the entity names it may use, then its text or its numbered turns. Listing
the NER mentions and speakers steers the model to names that the stage can match back to
the segment.

Where the papers are silent or prompt-free (`../shared/papers/`), the choices are ours:

- REAL gives no prompt text. The instruction encodes what the paper says about the
  sextuple: confidence from hedging vs assertive cues, the intent trigger words (FACT as
  the default), valid_from from an explicit time (null otherwise; the fact stage falls
  back on the utterance time), valid_to null for still-valid facts. Relations are
  free-form snake_case, as in the paper's examples. With context turns, only the last
  turn is extracted from, keeping REAL's one call per turn.
- MemORAI's extraction prompt (App. C.6) is followed in role, principles and relation
  guidance, but the answer is JSON, not `entity1|relation|entity2|indices` lines, so the
  schema validation the paper asks for is exact; turns are cited by their turn ids.
  It applies to conversation turns and sessions only.
- PersonalAI's prompt texts are missing from the paper; a thesis is "a complete atomic
  thought expressed in the text" with the entities it connects, so the prompt asks for
  standalone statements (names instead of pronouns) and their entities.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from schemas.llm_outputs import AtomicFacts, Theses, TurnTriplets
from transforms.llm.base import CompletionRequest

CONVERSATION_KINDS = ("turn", "session")
ALL_KINDS = ("chunk", *CONVERSATION_KINDS)


def turns_of(segment: Mapping[str, Any]) -> list[dict[str, str]]:
    """The turns shown to the model: the segment's `turns`, else its own turn, else none."""
    if segment.get("turns"):
        return [dict(turn) for turn in segment["turns"]]
    if segment.get("turn_id"):
        turn = {"turn_id": segment["turn_id"], "speaker": segment.get("speaker") or ""}
        return [{**turn, "text": segment["text"]}]
    return []


def entity_names(segment: Mapping[str, Any]) -> list[str]:
    """Distinct speaker names and mention texts of the segment, in order of appearance."""
    names = [t["speaker"] for t in turns_of(segment) if t["speaker"]]
    names += [m["text"] for m in segment.get("mentions") or []]
    return list(dict.fromkeys(n.strip() for n in names if n and n.strip()))


def render_input(segment: Mapping[str, Any]) -> str:
    """The segment as the prompts show it: date, entities, then turns or text."""
    lines = []
    if segment.get("observed_at") is not None:
        lines.append(f"Date: {segment['observed_at'].date().isoformat()}")
    lines.append("Entities: " + "; ".join(entity_names(segment)))
    turns = turns_of(segment)
    if turns:
        lines.append("Turns:")
        lines += [f"[{t['turn_id']}] {t['speaker']}: {t['text'].strip()}" for t in turns]
    else:
        lines.append(f"Text: {segment['text'].strip()}")
    return "\n".join(lines)


def _schema_json(model: type[BaseModel]) -> str:
    """The model's JSON schema without titles and descriptions (docstring edits must not
    change the request, and they are noise to the model)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: strip(v)
                for k, v in node.items()
                if not (k in {"title", "description"} and isinstance(v, str))
            }
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return json.dumps(strip(model.model_json_schema()))


@dataclass(frozen=True)
class Prompt:
    """One versioned extraction prompt and the output model its answer must validate as."""

    name: str
    version: str
    output_model: type[BaseModel]
    output_kind: str
    instruction: str
    examples: tuple[tuple[str, str], ...]
    max_tokens: int
    segment_kinds: tuple[str, ...]
    cites_turns: bool = False

    @property
    def version_id(self) -> str:
        """ "name/version", the prompt's address in configuration, cache and rows."""
        return f"{self.name}/{self.version}"

    def request(self, segment: Mapping[str, Any], temperature: float = 0.0) -> CompletionRequest:
        """The completion request that asks this prompt about `segment`."""
        return CompletionRequest(
            prompt_version=self.version_id,
            instruction=self.instruction,
            examples=self.examples,
            input=render_input(segment),
            schema_json=_schema_json(self.output_model),
            max_tokens=self.max_tokens,
            temperature=temperature,
        )


REAL_ATOMIC_FACTS_V1 = Prompt(
    name="real_atomic_facts",
    version="v1",
    output_model=AtomicFacts,
    output_kind="atomic_fact",
    instruction=(
        'Extract atomic facts from the input as JSON {"facts": [...]}. A fact links two '
        "entities named on the Entities line (copy the names exactly; in a conversation "
        '"I" and "my" mean the speaker): head, relation (a short snake_case verb phrase such '
        "as works_at, lives_in, acquired), tail. valid_from and valid_to are YYYY-MM-DD dates "
        "when the text says when the fact began or ended, else null. confidence is between 0 "
        "and 1: about 0.5 for hedged statements (might, maybe, perhaps, planning), 0.9 or "
        "more for definite ones. intent is CAUSAL for cause and effect (because, led to), "
        "TEMPORAL for order in time (before, after, since a date), CONTRAST for comparisons "
        "or conflicts (but, instead, unlike), EVOLUTION for a change over time (used to, now, "
        "no longer, moved), otherwise FACT. In a conversation extract only what the last "
        "turn states; earlier turns are context. Extract only what the text states; answer "
        '{"facts": []} if it states no fact between the entities.'
    ),
    examples=(
        (
            "Date: 2018-06-12\n"
            "Entities: Kari Berg; Lumen Robotics; March 2017; Oslo\n"
            "Text: Kari Berg has been the CEO of Lumen Robotics since March 2017. "
            "Lumen Robotics might open an office in Oslo.",
            '{"facts": [{"head": "Kari Berg", "relation": "ceo_of", "tail": "Lumen Robotics", '
            '"valid_from": "2017-03-01", "valid_to": null, "confidence": 0.95, '
            '"intent": "TEMPORAL"}, {"head": "Lumen Robotics", "relation": "may_open_office_in", '
            '"tail": "Oslo", "valid_from": null, "valid_to": null, "confidence": 0.5, '
            '"intent": "FACT"}]}',
        ),
        (
            "Date: 2022-09-03\n"
            "Entities: Assistant; Dana Ruiz; Lisbon; Porto; last year\n"
            "Turns:\n"
            "[S2:4] Assistant: Where are you based these days?\n"
            "[S2:5] Dana Ruiz: I used to live in Lisbon, but I moved to Porto last year.",
            '{"facts": [{"head": "Dana Ruiz", "relation": "lives_in", "tail": "Porto", '
            '"valid_from": "2021-01-01", "valid_to": null, "confidence": 0.9, '
            '"intent": "EVOLUTION"}, {"head": "Dana Ruiz", "relation": "lives_in", '
            '"tail": "Lisbon", "valid_from": null, "valid_to": "2021-01-01", '
            '"confidence": 0.9, "intent": "EVOLUTION"}]}',
        ),
    ),
    max_tokens=384,
    segment_kinds=ALL_KINDS,
)

MEMORAI_TRIPLETS_V1 = Prompt(
    name="memorai_triplets",
    version="v1",
    output_model=TurnTriplets,
    output_kind="turn_triplet",
    instruction=(
        "You are a knowledge graph extractor that identifies factual statements from "
        "conversation participants. Extract explicitly stated information only, without "
        "inference, and treat all participants equally: stated facts, preferences, "
        "interests and plans. Name a participant as written before the colon and replace "
        "pronouns (I, me, my, you) with the name they refer to. Copy entity names exactly "
        "from the Entities line. Prefer these relations: is, is_a, has_age, is_from, "
        "lives_in, works_at, studies_at, has_role, likes, prefers, enjoys, "
        "is_interested_in, is_planning_to, wants_to, considering. In source_turns cite the "
        "bracketed ids of every turn a triplet comes from. Answer as JSON "
        '{"triplets": [...]}, or {"triplets": []} when nothing is stated.'
    ),
    examples=(
        (
            "Date: 2022-05-14\n"
            "Entities: An; Binh; Apple; Microsoft\n"
            "Turns:\n"
            "[S1:1] An: I'm a designer at Apple.\n"
            "[S1:2] Binh: Nice! I work at Microsoft as a PM.\n"
            "[S1:3] An: Apple keeps me busy, but I'm planning to visit Microsoft next week.",
            '{"triplets": [{"head": "An", "relation": "works_at", "tail": "Apple", '
            '"source_turns": ["S1:1", "S1:3"]}, {"head": "Binh", "relation": "works_at", '
            '"tail": "Microsoft", "source_turns": ["S1:2"]}, {"head": "An", '
            '"relation": "is_planning_to_visit", "tail": "Microsoft", "source_turns": ["S1:3"]}]}',
        ),
    ),
    max_tokens=320,
    segment_kinds=CONVERSATION_KINDS,
    cites_turns=True,
)

PERSONALAI_THESES_V1 = Prompt(
    name="personalai_theses",
    version="v1",
    output_model=Theses,
    output_kind="thesis",
    instruction=(
        "Extract theses from the input: complete atomic statements that the text "
        "expresses, each rewritten to stand alone (names instead of pronouns), with the "
        "entities it connects copied exactly from the Entities line. Answer as JSON "
        '{"theses": [...]}, or {"theses": []} when the text states nothing about the '
        "entities."
    ),
    examples=(
        (
            "Date: 2019-11-02\n"
            "Entities: Harbor Mills; Ghent; Pieter Claes; 2015\n"
            "Text: Harbor Mills, a textile maker based in Ghent, was founded by Pieter Claes "
            "in 2015.",
            '{"theses": [{"text": "Harbor Mills is a textile maker based in Ghent.", '
            '"entities": ["Harbor Mills", "Ghent"]}, {"text": "Pieter Claes founded Harbor '
            'Mills in 2015.", "entities": ["Pieter Claes", "Harbor Mills", "2015"]}]}',
        ),
    ),
    max_tokens=384,
    segment_kinds=ALL_KINDS,
)

PROMPTS: dict[str, Prompt] = {
    p.version_id: p for p in (REAL_ATOMIC_FACTS_V1, MEMORAI_TRIPLETS_V1, PERSONALAI_THESES_V1)
}


def get_prompt(version_id: str) -> Prompt:
    """The prompt registered as `version_id` ("name/vN")."""
    try:
        return PROMPTS[version_id]
    except KeyError:
        raise KeyError(f"unknown prompt {version_id!r}; known: {sorted(PROMPTS)}") from None
