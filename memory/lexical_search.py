"""The BM25 search of the retrievable segments, from the graph index's postings.

Why: LanceDB's full-text search cost 2-5 ms a query (100k-1M facts) on LanceDB's runtime,
and every graph strategy runs one for its flat prior; the graph index now holds the
segments' postings (`transforms.lexical`), which a query scores with a few numpy
operations over its terms' posting lists.

The analyser and the scoring are LanceDB's, reproduced (`transforms.lexical`, with how
closely they agree); every row of the segments counts for the statistics, as in
LanceDB's index, and only the retrievable rows are returned. Ties go by row, where
LanceDB orders them its own way. A snapshot whose graph index has no postings (written
before them) keeps LanceDB's search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.top import top_positions
from transforms.lexical import LexicalIndex, analyze, bm25_scores


@dataclass(frozen=True)
class LexicalSearch:
    """A snapshot's segment postings with the lookups a query needs."""

    index: LexicalIndex
    segment_ids: list[str]
    """Segment id of each row of the index."""
    term_positions: dict[str, int]
    retrievable: np.ndarray | None
    """Per row, whether a search may return it; None: every row."""

    @classmethod
    def of(
        cls, index: LexicalIndex, segment_ids: list[str], retrievable: np.ndarray | None
    ) -> LexicalSearch:
        positions = {term: i for i, term in enumerate(index.terms)}
        return cls(index, segment_ids, positions, retrievable)

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        """Top-k retrievable (segment id, BM25 score rounded to 6 decimals), best first;
        only segments with a query term."""
        terms = [self.term_positions.get(term) for term in analyze(text)]
        scores = bm25_scores(self.index, [t for t in terms if t is not None])
        if self.retrievable is not None:
            scores[~self.retrievable] = 0.0
        matched = np.flatnonzero(scores)
        best = matched[top_positions(scores[matched], k)]
        return [(self.segment_ids[row], round(float(scores[row]), 6)) for row in best]
