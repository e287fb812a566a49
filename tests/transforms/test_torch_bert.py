"""The torch BERT encoder gives sentence-transformers' vectors and token states, and a
build's embedding never imports sentence-transformers or transformers."""

from __future__ import annotations

import numpy as np

from tests.import_probe import MODEL_LIBRARIES, loaded_after
from transforms.embedding import (
    DEFAULT_ENCODER,
    encode,
    load_encoder,
    resolve_model_path,
    sentence_transformers_token_batches,
)
from transforms.torch_bert import torch_encoder

TEXTS = [
    "Who is the CEO of Acme Corporation?",
    "Melanie: I went camping with the kids at the lake last weekend. " * 40,  # truncated
    "E-42",
    "",
    "Priya Natarajan moved to the Harborview office in Rotterdam after the launch.",
    "ok",
]


def test_passage_vectors_equal_sentence_transformers_across_padded_batches():
    ours = encode(TEXTS, role="passage", batch_size=4)  # batches of unequal lengths
    theirs = load_encoder(DEFAULT_ENCODER).encode_document(
        TEXTS, batch_size=4, normalize_embeddings=True
    )
    assert ours.dtype == np.float32 and ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() < 1e-5
    alone = np.vstack([encode([t], role="passage") for t in TEXTS])
    assert np.abs(ours - alone).max() < 1e-5, "padding changes no vector"


def _real_tokens(batches) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per text row: the states and offsets of its real (unpadded) tokens."""
    return {
        row: (batch.states[i][batch.mask[i]], batch.offsets[i][batch.mask[i]])
        for batch in batches
        for i, row in enumerate(batch.rows)
    }


def test_token_states_and_offsets_equal_the_transformer_model():
    encoder = torch_encoder(resolve_model_path(DEFAULT_ENCODER))
    ours = _real_tokens(encoder.token_batches(TEXTS, batch_size=3))
    theirs = _real_tokens(sentence_transformers_token_batches(TEXTS, DEFAULT_ENCODER, 4))
    assert sorted(ours) == sorted(theirs) == list(range(len(TEXTS)))
    for row, (states, offsets) in ours.items():
        assert states.shape == theirs[row][0].shape
        assert np.array_equal(offsets, theirs[row][1])
        assert np.abs(states - theirs[row][0]).max() < 1e-4


def test_a_build_embeds_without_sentence_transformers():
    code = (
        "from transforms.embedding import encode\n"
        "from transforms.entity_contexts import encode_contexts\n"
        "assert encode(['a passage', 'another one here'], role='passage').shape == (2, 384)\n"
        "marked = 'Priya works at \u27e6Acme\u27e7 now'\n"
        "assert encode_contexts([marked], 'packaged:all-MiniLM-L6-v2').shape == (1, 384)\n"
    )
    assert loaded_after(code, MODEL_LIBRARIES) == ["torch"]
