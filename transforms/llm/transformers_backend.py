"""Backend for any Hugging Face causal LM (a hub id or a local directory) via transformers.

Runs on CUDA when available, else on CPU (or on the `device` given). A tokenizer with a
chat template gets the request as chat messages (a template that refuses a system turn
gets the instruction folded into the first user turn); one without gets the plain
few-shot completion prompt, stopped where the next example would begin. There is no
constrained decoding here: the answer is validated afterwards like any other. Greedy
decoding at temperature 0.

The timeout is transformers' own `max_time`; an answer cut off by it is a permanent
failure, as is a prompt longer than the model's context. Calls are serialised
(`max_parallel` 1): one model instance, one generation at a time.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import torch
from jinja2 import TemplateError
from transformers import AutoModelForCausalLM, AutoTokenizer

from transforms.llm.base import COMPLETION_STOP, Completion, CompletionRequest, LLMError


def default_device() -> str:
    """`cuda` when a GPU is visible, else `cpu`."""
    return "cuda" if torch.cuda.is_available() else "cpu"


class TransformersBackend:
    """Greedy generation with a causal LM loaded once."""

    name = "transformers"
    max_parallel = 1

    def __init__(self, model: str, *, device: str | None = None) -> None:
        self.model = model
        self.device = device or default_device()
        dtype = torch.float32 if self.device == "cpu" else "auto"
        self._tokenizer = AutoTokenizer.from_pretrained(model)
        self._lm = AutoModelForCausalLM.from_pretrained(model, dtype=dtype).to(self.device)
        self._lm.eval()
        self._lock = threading.Lock()

    def complete(self, request: CompletionRequest, timeout_s: float) -> Completion:
        prompt, chat = self._prompt(request)
        encoded = self._tokenizer(prompt, return_tensors="pt", add_special_tokens=not chat)
        # Only what every causal LM takes (a BERT-style tokenizer adds token_type_ids).
        inputs = {k: encoded[k].to(self.device) for k in ("input_ids", "attention_mask")}
        prompt_tokens = int(inputs["input_ids"].shape[1])
        limit = getattr(self._lm.config, "max_position_embeddings", None)
        if limit is not None and prompt_tokens + request.max_tokens > limit:
            raise LLMError(
                f"{prompt_tokens} prompt + {request.max_tokens} new tokens exceed the "
                f"model's {limit}-token context",
                transient=False,
            )
        started = time.monotonic()
        with self._lock, torch.inference_mode():
            output = self._lm.generate(**inputs, **self._generation_args(request, chat, timeout_s))
        if time.monotonic() - started >= timeout_s:
            raise LLMError(f"generation exceeded the {timeout_s}s timeout", transient=False)
        new_tokens = output[0, prompt_tokens:]
        text = self._tokenizer.decode(new_tokens, skip_special_tokens=True)
        if not chat:
            text = text.split(COMPLETION_STOP)[0]
        return Completion(text, prompt_tokens, int(new_tokens.shape[0]), self.model, self.name)

    def _prompt(self, request: CompletionRequest) -> tuple[str, bool]:
        """The prompt text, and whether it came from the chat template."""
        if not self._tokenizer.chat_template:
            return request.completion_prompt(), False
        messages = request.chat_messages()
        try:
            text = self._tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        except TemplateError:
            system, first, *rest = messages
            merged = {"role": "user", "content": f"{system['content']}\n\n{first['content']}"}
            text = self._tokenizer.apply_chat_template(
                [merged, *rest], tokenize=False, add_generation_prompt=True
            )
        return text, True

    def _generation_args(
        self, request: CompletionRequest, chat: bool, timeout_s: float
    ) -> dict[str, Any]:
        pad = self._tokenizer.pad_token_id
        args: dict[str, Any] = {
            "max_new_tokens": request.max_tokens,
            "max_time": timeout_s,
            "pad_token_id": pad if pad is not None else self._tokenizer.eos_token_id,
            "do_sample": request.temperature > 0,
        }
        if request.temperature > 0:
            args["temperature"] = request.temperature
        if not chat:
            args["stop_strings"] = [COMPLETION_STOP]
            args["tokenizer"] = self._tokenizer
        return args
