"""From an LLM answer to `LLM_TRIPLETS` rows: parse, validate, anchor, or quarantine.

An answer is read as the first JSON object in the text (chat models wrap answers in code
fences or add a sentence after them), then validated with the prompt's pydantic model.
Each item is kept only when every entity end matches a mention or speaker of the segment
(`transforms.llm.matching`), its two ends are different entities, and, for MemORAI
triplets, every cited turn was shown to the model. Nothing is dropped silently: a failed
call, unreadable JSON or a schema violation quarantines the whole answer with its raw
text; a bad item quarantines that item with the reason. Relations are normalised to
lower snake_case ("Works at" -> "works_at"). An item repeated within one answer yields one
row (rows are keyed by content).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from schemas.llm_outputs import LLM_TRIPLETS, AtomicFact, Thesis, TurnTriplet
from transforms.ids import content_id
from transforms.llm.gate import PlannedCall
from transforms.llm.matching import DEFAULT_FUZZY_THRESHOLD, EntityMatch, MentionMatcher
from transforms.llm.prompts import Prompt, turns_of
from transforms.llm.runner import CallOutcome
from transforms.quarantine import QuarantineRecord

STAGE = "llm_triplets"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_NON_WORD = re.compile(r"\W+")


class AnswerError(ValueError):
    """An answer that cannot be read as the prompt's output model; the message is the reason."""


def parse_answer(prompt: Prompt, text: str) -> BaseModel:
    """The answer `text` as `prompt.output_model`, or `AnswerError` saying why not."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        raise AnswerError("invalid JSON: no JSON object in the answer")
    try:
        data, _ = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError as exc:
        raise AnswerError(f"invalid JSON: {exc}") from exc
    try:
        return prompt.output_model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
            for e in exc.errors()[:3]
        )
        raise AnswerError(f"schema violation ({exc.error_count()} errors): {problems}") from exc


def relation_name(relation: str) -> str:
    """Lower snake_case of a free-form relation ('' if nothing is left)."""
    return _NON_WORD.sub("_", relation.casefold()).strip("_")


@dataclass
class Extraction:
    """Rows extracted from answers and the records quarantined on the way."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[QuarantineRecord] = field(default_factory=list)


@dataclass(frozen=True)
class _Context:
    """What every row and quarantine record of one answer shares."""

    segment: Mapping[str, Any]
    prompt: Prompt
    outcome: CallOutcome
    backend: str
    model: str
    matcher: MentionMatcher
    turns: list[dict[str, str]]

    @property
    def record_ref(self) -> str:
        return f"{self.segment['segment_id']}/{self.prompt.version_id}"

    def quarantine(self, reason: str, raw: str, item: int | None = None) -> QuarantineRecord:
        ref = self.record_ref if item is None else f"{self.record_ref}#{item}"
        return QuarantineRecord(STAGE, self.segment["doc_id"], ref, reason, raw)

    def speaker(self, cited: Sequence[str] = ()) -> str | None:
        """Who "I" is: the speaker of the first cited turn, else of the segment."""
        by_id = {t["turn_id"]: t["speaker"] for t in self.turns}
        for turn_id in cited:
            if by_id.get(turn_id):
                return by_id[turn_id]
        return self.segment.get("speaker") or (self.turns[-1]["speaker"] if self.turns else None)

    def row(self, **values: Any) -> dict[str, Any]:
        extractor = f"llm:{self.backend}:{self.model}:{self.prompt.version_id}"
        row: dict[str, Any] = dict.fromkeys(LLM_TRIPLETS.names)
        row.update(
            collection=self.segment["collection"],
            segment_id=self.segment["segment_id"],
            doc_id=self.segment["doc_id"],
            output_kind=self.prompt.output_kind,
            prompt_version=self.prompt.version_id,
            backend=self.backend,
            model=self.model,
            cache_key=self.outcome.cache_key,
            extractor=extractor,
            **values,
        )
        identity = [row[k] for k in ("head_text", "relation", "tail_text", "thesis")]
        identity += [row["valid_from"], row["valid_to"], row["source_turns"]]
        row["triplet_id"] = content_id(row["segment_id"], extractor, *identity)
        return row


