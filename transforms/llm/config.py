"""Configuration of the LLM stage: which backend answers, how calls are made, which
segments are sent, and where answers are cached.

Plain frozen dataclasses, so a Beam DoFn can carry them to workers. Fields left empty
fall back on the environment (`resolve_from_env`): `KGMEM_LLM_BACKEND`,
`KGMEM_LLM_MODEL`, `KGMEM_LLM_BASE_URL`; the API key (`KGMEM_LLM_API_KEY`, else
`OPENAI_API_KEY`) is read only where the backend is created, so it never travels inside
a pickled pipeline.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from transforms.llm.gate import GateConfig
from transforms.llm.matching import DEFAULT_FUZZY_THRESHOLD

BACKENDS = ("llama_cpp", "openai", "transformers")
DEFAULT_BACKEND = "llama_cpp"
OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class LLMConfig:
    """Backend choice and call policy.

    `model`: a GGUF path for llama_cpp (empty: the packaged Gemma-3-270M), the served
    model name for openai, a Hugging Face id or local directory for transformers.
    `response_format` applies to openai; `n_threads`, `n_ctx`, `grammar` and `model_dir`
    to llama_cpp; `device` to transformers. `max_concurrency` bounds calls in flight per
    worker process; each attempt gets `timeout_s`; transient failures are retried up to
    `max_attempts` times with exponential backoff from `backoff_base_s` to
    `backoff_max_s`, jittered.
    """

    backend: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    response_format: str = "json_schema"
    n_threads: int | None = None
    n_ctx: int = 4096
    grammar: bool = True
    model_dir: str | None = None
    device: str | None = None
    max_concurrency: int = 4
    timeout_s: float = 120.0
    max_attempts: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    temperature: float = 0.0

    def resolve_from_env(self, environ: Mapping[str, str] = os.environ) -> LLMConfig:
        """This config with backend, model and base URL filled from the environment."""
        backend = self.backend or environ.get("KGMEM_LLM_BACKEND") or DEFAULT_BACKEND
        if backend not in BACKENDS:
            raise ValueError(f"unknown LLM backend {backend!r}; choose one of {BACKENDS}")
        base_url = self.base_url or environ.get("KGMEM_LLM_BASE_URL")
        if backend == "openai" and not base_url:
            base_url = OPENAI_BASE_URL
        model = self.model or environ.get("KGMEM_LLM_MODEL")
        if backend != "llama_cpp" and not model:
            raise ValueError(f"the {backend} backend needs a model (or KGMEM_LLM_MODEL)")
        return replace(self, backend=backend, model=model, base_url=base_url)

    def api_key_from(self, environ: Mapping[str, str] = os.environ) -> str | None:
        """The API key: configured, else `KGMEM_LLM_API_KEY`, else `OPENAI_API_KEY`."""
        return self.api_key or environ.get("KGMEM_LLM_API_KEY") or environ.get("OPENAI_API_KEY")


@dataclass(frozen=True)
class LLMStageConfig:
    """Everything the `llm_triplets` pipeline needs: the LLM, the gate, the cache file
    (a DuckDB database of its own, see `transforms.llm.cache`), the segments per batch
    and the fuzzy threshold of entity matching."""

    cache_path: str
    llm: LLMConfig = field(default_factory=LLMConfig)
    gate: GateConfig = field(default_factory=GateConfig)
    max_batch_size: int = 16
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD
