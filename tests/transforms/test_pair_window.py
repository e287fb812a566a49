"""KGERMAR's token distance and the pair window."""

import pytest

from transforms.pair_window import (
    char_to_token_span,
    mention_token_spans,
    token_char_spans,
    token_distance,
    window_pairs,
)


@pytest.mark.parametrize(
    ("head", "tail", "expected"),
    [
        ((0, 1), (2, 3), 1),  # adjacent: |t_h - s_t| = 1
        ((2, 3), (0, 1), 1),  # symmetric
        ((0, 0), (10, 12), 10),
        ((5, 9), (0, 2), 3),  # |s_h - t_t|
        ((0, 4), (2, 3), 1),  # nested
        ((3, 3), (3, 3), 0),
    ],
)
def test_token_distance(head, tail, expected):
    assert token_distance(head, tail) == expected


def test_window_pairs_both_directions_within_w():
    spans = [(0, 1), (3, 3), (20, 21), None]
    assert sorted(window_pairs(spans, window=2)) == [(0, 1, 2), (1, 0, 2)]
    pairs = sorted(window_pairs(spans, window=17))
    assert pairs == [(0, 1, 2), (1, 0, 2), (1, 2, 17), (2, 1, 17)]
    with pytest.raises(ValueError, match="window"):
        list(window_pairs(spans, window=-1))


def test_char_spans_map_onto_word_tokens():
    text = "Acme Corp (founded 1999) is in Rotterdam."
    tokens = token_char_spans(text)
    assert [text[s:e] for s, e in tokens][:4] == ["Acme", "Corp", "(", "founded"]
    starts, ends = [s for s, _ in tokens], [e for _, e in tokens]
    assert char_to_token_span(starts, ends, 0, 9) == (0, 1)
    assert char_to_token_span(starts, ends, 2, 6) == (0, 1)  # partial overlap expands
    assert char_to_token_span(starts, ends, 4, 5) is None  # only a space
    rotterdam = text.index("Rotterdam")
    assert mention_token_spans(text, [(0, 9), (rotterdam, rotterdam + 9)]) == [(0, 1), (8, 8)]
