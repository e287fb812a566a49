"""BM25 from the graph index's postings: the formula, LanceDB's own scores on the same
texts, the exact top k without scoring every row (against scoring them all), ties by row,
the retrievable rows only, and the search a view uses where its index has postings."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import FTS

from memory.lexical_search import LexicalSearch, bm25_top
from memory.linking import full_text_segments
from memory.snapshot_view import SnapshotView
from tests.memory.test_flat_signals import QUERIES as FLAT_QUERIES
from tests.transforms.test_lexical import TEXTS
from transforms.lexical import K1, B, LexicalIndex, analyze, build_lexical_index

QUERIES = [*FLAT_QUERIES, "Marcus Bennett CEO"]


def _every_score(index: LexicalIndex, positions: list[int]) -> np.ndarray:
    """Every row's score, each query term added to every row in query order (float32)."""
    n, average = np.float32(index.documents), index.average_length
    scores = np.zeros(len(index.lengths), np.float32)
    for p in positions:
        start, end = index.offsets[p], index.offsets[p + 1]
        docs = np.float32(end - start)
        idf = np.log((n - docs + np.float32(0.5)) / (docs + np.float32(0.5)) + np.float32(1.0))
        rows, freq = index.rows[start:end], index.counts[start:end].astype(np.float32)
        norm = K1 * (np.float32(1.0) - B + B * index.lengths[rows].astype(np.float32) / average)
        scores[rows] += idf * ((K1 + np.float32(1.0)) * freq / (freq + norm))
    return scores


def _scores(index: LexicalIndex, query: list[str]) -> dict[int, float]:
    position = {t: i for i, t in enumerate(index.terms)}
    rows, scores = bm25_top(index, [position[t] for t in query if t in position], 10**6)
    return dict(zip(rows.tolist(), scores.tolist(), strict=True))


def test_bm25_is_the_formula_with_one_term_per_query_occurrence() -> None:
    index = build_lexical_index(TEXTS)
    documents = sum(1 for t in TEXTS if analyze(t))  # a row without a term is no document
    average = index.lengths.sum() / documents
    assert index.documents == documents == len(TEXTS) - 1
    for query in (["firmwar"], ["firmwar", "acm"], ["acm", "acm"]):
        expected: dict[int, float] = {}
        for term in query:
            with_term = [r for r in range(len(TEXTS)) if term in analyze(TEXTS[r])]
            idf = math.log(1 + (documents - len(with_term) + 0.5) / (len(with_term) + 0.5))
            for r in with_term:
                f, length = analyze(TEXTS[r]).count(term), index.lengths[r]
                weight = 2.2 * f / (f + 1.2 * (0.25 + 0.75 * length / average))
                expected[r] = expected.get(r, 0.0) + idf * weight
        assert _scores(index, query) == pytest.approx(expected, rel=1e-5)
    assert _scores(index, []) == {}


def test_scores_equal_lancedb_full_text_search(tmp_path: Path) -> None:
    """LanceDB's index with its defaults over the same texts (an empty one among them)
    finds the same rows with the same scores."""
    table = lancedb.connect(str(tmp_path)).create_table(
        "texts", pa.table({"row": pa.array(range(len(TEXTS))), "text": TEXTS})
    )
    table.create_index("text", config=FTS(), replace=True)
    index = build_lexical_index(TEXTS)
    for query in ("firmware team", "Acme Corporation CEO", "Marcus Bennett recall", "café"):
        hits = table.search(query, query_type="fts").select(["row", "_score"]).to_list()
        expected = {h["row"]: h["_score"] for h in hits}
        assert _scores(index, analyze(query)) == pytest.approx(expected, rel=1e-5), query


