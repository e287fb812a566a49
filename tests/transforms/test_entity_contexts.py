"""KGERMAR entity contexts: 64-token windows around mentions, span-pooled embeddings."""

import numpy as np

from transforms.embedding import DEFAULT_ENCODER, PACKAGED_E5, encode
from transforms.embedding_cache import EmbeddingCache, cached_embed
from transforms.entity_contexts import (
    MAX_MENTIONS,
    SPAN_CLOSE,
    SPAN_OPEN,
    WINDOW_SEPARATOR,
    context_rows,
    context_window,
    encode_contexts,
    span_pooled_encoder,
    split_marked,
    window_vectors,
)

TEXT = " ".join(f"w{i}" for i in range(100))


def test_window_is_centred_and_bounded():
    start = TEXT.index("w50")
    window = context_window(TEXT, start, start + 3, tokens=10)
    assert window == f"w46 w47 w48 w49 {SPAN_OPEN}w50{SPAN_CLOSE} w51 w52 w53 w54 w55"
    plain, s, e = split_marked(window)
    assert plain[s:e] == "w50" and len(plain.split()) == 10


def test_window_shifts_at_the_text_edges():
    assert context_window(TEXT, 0, 2, tokens=5) == f"{SPAN_OPEN}w0{SPAN_CLOSE} w1 w2 w3 w4"
    end = TEXT.index("w99")
    assert context_window(TEXT, end, end + 3, tokens=4) == f"w96 w97 w98 {SPAN_OPEN}w99{SPAN_CLOSE}"


def test_rows_resolve_surfaces_and_cap_mentions():
    text = "Priya Natarajan works at the Harborview Office in Rotterdam."
    mentions = [
        {
            "surface": "Priya Natarajan",
            "segment_id": f"s{i:02d}",
            "segment_text": text,
            "char_start": 0,
            "char_end": 15,
        }
        for i in range(MAX_MENTIONS + 3)
    ] + [
        {
            "surface": "Nobody",
            "segment_id": "s00",
            "segment_text": text,
            "char_start": 0,
            "char_end": 5,
        },
        {
            "surface": "Rotterdam",
            "segment_id": "s00",
            "segment_text": text,
            "char_start": 50,
            "char_end": 999,
        },
    ]
    rows = context_rows(mentions, {"priya natarajan": "e1", "rotterdam": "e2"})
    assert [r["entity_id"] for r in rows] == ["e1"], "unknown names and bad offsets skipped"
    assert len(rows[0]["contexts"].split(WINDOW_SEPARATOR)) == MAX_MENTIONS


def test_span_pooling_depends_on_the_context_and_the_span():
    river = context_window("We walked along the bank of the river.", 20, 24)
    money = context_window("We deposited cash at the bank downtown.", 25, 29)
    vectors = encode_contexts([river, money, river], DEFAULT_ENCODER)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[2])
    assert float(vectors[0] @ vectors[1]) < 0.99, "the same word in other contexts differs"
    sentence = encode(["We walked along the bank of the river."])[0]
    assert float(vectors[0] @ sentence) < 0.99, "the span is pooled, not the whole sentence"


def test_windows_sharing_a_text_pool_their_own_spans():
    text = "Priya Natarajan moved from Rotterdam to Lisbon in 2021."
    priya, lisbon = context_window(text, 0, 15), context_window(text, 40, 46)
    both = encode_contexts([priya, lisbon, WINDOW_SEPARATOR.join([priya, lisbon])], DEFAULT_ENCODER)
    alone = [encode_contexts([w], DEFAULT_ENCODER)[0] for w in (priya, lisbon)]
    assert np.allclose(both[0], alone[0], atol=1e-5) and np.allclose(both[1], alone[1], atol=1e-5)
    assert float(both[0] @ both[1]) < 0.99, "one encoded text, two different spans"
    assert min(float(both[2] @ alone[0]), float(both[2] @ alone[1])) > float(both[0] @ both[1])


class CountingWindows:
    """The real `window_vectors`, recording the marked windows it is asked to encode."""

    def __init__(self) -> None:
        self.windows: list[str] = []

    def __call__(self, windows):
        self.windows.extend(windows)
        return window_vectors(windows, DEFAULT_ENCODER)


def test_an_entity_gaining_a_mention_encodes_only_the_new_window(tmp_path):
    text = "Priya Natarajan moved from Rotterdam to Lisbon in 2021."
    priya, lisbon = context_window(text, 0, 15), context_window(text, 40, 46)
    later = context_window("Later Priya Natarajan opened the Porto office.", 6, 21)
    counting = CountingWindows()
    cache = EmbeddingCache(tmp_path / "embeddings.duckdb")
    pooled = span_pooled_encoder(cached_embed(counting, cache, "minilm#span-window", "passage"))
    first = pooled([priya, lisbon])
    assert sorted(counting.windows) == sorted([priya, lisbon])
    grown = WINDOW_SEPARATOR.join([priya, later])
    second = pooled([grown, lisbon])
    assert counting.windows[2:] == [later], "the cached windows are not encoded again"
    np.testing.assert_allclose(first, encode_contexts([priya, lisbon], DEFAULT_ENCODER), atol=1e-6)
    np.testing.assert_allclose(second[0], encode_contexts([grown], DEFAULT_ENCODER)[0], atol=1e-6)
    np.testing.assert_array_equal(second[1], first[1])


def test_window_vectors_pool_the_span_unnormalised():
    text = "We walked along the bank of the river."
    bank, river = context_window(text, 20, 24), context_window(text, 32, 37)
    vectors = window_vectors([bank, river, bank], DEFAULT_ENCODER)
    assert vectors.shape == (3, 384) and np.array_equal(vectors[0], vectors[2])
    assert not np.allclose(vectors[0], vectors[1])
    unit = vectors[0] / np.linalg.norm(vectors[0])
    np.testing.assert_allclose(encode_contexts([bank], DEFAULT_ENCODER)[0], unit, atol=1e-6)
    assert window_vectors([], DEFAULT_ENCODER).shape == (0, 384)


def test_an_encoder_without_token_outputs_gives_each_window_its_sentence_vector():
    window = context_window("Priya Natarajan moved from Rotterdam to Lisbon.", 0, 15)
    plain = split_marked(window)[0]
    vectors = window_vectors([window, window], PACKAGED_E5)
    np.testing.assert_allclose(vectors[0], encode([plain], PACKAGED_E5)[0], atol=1e-6)
    np.testing.assert_array_equal(vectors[0], vectors[1])


def test_an_entity_gets_one_window_per_segment_its_first_mention_there():
    text = "Acme hired Priya. Acme then hired Bo. Acme grew and Acme moved to Leeds."
    starts = [i for i in range(len(text)) if text.startswith("Acme", i)]
    mentions = [
        {"surface": "Acme", "segment_id": segment, "segment_text": text}
        | {"char_start": start, "char_end": start + 4}
        for segment in ("s2", "s1")
        for start in reversed(starts)
    ]
    (row,) = context_rows(mentions, {"acme": "e1"})
    windows = row["contexts"].split(WINDOW_SEPARATOR)
    assert windows == [context_window(text, starts[0], starts[0] + 4)] * 2