def extract(
    call: PlannedCall,
    outcome: CallOutcome,
    backend: str,
    model: str,
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
) -> Extraction:
    """Rows and quarantine records of one call's outcome."""
    segment, prompt = call.segment, call.prompt
    turns = turns_of(segment)
    speakers = [t["speaker"] for t in turns if t["speaker"]]
    matcher = MentionMatcher(segment.get("mentions") or [], speakers, fuzzy_threshold)
    ctx = _Context(segment, prompt, outcome, backend, model, matcher, turns)
    result = Extraction()
    if outcome.completion is None:
        reason = f"LLM call failed after {outcome.attempts} attempt(s): {outcome.error}"
        result.quarantined.append(ctx.quarantine(reason, call.request.input))
        return result
    try:
        answer = parse_answer(prompt, outcome.completion.text)
    except AnswerError as exc:
        result.quarantined.append(ctx.quarantine(str(exc), outcome.completion.text))
        return result
    seen: set[str] = set()
    for index, item in enumerate(_items(answer)):
        try:
            row = _row_of(ctx, item)
        except AnswerError as exc:
            result.quarantined.append(ctx.quarantine(str(exc), item.model_dump_json(), index))
            continue
        if row["triplet_id"] not in seen:
            seen.add(row["triplet_id"])
            result.rows.append(row)
    return result


def _items(answer: BaseModel) -> list[AtomicFact | TurnTriplet | Thesis]:
    """The items of an answer: each output model has exactly one field, its list."""
    return getattr(answer, next(iter(type(answer).model_fields)))


def _row_of(ctx: _Context, item: AtomicFact | TurnTriplet | Thesis) -> dict[str, Any]:
    if isinstance(item, Thesis):
        return _thesis_row(ctx, item)
    cited = list(dict.fromkeys(item.source_turns)) if isinstance(item, TurnTriplet) else []
    if cited:
        unknown = sorted(set(cited) - {t["turn_id"] for t in ctx.turns})
        if unknown:
            raise AnswerError(f"cites turns that were not in the input: {unknown}")
    speaker = ctx.speaker(cited)
    head = ctx.matcher.match(item.head, speaker)
    tail = ctx.matcher.match(item.tail, speaker)
    ends = (("head", item.head, head), ("tail", item.tail, tail))
    unmatched = [f"{end} {name!r}" for end, name, found in ends if found is None]
    if unmatched:
        raise AnswerError("no matching mention for " + " and ".join(unmatched))
    assert head is not None and tail is not None
    if (head.text, head.char_start) == (tail.text, tail.char_start):
        raise AnswerError(f"head and tail are the same entity {head.text!r}")
    relation = relation_name(item.relation)
    if not relation:
        raise AnswerError(f"relation {item.relation!r} has no word characters")
    values = {**_end("head", head), **_end("tail", tail), "relation": relation}
    if isinstance(item, AtomicFact):
        values |= {
            "valid_from": _instant(item.valid_from),
            "valid_to": _instant(item.valid_to),
            "confidence": item.confidence,
            "intent": item.intent.value,
            "source_turns": _own_turn(ctx),
        }
    else:
        values["source_turns"] = cited
    return ctx.row(**values)


def _thesis_row(ctx: _Context, thesis: Thesis) -> dict[str, Any]:
    speaker = ctx.speaker()
    matches = {name: ctx.matcher.match(name, speaker) for name in thesis.entities}
    unmatched = [name for name, m in matches.items() if m is None]
    if unmatched:
        raise AnswerError(f"no matching mention for thesis entities {unmatched}")
    entities = {(m.text, m.char_start): m for m in matches.values() if m is not None}
    return ctx.row(
        thesis=thesis.text,
        thesis_entities=[m.as_struct() for m in entities.values()],
        source_turns=_own_turn(ctx),
    )


def _end(prefix: str, match: EntityMatch) -> dict[str, Any]:
    return {
        f"{prefix}_text": match.text,
        f"{prefix}_type": match.entity_type,
        f"{prefix}_start": match.char_start,
        f"{prefix}_end": match.char_end,
        f"{prefix}_match": match.match,
    }


def _own_turn(ctx: _Context) -> list[str] | None:
    turn_id = ctx.segment.get("turn_id")
    return [turn_id] if turn_id else None


def _instant(day: date | None) -> datetime | None:
    return datetime(day.year, day.month, day.day, tzinfo=UTC) if day else None
