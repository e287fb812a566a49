"""The one interface every LLM backend implements, and the request and answer it exchanges.

A `CompletionRequest` is backend-neutral: an instruction, few-shot examples, the input and
the JSON schema the answer must follow. Chat backends send it as messages
(`chat_messages`); base models without a chat template get the same content as a plain
few-shot completion prompt (`completion_prompt`). Its `input_hash` covers everything that
can change the answer, so it keys the call cache together with backend, model and prompt
version.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

COMPLETION_STOP = "\n\nInput:"
"""Where a few-shot completion would start inventing the next example: generation stops."""


class LLMError(Exception):
    """A failed call. `transient` errors (timeouts, overload, 5xx) are worth retrying;
    the others (bad request, missing model, context overflow) fail the same way again."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


@dataclass(frozen=True)
class CompletionRequest:
    """What to ask: `prompt_version` ("name/vN") names the template that produced it."""

    prompt_version: str
    instruction: str
    examples: tuple[tuple[str, str], ...]
    input: str
    schema_json: str
    max_tokens: int
    temperature: float = 0.0

    @property
    def json_schema(self) -> dict[str, Any]:
        """The answer's JSON schema as a dict."""
        return json.loads(self.schema_json)

    @cached_property
    def input_hash(self) -> str:
        """sha256 of every field: the same hash means the same question."""
        payload = json.dumps(
            [
                self.prompt_version,
                self.instruction,
                self.examples,
                self.input,
                self.schema_json,
                self.max_tokens,
                self.temperature,
            ],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def chat_messages(self) -> list[dict[str, str]]:
        """System instruction, each example as a user/assistant exchange, then the input."""
        messages = [{"role": "system", "content": self.instruction}]
        for example_input, example_output in self.examples:
            messages.append({"role": "user", "content": example_input})
            messages.append({"role": "assistant", "content": example_output})
        messages.append({"role": "user", "content": self.input})
        return messages

    def completion_prompt(self) -> str:
        """The request as one few-shot text for a base model: the answer follows 'Output:'."""
        blocks = [self.instruction.strip()]
        blocks += [f"Input:\n{i.strip()}\nOutput: {o.strip()}" for i, o in self.examples]
        blocks.append(f"Input:\n{self.input.strip()}\nOutput:")
        return "\n\n".join(blocks)


@dataclass(frozen=True)
class Completion:
    """What came back: the raw text, token counts, the model that served it, the backend."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str
    backend: str


class LLMBackend(Protocol):
    """An LLM that answers a `CompletionRequest` within `timeout_s` seconds.

    `name` (the backend kind) and `model` (a stable identity of the weights) key the call
    cache; `max_parallel` is how many calls it can serve at once (1 for an in-process
    model that is not thread-safe). Failures raise `LLMError`.
    """

    name: str
    model: str
    max_parallel: int

    def complete(self, request: CompletionRequest, timeout_s: float) -> Completion: ...
