"""Cross-encoder reranking of a strategy's first passages.

Any sentence-transformers cross-encoder, by Hugging Face model id or local directory
(`kgmem query --reranker MODEL`, `Memory.query(..., reranker=MODEL)`): the first
`RERANK_DEPTH` passages of the strategy are scored as (query, passage search text) pairs
and put in the order of those scores; passages below that depth keep their places after
them. The model loads once per process, on CUDA when present.

No cross-encoder ships inside a PyPI package (the hubs are unreachable offline), so there
is no default reranker: the option stays off unless a model is named. Where the papers are
silent, chosen here: depth 20, twice MuSiQue's and LoCoMo's deepest cut-off (10), so that
a reranker can lift a passage from just outside the cut-off without scoring the whole
candidate pool.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from transforms.model_refs import check_hub_model

RERANK_DEPTH = 20


@functools.cache
def load_cross_encoder(model: str) -> Any:
    """The cross-encoder `model` (id or path), loaded once; CUDA when available. A model
    that cannot be loaded is a bad option value (ValueError), named in the message; one
    that is neither a folder nor a hub model this process can reach (in offline mode: in
    the local hub cache) is refused before the hub client retries for minutes
    (`transforms.model_refs`)."""
    check_hub_model("--reranker", model)
    import torch
    from sentence_transformers import CrossEncoder

    device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        return CrossEncoder(model, device=device)
    except OSError as exc:
        raise ValueError(
            f"reranker {model!r} is neither a reachable Hugging Face model id nor a "
            "directory holding a cross-encoder"
        ) from exc


def rerank_scores(model: str, query: str, passages: Sequence[str]) -> list[float]:
    """The cross-encoder's relevance score of each (query, passage) pair."""
    if not passages:
        return []
    scores = load_cross_encoder(model).predict([(query, p) for p in passages])
    return [float(s) for s in scores]


def reranked_order(scores: Sequence[float]) -> list[int]:
    """Positions by descending score, ties in their original order."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))
