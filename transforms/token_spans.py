"""From labelled word pieces of a token classifier to exact entity char spans.

A token-classification model labels word pieces; entities are runs of words. Here each
word takes the label of its first piece (the piece CoNLL-style models are trained on), and
the word labels are decoded as IOB2 / BIO (`B-X` opens, `I-X` continues), IOB1 (an `I-X`
that does not continue an `X` opens one), BIOES / BILOU (`S-`/`U-` single, `E-`/`L-`
closes) or plain labels (`X` for every word; adjacent words of one type form one entity,
as that scheme cannot tell them apart). Spans are char offsets into the text, trimmed of
whitespace and punctuation a name does not end in, so `text[start:end]` is the mention.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Sequence
from typing import NamedTuple

OUTSIDE = "O"
_SCHEME = re.compile(r"^([BIESLU])[-_](.+)$")
_CONTINUING = frozenset({"I", "E", "L", ""})
_CLOSING = frozenset({"E", "L", "S", "U"})
_EDGE_CHARS = frozenset(string.whitespace + ",;:!?\"'`“”‘’«»-–—/|*")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {close: open_ for open_, close in _OPENERS.items()}
_POSSESSIVES = ("'s", "’s")
_ABBREVIATIONS = frozenset(
    {"Inc", "Corp", "Co", "Ltd", "Plc", "Bros", "Jr", "Sr", "Dr", "Mr", "Mrs", "Ms", "Prof"}
    | {"St", "Mt", "Ave", "Dept", "Univ", "Gov", "Gen", "Col"}
)


class WordPiece(NamedTuple):
    """One labelled piece: char offsets into the text, the index of the word it belongs
    to (the fast tokenizer's `word_ids`) and the model's label for it (`B-PER`, `O`...)."""

    start: int
    end: int
    word: int
    label: str


class EntitySpan(NamedTuple):
    """An entity mention: char offsets into the text and the model's type label (`PER`)."""

    start: int
    end: int
    label: str


def split_label(label: str) -> tuple[str, str]:
    """(scheme prefix, type) of a label: `B-PER` -> ("B", "PER"), plain `PER` -> ("", "PER"),
    and `O` -> ("O", "")."""
    if label == OUTSIDE:
        return OUTSIDE, ""
    match = _SCHEME.match(label)
    return (match.group(1), match.group(2)) if match else ("", label)


def words_of(pieces: Sequence[WordPiece]) -> Iterator[WordPiece]:
    """Merge the consecutive pieces of each word (sorted by offset) into one piece spanning
    the word, labelled as its first piece."""
    word: WordPiece | None = None
    for piece in pieces:
        if word is not None and piece.word == word.word:
            word = word._replace(end=piece.end)
            continue
        if word is not None:
            yield word
        word = piece
    if word is not None:
        yield word


def decode_words(words: Sequence[WordPiece]) -> list[EntitySpan]:
    """Entity spans of labelled words (any of the schemes in the module docstring)."""
    spans: list[EntitySpan] = []
    open_span: EntitySpan | None = None
    for word in words:
        prefix, kind = split_label(word.label)
        if prefix == OUTSIDE:
            open_span = None
            continue
        if open_span is not None and open_span.label == kind and prefix in _CONTINUING:
            open_span = open_span._replace(end=word.end)
            spans[-1] = open_span
        else:
            open_span = EntitySpan(word.start, word.end, kind)
            spans.append(open_span)
        if prefix in _CLOSING:
            open_span = None
    return spans


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink `[start, end)` past edge whitespace and punctuation, unmatched brackets or a
    pair enclosing the whole span, a possessive `'s` and a final period that does not close
    an abbreviation (`Corp.`, `U.S.` keep theirs). An all-punctuation span shrinks to empty
    (start == end)."""
    while start < end:
        first, last = text[start], text[end - 1]
        if first in _EDGE_CHARS or (first in _OPENERS and _OPENERS[first] not in text[start:end]):
            start += 1
        elif last in _EDGE_CHARS or (last in _CLOSERS and _CLOSERS[last] not in text[start:end]):
            end -= 1
        elif first in _OPENERS and last == _OPENERS[first] and not _has_bracket(text, start, end):
            start, end = start + 1, end - 1
        elif text[start:end].endswith(_POSSESSIVES):
            end -= 2
        elif last == "." and not _is_abbreviation(text[start:end]):
            end -= 1
        else:
            break
    return start, end


def _has_bracket(text: str, start: int, end: int) -> bool:
    """Whether the inside of `[start, end)` (edges excluded) holds a bracket like its first."""
    return any(c in (text[start], text[end - 1]) for c in text[start + 1 : end - 1])


def _is_abbreviation(span_text: str) -> bool:
    """Whether the span's last word, ending in a period, is an abbreviation: it has another
    period (`U.S.`), is an initial (`J.`) or a common name abbreviation (`Inc.`, `Jr.`)."""
    word = span_text.split()[-1][:-1]
    return "." in word or (len(word) == 1 and word.isupper()) or word in _ABBREVIATIONS


def aggregate_entities(text: str, pieces: Sequence[WordPiece]) -> list[EntitySpan]:
    """Entity spans of `text` from its labelled pieces (sorted by offset, one per piece),
    trimmed as in `trim_span`; spans left empty are dropped."""
    spans = []
    for span in decode_words(list(words_of(pieces))):
        start, end = trim_span(text, span.start, span.end)
        if start < end:
            spans.append(EntitySpan(start, end, span.label))
    return spans
