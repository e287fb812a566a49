"""The lexical index: LanceDB's default analyser reproduced (stop words after stemming,
long tokens, folding, Unicode words) and the postings (BM25 over them:
`tests/memory/test_lexical_search.py`)."""

from __future__ import annotations

import pytest

from transforms.lexical import analyze, build_lexical_index

TEXTS = [
    "Priya Natarajan works at the Harborview Office in Rotterdam.",
    "Acme Corporation hired Tomasz Kowalski, a firmware engineer from Gdańsk.",
    "",
    "The TonerLine-500 recall was announced on 8 November 2021 by Marcus Bennett.",
    "Laura Chen leads the Firmware team; the firmware team ships firmware weekly.",
    "Mostly, the Café owners were running late because of the Straße closure.",
    "Marcus Bennett is the CEO of Acme Corporation.",
]


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        # stop words go after stemming: "mostly" -> "most" goes, "because" -> "becaus" stays
        ("Mostly because", ["becaus"]),
        ("The CEO was RUNNING", ["ceo", "run"]),
        ("Café Straße Ménière", ["cafe", "strasse", "menier"]),
        ("TonerLine-500 snake_case", ["tonerlin", "500", "snake", "case"]),
        ("सुशासन", ["सुशासन"]),  # vowel signs are alphabetic: one token, as in Rust
        ("x" * 39 + " " + "y" * 40, ["x" * 39]),  # 40 UTF-8 bytes or more: dropped
        ("", []),
    ],
)
def test_analyze(text: str, terms: list[str]) -> None:
    assert analyze(text) == terms


def test_postings_rows_counts_and_lengths() -> None:
    index = build_lexical_index([*TEXTS, None])
    assert list(index.terms) == sorted(index.terms)
    assert len(index.lengths) == len(TEXTS) + 1 and index.lengths[2] == index.lengths[-1] == 0
    assert index.offsets[-1] == len(index.rows) == len(index.counts)
    for i, term in enumerate(index.terms):
        rows = index.rows[index.offsets[i] : index.offsets[i + 1]]
        counts = index.counts[index.offsets[i] : index.offsets[i + 1]]
        assert list(rows) == sorted(set(rows.tolist()))
        for row, count in zip(rows, counts, strict=True):
            assert analyze(TEXTS[row]).count(term) == count
    assert [len(analyze(t)) for t in TEXTS] == list(index.lengths[:-1])
