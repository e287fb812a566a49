"""The gate: which segments go to the LLM, with which prompts.

LLM calls are the expensive part of a build, so each segment kind gets an explicit list of
prompts and a budget of calls per segment. By default every extractable segment (document
chunk or conversation turn) gets one call, REAL's atomic-fact prompt (REAL extracts turn
by turn; its sextuples carry the time and confidence the fact stage needs), and a
conversation session, if one is fed in with its turns, gets MemORAI's turn-cited
triplets. A segment is skipped when its text is empty or it has fewer than
`min_entities` NER mentions of a graph entity type (Person, Organization, Location,
Concept, Event): with nothing to anchor an answer to, every item would be quarantined.
For the same reason a prompt that cites turns skips a segment that has none.

This is the write-time analogue of MemORAI's selective memory gate, done without an LLM
call: the paper's gate is itself a prompt per segment, which would double the calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from transforms.entity_types import KGERMAR_TYPES
from transforms.llm.base import CompletionRequest
from transforms.llm.prompts import (
    MEMORAI_TRIPLETS_V1,
    REAL_ATOMIC_FACTS_V1,
    Prompt,
    get_prompt,
    turns_of,
)

DEFAULT_PROMPTS: dict[str, tuple[str, ...]] = {
    "chunk": (REAL_ATOMIC_FACTS_V1.version_id,),
    "turn": (REAL_ATOMIC_FACTS_V1.version_id,),
    "session": (MEMORAI_TRIPLETS_V1.version_id,),
}


@dataclass(frozen=True)
class GateConfig:
    """Prompts per segment kind (version ids), the call budget per segment, and how many
    mentions of `entity_types` a segment needs to be worth a call."""

    prompts: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_PROMPTS))
    max_calls_per_segment: int = 1
    entity_types: tuple[str, ...] = KGERMAR_TYPES
    min_entities: int = 1

    def __post_init__(self) -> None:
        for kind, version_ids in self.prompts.items():
            if len(version_ids) > self.max_calls_per_segment:
                raise ValueError(
                    f"{len(version_ids)} prompts for {kind!r} segments exceed the budget of "
                    f"{self.max_calls_per_segment} call(s) per segment"
                )
            for version_id in version_ids:
                if kind not in get_prompt(version_id).segment_kinds:
                    raise ValueError(f"prompt {version_id!r} does not apply to {kind!r} segments")


@dataclass(frozen=True)
class PlannedCall:
    """One call the gate let through: the segment, the prompt and the rendered request."""

    segment: Mapping[str, Any]
    prompt: Prompt
    request: CompletionRequest


@dataclass
class GatePlan:
    """The calls to make, and how many segments were kept back for which reason."""

    calls: list[PlannedCall] = field(default_factory=list)
    gated_out: Counter[str] = field(default_factory=Counter)


def gate_reason(segment: Mapping[str, Any], cfg: GateConfig) -> str | None:
    """Why `segment` gets no call (None: it gets its kind's prompts)."""
    if not cfg.prompts.get(segment["kind"]):
        return f"no prompt for {segment['kind']} segments"
    if not (segment.get("text") or "").strip():
        return "empty text"
    mentions = segment.get("mentions") or []
    entities = sum(m["entity_type"] in cfg.entity_types for m in mentions)
    if entities < cfg.min_entities:
        return "too few graph entities"
    cites_turns = any(get_prompt(v).cites_turns for v in cfg.prompts[segment["kind"]])
    if cites_turns and not turns_of(segment):
        return "no turns to cite"
    return None


def plan_calls(
    segments: Iterable[Mapping[str, Any]], cfg: GateConfig, temperature: float = 0.0
) -> GatePlan:
    """The calls the gate allows for `segments`, in input order."""
    plan = GatePlan()
    for segment in segments:
        reason = gate_reason(segment, cfg)
        if reason is not None:
            plan.gated_out[reason] += 1
            continue
        for version_id in cfg.prompts[segment["kind"]]:
            prompt = get_prompt(version_id)
            plan.calls.append(PlannedCall(segment, prompt, prompt.request(segment, temperature)))
    return plan
