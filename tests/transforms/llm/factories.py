"""Builders shared by the LLM tests: segments with mentions, a scripted in-process
backend, and a responder for the fake HTTP server that answers from the prompt."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from tests.transforms.llm.fake_openai_server import chat_response
from transforms.llm.base import Completion, CompletionRequest, LLMError

TYPES = {"PERSON": "Person", "ORG": "Organization", "GPE": "Location", "DATE": "Value"}


def make_segment(
    text: str,
    mentions: Sequence[tuple[str, str]] = (),
    *,
    segment_id: str = "s1",
    kind: str = "chunk",
    speaker: str | None = None,
    turn_id: str | None = None,
    turns: Sequence[dict[str, str]] | None = None,
    observed_at: datetime | None = datetime(2023, 1, 9, tzinfo=UTC),
) -> dict[str, Any]:
    """An `LLM_SEGMENTS` row; mentions are (surface, spaCy label) found in `text`."""
    found = []
    for surface, label in mentions:
        start = text.index(surface)
        found.append(
            {
                "text": surface,
                "label": label,
                "entity_type": TYPES[label],
                "char_start": start,
                "char_end": start + len(surface),
            }
        )
    return {
        "segment_id": segment_id,
        "collection": "c",
        "doc_id": "d1",
        "kind": kind,
        "text": text,
        "speaker": speaker,
        "turn_id": turn_id,
        "observed_at": observed_at,
        "mentions": found,
        "turns": list(turns) if turns is not None else None,
    }


class ScriptedBackend:
    """An in-process backend answering from `answer(request)` (a string, or an exception
    to raise), counting calls and the most calls seen in flight at once."""

    name = "scripted"

    def __init__(
        self,
        answer: Callable[[CompletionRequest], str | Exception],
        *,
        model: str = "scripted-1",
        max_parallel: int = 8,
        delay_s: float = 0.0,
    ) -> None:
        self.model = model
        self.max_parallel = max_parallel
        self.calls: list[CompletionRequest] = []
        self.max_in_flight = 0
        self._answer = answer
        self._delay_s = delay_s
        self._in_flight = 0
        self._lock = threading.Lock()

    def complete(self, request: CompletionRequest, timeout_s: float) -> Completion:
        with self._lock:
            self.calls.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            time.sleep(self._delay_s)
            answer = self._answer(request)
        finally:
            with self._lock:
                self._in_flight -= 1
        if isinstance(answer, Exception):
            raise answer
        return Completion(answer, 100, 20, self.model, self.name)


def transient(message: str = "overloaded") -> LLMError:
    return LLMError(message, transient=True)


def entities_of(prompt_input: str) -> list[str]:
    """The names on the 'Entities:' line of a rendered segment."""
    line = next(ln for ln in prompt_input.splitlines() if ln.startswith("Entities: "))
    return [n for n in line.removeprefix("Entities: ").split("; ") if n]


def first_pair_fact(prompt_input: str) -> str:
    """A REAL answer linking the first two entities of the input (empty if fewer)."""
    names = entities_of(prompt_input)
    facts = []
    if len(names) >= 2:
        facts.append(
            {
                "head": names[0],
                "relation": "related to",
                "tail": names[1],
                "valid_from": None,
                "valid_to": None,
                "confidence": 0.9,
                "intent": "FACT",
            }
        )
    return json.dumps({"facts": facts})


def first_pair_responder(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Fake-server responder: `first_pair_fact` of the last user message."""
    return 200, chat_response(first_pair_fact(body["messages"][-1]["content"]))
