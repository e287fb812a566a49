"""The BM25 search from the graph index's postings: ties by row, the retrievable rows only,
the search a view uses where its index has postings, and LanceDB's answers on the sample."""

from __future__ import annotations

import numpy as np
import pytest

from memory.lexical_search import LexicalSearch
from memory.linking import full_text_segments
from memory.snapshot_view import SnapshotView
from transforms.lexical import build_lexical_index

TEXTS = ["firmware team", "firmware team", "acme firmware", "the team lunch", "acme hires"]
IDS = [f"s{i}" for i in range(len(TEXTS))]
QUERIES = [
    "Who leads the Firmware team?",
    "printer error E-42",
    "Where did Priya work in 2021?",
    "Acme Corporation",
    "the of and",
    "Marcus Bennett CEO",
]


def test_top_is_best_first_ties_by_row_and_only_retrievable_rows() -> None:
    index = build_lexical_index(TEXTS)
    search = LexicalSearch.of(index, IDS, None)
    found = search.top("firmware team", 10)
    assert [s for s, _ in found] == ["s0", "s1", "s2", "s3"], "s0 and s1 tie: by row"
    assert found[0][1] == found[1][1] > found[2][1] > 0
    assert search.top("firmware team", 1) == found[:1]
    assert search.top("unknown words", 5) == [] and search.top("the and", 5) == []
    mask = np.array([False, True, True, True, True])
    masked = LexicalSearch.of(index, IDS, mask).top("firmware team", 10)
    assert masked == found[1:], "a masked row is dropped, the statistics are the index's"


def test_the_view_searches_its_postings_and_agrees_with_lancedb(graph_memory) -> None:
    """The sample's graph index holds its postings, so the view searches them; a view
    without the mapped index asks LanceDB. Same hits and scores (ties may fill the last
    places in another order)."""
    view = graph_memory._view
    assert view.lexical_search is not None
    scanned = SnapshotView(view.snapshot, view.connect, view.db)
    assert scanned.lexical_search is None
    for text in QUERIES:
        ours, lance = full_text_segments(view, text, 20), full_text_segments(scanned, text, 20)
        assert [s for _, s in ours] == pytest.approx([s for _, s in lance], rel=1e-5), text
        last = min((s for _, s in lance), default=0.0)
        assert {h for h in ours if h[1] > last} == {h for h in lance if h[1] > last}, text
