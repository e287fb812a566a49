"""The embedding stage's progress: one total, announced before the first text is encoded."""

from pipelines.graph_embeddings import encode_missing, span_pooled_key
from transforms.embedding import DEFAULT_ENCODER, encode
from transforms.embedding_cache import EmbeddingCache, cached_embed
from transforms.progress import read_progress


def test_one_total_from_the_start_counting_only_texts_the_cache_lacks(tmp_path):
    cache = EmbeddingCache(tmp_path / "embeddings.duckdb")
    cached_embed(encode, cache, DEFAULT_ENCODER, "passage")(["Acme is in Leeds."])
    progress = tmp_path / "progress.log"
    seen = []

    def observed(texts):
        seen.append(read_progress(progress))
        return encode(texts)

    windows = span_pooled_key(DEFAULT_ENCODER)
    needed = {
        DEFAULT_ENCODER: ["Acme is in Leeds.", "Priya", "Bo", "Priya", "Leeds"],
        windows: ["Priya", "Ana"],
    }
    encode_missing(cache, {DEFAULT_ENCODER: observed, windows: observed}, needed, progress)
    assert [(p.done, p.total) for p in seen] == [(0, 5), (3, 5)]
    final = read_progress(progress)
    assert (final.done, final.total, final.unit) == (5, 5, "texts embedded")
    assert cache.missing(DEFAULT_ENCODER, "passage", needed[DEFAULT_ENCODER]) == []
