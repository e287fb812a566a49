"""Creating the configured backend, once per worker process.

Backends are imported lazily: the HTTP backend needs neither llama-cpp-python nor torch,
and loading a model is paid once per process however many DoFn instances share it.
"""

from __future__ import annotations

import functools

from transforms.llm.base import LLMBackend
from transforms.llm.config import LLMConfig


def create_backend(cfg: LLMConfig) -> LLMBackend:
    """A new backend for `cfg` (environment fallbacks applied)."""
    cfg = cfg.resolve_from_env()
    if cfg.backend == "openai":
        from transforms.llm.http_backend import OpenAICompatibleBackend

        assert cfg.base_url is not None and cfg.model is not None
        return OpenAICompatibleBackend(
            cfg.base_url,
            cfg.model,
            api_key=cfg.api_key_from(),
            response_format=cfg.response_format,
            max_parallel=cfg.max_concurrency,
        )
    if cfg.backend == "transformers":
        from transforms.llm.transformers_backend import TransformersBackend

        assert cfg.model is not None
        return TransformersBackend(cfg.model, device=cfg.device)
    from transforms.llm.llama_cpp_backend import LlamaCppBackend

    return LlamaCppBackend(
        cfg.model,
        model_dir=cfg.model_dir,
        n_threads=cfg.n_threads,
        n_ctx=cfg.n_ctx,
        grammar=cfg.grammar,
    )


@functools.cache
def shared_backend(cfg: LLMConfig) -> LLMBackend:
    """The process-wide backend for `cfg` (created on first use)."""
    return create_backend(cfg)