def test_the_top_k_is_that_of_every_row_scored() -> None:
    """On a corpus with a long-tailed vocabulary (a few terms in most rows), for queries of
    common and rare terms, repeated ones among them, with and without a mask of allowed
    rows: the rows and scores of scoring every row, ties by row, bit for bit."""
    rng = np.random.default_rng(7)
    vocabulary = [f"w{i}" for i in range(400)]
    weights = 1.0 / np.arange(1, 401)
    texts = [
        " ".join(rng.choice(vocabulary, rng.integers(0, 30), p=weights / weights.sum()))
        for _ in range(3000)
    ]
    index = build_lexical_index(texts)
    position = {t: i for i, t in enumerate(index.terms)}
    allowed = rng.random(3000) < 0.8
    for _ in range(60):
        query = [position[t] for t in rng.choice(vocabulary[:60] + vocabulary[-40:], 4)
                 if t in position]  # fmt: skip
        query += query[:1]
        for mask in (None, allowed):
            every = _every_score(index, query)
            if mask is not None:
                every[~mask] = 0
            for k in (1, 10, 50):
                matched = np.flatnonzero(every)
                expected = matched[np.argsort(-every[matched], kind="stable")[:k]]
                rows, scores = bm25_top(index, query, k, mask)
                assert rows.tolist() == expected.tolist()
                assert np.array_equal(scores, every[expected])


def test_top_is_best_first_ties_by_row_and_only_retrievable_rows() -> None:
    texts = ["firmware team", "firmware team", "acme firmware", "the team lunch", "acme hires"]
    ids = [f"s{i}" for i in range(len(texts))]
    index = build_lexical_index(texts)
    search = LexicalSearch.of(index, ids, None)
    found = search.top("firmware team", 10)
    assert [s for s, _ in found] == ["s0", "s1", "s2", "s3"], "s0 and s1 tie: by row"
    assert found[0][1] == found[1][1] > found[2][1] > 0
    assert search.top("firmware team", 1) == found[:1]
    assert search.top("unknown words", 5) == [] and search.top("the and", 5) == []
    mask = np.array([False, True, True, True, True])
    masked = LexicalSearch.of(index, ids, mask).top("firmware team", 10)
    assert masked == found[1:], "a masked row is dropped, the statistics are the index's"


def test_a_speakers_name_lifts_each_of_their_turns_alike() -> None:
    """Issue 37, 3.4: a turn's speaker is a field, so naming the speaker lifts a filler
    turn no more than a long one, and the content terms decide among their turns."""
    texts = [
        "Calvin: Keep going for it!",
        "Calvin: I went to the auction last weekend and came home with a red 1967 coupe",
        "Dave: the auction sounds fun, tell me about it when we meet",
    ]
    ids = ["filler", "content", "other"]
    index = build_lexical_index(texts)
    as_content = LexicalSearch.of(index, ids, None)
    as_field = LexicalSearch.of(index, ids, None, frozenset({"calvin"}))
    by_content = dict(as_content.top("Calvin", 3))
    assert by_content["filler"] > by_content["content"], "BM25 favoured the short turn"
    by_field = dict(as_field.top("Calvin", 3))
    assert by_field["filler"] == by_field["content"] > 0
    assert as_field.top("What did Calvin get at the auction?", 3)[0][0] == "content"
    assert as_field.top("auction", 3) == as_content.top("auction", 3), "other terms unchanged"


def test_the_view_searches_its_postings_and_agrees_with_lancedb(graph_memory) -> None:
    """The sample's graph index holds its postings, so the view searches them; a view
    without the mapped index asks LanceDB. Same hits and scores (ties may fill the last
    places in another order)."""
    view = graph_memory._view
    assert view.lexical_search is not None
    scanned = SnapshotView(view.snapshot, view.connect, view.db)
    assert scanned.lexical_search is None
    # LanceDB knows no speaker field: compare the scoring with the speakers' names as content
    plain = replace(view.lexical_search, field_terms=frozenset())
    for text in QUERIES:
        ours, lance = plain.top(text, 20), full_text_segments(scanned, text, 20)
        assert [s for _, s in ours] == pytest.approx([s for _, s in lance], rel=1e-5), text
        last = min((s for _, s in lance), default=0.0)
        assert {h for h in ours if h[1] > last} == {h for h in lance if h[1] > last}, text
