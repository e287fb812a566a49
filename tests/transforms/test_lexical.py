"""The lexical index: LanceDB's default analyser reproduced (stop words after stemming,
long tokens, folding, Unicode words), postings, and BM25 against the formula and against
LanceDB's own full-text search on the same texts."""

from __future__ import annotations

import math
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import FTS

from transforms.lexical import analyze, bm25_scores, build_lexical_index

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


def test_bm25_is_the_formula_with_one_term_per_query_occurrence() -> None:
    index = build_lexical_index(TEXTS)
    position = {t: i for i, t in enumerate(index.terms)}
    documents = sum(1 for t in TEXTS if analyze(t))  # a row without a term is no document
    n, average = len(TEXTS), index.lengths.sum() / documents
    assert index.documents == documents == n - 1
    for query in (["firmwar"], ["firmwar", "acm"], ["acm", "acm"]):
        scores = bm25_scores(index, [position[t] for t in query])
        expected = np.zeros(n)
        for term in query:
            with_term = [r for r in range(n) if term in analyze(TEXTS[r])]
            idf = math.log(1 + (documents - len(with_term) + 0.5) / (len(with_term) + 0.5))
            for r in with_term:
                f, length = analyze(TEXTS[r]).count(term), index.lengths[r]
                expected[r] += idf * 2.2 * f / (f + 1.2 * (0.25 + 0.75 * length / average))
        assert np.allclose(scores, expected, rtol=1e-5, atol=0)
    assert np.all(bm25_scores(index, []) == 0)


def test_scores_equal_lancedb_full_text_search(tmp_path: Path) -> None:
    """LanceDB's index with its defaults over the same texts (an empty one among them)
    gives the same scores."""
    table = lancedb.connect(str(tmp_path)).create_table(
        "texts", pa.table({"row": pa.array(range(len(TEXTS))), "text": TEXTS})
    )
    table.create_index("text", config=FTS(), replace=True)
    index = build_lexical_index(TEXTS)
    position = {t: i for i, t in enumerate(index.terms)}
    for query in ("firmware team", "Acme Corporation CEO", "Marcus Bennett recall", "café"):
        hits = table.search(query, query_type="fts").select(["row", "_score"]).to_list()
        scores = bm25_scores(index, [position[t] for t in analyze(query) if t in position])
        assert {h["row"] for h in hits} == set(np.flatnonzero(scores).tolist()), query
        for hit in hits:
            assert scores[hit["row"]] == pytest.approx(hit["_score"], rel=1e-5), query
