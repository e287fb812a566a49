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

Speakers' names are scored as a field of their own (BM25F's view of a short field): a
turn is indexed as "Speaker: text" (`transforms.graph_links.segment_search_text`), so a
question naming a speaker matched every turn of theirs, and BM25's length normalisation
gave the name in a four-word turn ("Calvin: Keep going for it!") twice the weight it had
in a thirty-word turn where Calvin says what he bought: filler turns topped "What did
Calvin buy?" in every strategy (issue 37, 3.4). A query term that is a word of a
speaker's name is therefore saturated by its count alone (b = 0): each turn of the
speaker gets the same lift, and the content terms decide among them. LoCoMo dev (`kgmem
eval retrieval --strategies all`): turn recall@10 +0.0 to +1.1 for every strategy but
`dense` (which reads no postings), `hybrid` 67.2 -> 67.9, `bm25` 62.7 -> 63.0; session
recall@10 within -0.5..+0.7; MuSiQue, whose passages have no speaker, unchanged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from memory.top import top_positions
from transforms.lexical import ARRAY_FIELDS, K1, B, LexicalIndex, analyze


@dataclass(frozen=True)
class LexicalSearch:
    """A snapshot's segment postings with the lookups a query needs."""

    index: LexicalIndex
    segment_ids: list[str]
    """Segment id of each row of the index."""
    term_positions: dict[str, int]
    retrievable: np.ndarray | None
    """Per row, whether a search may return it; None: every row."""
    field_terms: frozenset[int]
    """Positions of the terms scored without length normalisation (speakers' names)."""
    rows: Mapping[str, int]
    """Segment id -> its row of the index."""

    @classmethod
    def of(
        cls,
        index: LexicalIndex,
        segment_ids: list[str],
        retrievable: np.ndarray | None,
        speaker_terms: frozenset[str] = frozenset(),
        rows: Mapping[str, int] | None = None,
    ) -> LexicalSearch:
        """`rows`: the segment lookup of `segment_ids` where the caller has one (a view's
        `segment_index`, so no second map of every segment id is built)."""
        positions = {term: i for i, term in enumerate(index.terms)}
        # plain views of the mappings: slicing a `np.memmap` makes a memmap object each
        # time, a third of a search's time at 1M facts
        arrays = {name: np.asarray(getattr(index, name)) for name in ARRAY_FIELDS}
        fields = frozenset(positions[t] for t in speaker_terms if t in positions)
        if rows is None:
            rows = {segment_id: row for row, segment_id in enumerate(segment_ids)}
        return cls(replace(index, **arrays), segment_ids, positions, retrievable, fields, rows)

    def term_counts(self, segment_ids: Sequence[str]) -> list[int]:
        """How many terms each segment's search text indexes (0 for an id not indexed)."""
        lengths = self.index.lengths
        return [
            int(lengths[row]) if (row := self.rows.get(s)) is not None else 0 for s in segment_ids
        ]

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        """Top-k retrievable (segment id, BM25 score rounded to 6 decimals), best first;
        only segments with a query term."""
        terms = [self.term_positions.get(term) for term in analyze(text)]
        rows, scores = bm25_top(
            self.index, [t for t in terms if t is not None], k, self.retrievable, self.field_terms
        )
        return [
            (self.segment_ids[row], round(float(score), 6))
            for row, score in zip(rows.tolist(), scores.tolist(), strict=True)
        ]


def bm25_top(
    index: LexicalIndex,
    term_positions: Sequence[int],
    k: int,
    allowed: np.ndarray | None = None,
    field_terms: Collection[int] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """The `k` best rows by BM25 (of the rows `allowed`, a boolean mask; None: all) with a
    query term, and their scores (float32), best first, ties by row, for the query terms
    at `term_positions` in `index.terms` (one entry per occurrence in the query); the
    terms in `field_terms` without length normalisation (b = 0, see the module).

    Exact, without scoring every row of a common term (MaxScore): a term adds less than
    idf x (k1 + 1) to any row, so the terms are taken rarest first, and once the k-th best
    full score of the rows holding one of those taken reaches what the others could add
    together, no other row can enter. A row's score adds its terms in query order, in
    float32, whichever rows are scored with it."""
    counts = Counter(term_positions)
    if not counts or k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    n, average = np.float32(index.documents), index.average_length
    idf = {t: _idf(index, t, n) for t in counts}
    bound = {t: float(idf[t]) * float(K1 + 1) * counts[t] for t in counts}
    rarest = sorted(counts, key=lambda t: (-bound[t], t))
    for taken in range(1, len(rarest) + 1):
        lists = [_postings(index, t)[0] for t in rarest[:taken]]
        rows = lists[0] if taken == 1 else np.unique(np.concatenate(lists))  # ascending
        if allowed is not None:
            rows = rows[allowed[rows]]
        norm = K1 * (np.float32(1.0) - B + B * index.lengths[rows].astype(np.float32) / average)
        weights = {
            t: _weights(index, t, rows, idf[t], K1 if t in field_terms else norm) for t in counts
        }
        scores = np.zeros(len(rows), np.float32)
        for position in term_positions:
            scores += weights[position]
        best = top_positions(scores, k)
        rest = sum(bound[t] for t in rarest[taken:]) * (1 + 1e-5)  # float32 rounding
        if taken == len(rarest) or (len(best) == k and rest <= float(scores[best[-1]])):
            return rows[best], scores[best]
    raise AssertionError("unreachable: the last pass takes every term")


def _idf(index: LexicalIndex, position: int, n: np.float32) -> np.float32:
    docs = np.float32(index.offsets[position + 1] - index.offsets[position])
    return np.log((n - docs + np.float32(0.5)) / (docs + np.float32(0.5)) + np.float32(1.0))


def _postings(index: LexicalIndex, position: int) -> tuple[np.ndarray, np.ndarray]:
    start, end = int(index.offsets[position]), int(index.offsets[position + 1])
    return index.rows[start:end], index.counts[start:end]


def _weights(
    index: LexicalIndex,
    position: int,
    rows: np.ndarray,
    idf: np.float32,
    norm: np.ndarray | np.float32,
) -> np.ndarray:
    """The term's BM25 contribution to each of `rows` (ascending), whose length norms are
    `norm`: 0 where it is absent."""
    postings, counts = _postings(index, position)
    found = np.searchsorted(postings, rows)
    found[found == len(postings)] = 0
    holds = postings[found] == rows if len(postings) else np.zeros(len(rows), bool)
    freq = np.where(holds, counts[found], 0).astype(np.float32)
    return idf * ((K1 + np.float32(1.0)) * freq / (freq + norm))
