"""BM25 over an inverted index of numpy arrays, with LanceDB's default full-text analyser.

Why: every graph strategy starts from the `hybrid` ranking, whose lexical signal was a
LanceDB full-text search: 2-5 ms a query (100k-1M facts), on LanceDB's runtime beside the
dense search, on two cores. The snapshot's segments never change, so the build writes
their postings into the graph index (`stores.graph_index`) and a query scores them with a
few numpy operations over the query terms' posting lists.

The analyser reproduces the one LanceDB builds the segments' index with (`lancedb.index.FTS()`
defaults, lance's `TokenizerConfig` on tantivy's filters), in its order:
1. tantivy's `SimpleTokenizer`: maximal runs of alphanumeric characters (Unicode's
   Alphabetic property or a numeric category, as Rust's `char::is_alphanumeric`);
2. `RemoveLongFilter(40)`: tokens of 40 or more UTF-8 bytes are dropped;
3. `LowerCaser`: each character lower-cased on its own (no final-sigma rule);
4. the Snowball English stemmer (`snowballstemmer` 3.0; LanceDB runs rust-stemmers, an
   older generation of the same algorithm, and the two differ on a few words: "internal"
   and "internment" stem to "intern" here and not in LanceDB);
5. the stop words (`STOP_WORDS`, NLTK's English list, which LanceDB's index of lance 13
   uses), compared with the *stemmed* token: "mostly" -> "most" is dropped, "because" ->
   "becaus" stays, as in LanceDB;
6. `AsciiFoldingFilter`: accents and ligatures folded to ASCII; here by Unicode
   decomposition (NFKD without combining marks) plus the letters that do not decompose
   (ß, æ, ø, œ, đ, ð, ł, þ, ...); characters tantivy folds and NFKD does not stay as
   they are.

Scoring is lance's BM25, in float32 as lance computes it: k1 = 1.2, b = 0.75,
idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)), a document's length is its number of
analysed tokens, N counts the rows with at least one token (the retrievable ones and the
others, as LanceDB's index holds them all; a row without a token is not a document of
it), the average length is total tokens / N, and each query term counts once per
occurrence in the query (all checked against LanceDB's own search,
`tests/transforms/test_lexical.py`). On the dev sets' segments, the hits both return have
equal scores (LoCoMo: within 3e-7 relative, every one; MuSiQue: the median equal, 1 % of
them up to 1-30 % apart, the stemmer's few words shifting a term's document count); the
top hit is the same for 100 of 100 MuSiQue and 987 of 999 LoCoMo questions, the top 10
share 100 % and 98.8 % of their hits (the rest: ties LanceDB orders its own way).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import regex

K1 = np.float32(1.2)
B = np.float32(0.75)
MAX_TOKEN_BYTES = 40
_NLTK_ENGLISH = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against
    between into through during before after above below to from up down in out on off over
    under again further then once here there when where why how all any both each few more
    most other some such no nor not only own same so than too very s t can will just don
    should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn
    mustn needn shan shouldn wasn weren won wouldn
"""
STOP_WORDS = frozenset(_NLTK_ENGLISH.split())
"""The English stop words of LanceDB's index (lance 13): the NLTK list without its forms
with an apostrophe (never a token here), checked against LanceDB on the dev sets'
segments: every corpus word LanceDB drops stems to one of these, and no word it keeps
does."""
_TOKEN = regex.compile(r"[\p{Alphabetic}\p{N}]+")
"""Rust's `char::is_alphanumeric` (Alphabetic or a numeric category), which tantivy's
SimpleTokenizer splits on; Python's word class would split Devanagari words at their vowel
signs."""
_UNDECOMPOSED = str.maketrans(
    {"ß": "ss", "æ": "ae", "ø": "o", "œ": "oe", "đ": "d", "ð": "d", "ł": "l", "þ": "th",
     "ħ": "h", "ı": "i", "ŀ": "l", "ŋ": "n", "ſ": "s", "ŧ": "t", "ĳ": "ij"}
)  # fmt: skip


@functools.cache
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=1 << 18)
def _term(token: str) -> str | None:
    """A surface token's term after steps 2-6 (None: dropped), cached per distinct token."""
    if len(token.encode()) >= MAX_TOKEN_BYTES:
        return None
    lowered = token.lower() if token.isascii() else "".join(c.lower() for c in token)
    stemmed = _stemmer().stemWord(lowered)
    if stemmed in STOP_WORDS:
        return None
    return stemmed if stemmed.isascii() else _fold(stemmed)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.translate(_UNDECOMPOSED))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def analyze(text: str) -> list[str]:
    """The terms of `text`, in order, as LanceDB's default analyser makes them."""
    return [term for token in _TOKEN.findall(text) if (term := _term(token)) is not None]


ARRAY_FIELDS = ("offsets", "rows", "counts", "lengths")
"""The `LexicalIndex` fields that are arrays (stored as `.npy` files in the graph index)."""


@dataclass(frozen=True)
class LexicalIndex:
    """Postings of the rows' terms: `terms` sorted; the rows containing `terms[i]` are
    `rows[offsets[i]:offsets[i + 1]]` (ascending), each with its count in `counts`;
    `lengths` holds each row's number of terms."""

    terms: Sequence[str]
    offsets: np.ndarray
    rows: np.ndarray
    counts: np.ndarray
    lengths: np.ndarray

    @functools.cached_property
    def documents(self) -> int:
        """Rows with at least one term: LanceDB's index counts no other (N of the idf)."""
        return int(np.count_nonzero(self.lengths))

    @property
    def average_length(self) -> np.float32:
        """Total terms over `documents`, in float32 as lance divides them."""
        total = np.float32(np.sum(self.lengths, dtype=np.int64))
        return total / np.float32(max(self.documents, 1))


def build_lexical_index(texts: Iterable[str | None]) -> LexicalIndex:
    """The inverted index of `texts` (row i = the i-th text; None: a row without terms)."""
    term_ids: dict[str, int] = {}
    pair_terms: list[np.ndarray] = []
    pair_rows: list[np.ndarray] = []
    pair_counts: list[np.ndarray] = []
    lengths: list[int] = []
    for row, text in enumerate(texts):
        terms = analyze(text) if text else []
        ids = np.fromiter((term_ids.setdefault(t, len(term_ids)) for t in terms), np.int64)
        lengths.append(len(ids))
        if len(ids):
            distinct, counts = np.unique(ids, return_counts=True)
            pair_terms.append(distinct)
            pair_rows.append(np.full(len(distinct), row, np.int32))
            pair_counts.append(counts.astype(np.int32))
    names = sorted(term_ids)
    row_lengths = np.asarray(lengths, np.int32)
    if not pair_terms:
        empty = np.zeros(0, np.int32)
        return LexicalIndex(names, np.zeros(len(names) + 1, np.int64), empty, empty, row_lengths)
    rank = np.empty(len(term_ids), np.int64)
    rank[[term_ids[name] for name in names]] = np.arange(len(names))
    terms = rank[np.concatenate(pair_terms)]
    rows, counts = np.concatenate(pair_rows), np.concatenate(pair_counts)
    order = np.lexsort((rows, terms))
    offsets = np.zeros(len(names) + 1, np.int64)
    np.cumsum(np.bincount(terms, minlength=len(names)), out=offsets[1:])
    return LexicalIndex(names, offsets, rows[order], counts[order], row_lengths)
