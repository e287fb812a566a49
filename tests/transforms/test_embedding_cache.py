"""The embedding cache: each distinct text is encoded once per (encoder, role)."""

import numpy as np
import pytest

from transforms.embedding import DEFAULT_ENCODER, encode
from transforms.embedding_cache import EmbeddingCache, cached_embed


class CountingEncoder:
    """The real packaged encoder, counting the texts it is asked to encode."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts):
        self.texts.extend(texts)
        return encode(texts)


def test_each_distinct_text_is_encoded_once_across_calls_and_caches(tmp_path):
    encoder = CountingEncoder()
    cache = EmbeddingCache(tmp_path / "cache" / "embeddings.duckdb")
    embed = cached_embed(encoder, cache, DEFAULT_ENCODER, "passage")
    texts = ["Acme opened an office.", "Priya works in Rotterdam.", "Acme opened an office."]
    first = embed(texts)
    assert encoder.texts == texts[:2]
    np.testing.assert_allclose(first, encode(texts), atol=1e-6)
    reopened = cached_embed(encoder, EmbeddingCache(cache.path), DEFAULT_ENCODER, "passage")
    np.testing.assert_array_equal(reopened(list(reversed(texts))), first[::-1])
    assert len(encoder.texts) == 2, "a new cache object on the same file encodes nothing"
    other_role = cached_embed(encoder, cache, DEFAULT_ENCODER, "query")
    other_role(texts[:1])
    assert len(encoder.texts) == 3 and cache.count(DEFAULT_ENCODER) == 3
    assert embed([]).shape == (0, 384)


def test_each_batch_is_cached_as_soon_as_it_is_encoded(tmp_path):
    """A stage stopped after its first batch (here: the encoder fails on the second)
    keeps that batch, and the re-run encodes only what is left."""
    cache = EmbeddingCache(tmp_path / "embeddings.duckdb")
    texts = [f"Passage number {i} about Leeds." for i in range(5)]
    calls: list[int] = []

    def stops_after_one_batch(batch):
        calls.append(len(batch))
        if len(calls) == 2:
            raise KeyboardInterrupt("stopped")
        return encode(batch)

    with pytest.raises(KeyboardInterrupt):
        cached_embed(stops_after_one_batch, cache, DEFAULT_ENCODER, "passage", batch=2)(texts)
    assert cache.count(DEFAULT_ENCODER) == 2
    encoder = CountingEncoder()
    vectors = cached_embed(encoder, cache, DEFAULT_ENCODER, "passage", batch=2)(texts)
    assert encoder.texts == texts[2:]
    np.testing.assert_allclose(vectors, encode(texts), atol=1e-6)
    assert cache.missing(DEFAULT_ENCODER, "passage", [*texts, "new", "new"]) == ["new"]
