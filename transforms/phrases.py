"""Phrase nodes: the common-noun phrases a segment is about, beside its named entities
(HippoRAG's OpenIE phrases, without the LLM).

A phrase is a maximal run of nouns (Penn tags NN, NNS, NNP, NNPS, so that only the
tagger is needed) that holds at least one common noun and ends in one, lemmatised (where
the model has a lemmatizer) and lower-cased: "two American psychologists"
gives `psychologist`, "the local football clubs" gives `football club`. Choices where
HippoRAG is silent (its phrases come from an LLM's triples), made here:
- runs of proper nouns alone are left to NER, whose entities are nodes already;
- leading adjectives and determiners are dropped, so "local football club" and "famous
  football club" meet at one node;
- deictic time words (`DEICTIC`: "today", "yesterday"...) end a run rather than join it;
- pronouns never start a run (their tag is PRP), and a phrase made only of
  stop words or shorter than `MIN_CHARS` is dropped;
- runs longer than `MAX_WORDS` keep their last `MAX_WORDS` words (the head and its
  modifiers).

Specificity is not decided here: the query-time passage graph weights each node by
HippoRAG's inverse passage count. A phrase found in a single segment links nothing and is
dropped by `shared_phrases`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc, Token

from transforms.spacy_models import SpacyBatchDoFn

PHRASE_COMPONENTS = ("tok2vec", "tagger", "attribute_ruler", "lemmatizer")
"""What a phrase needs: tags and lemmas (no parser, no NER); the attribute ruler and
lemmatizer are optional (without them a phrase keeps its surface words)."""
PHRASE = "phrase"
"""The link kind, and the node id prefix (`phrase:<lemmas>`)."""
MAX_WORDS = 4
MIN_CHARS = 3
COMMON_NOUNS = frozenset({"NN", "NNS"})
NOUNS = COMMON_NOUNS | {"NNP", "NNPS"}
DEICTIC = frozenset({"today", "yesterday", "tomorrow", "tonight", "now"})


def noun_phrases(doc: Doc) -> set[str]:
    """The phrases of `doc` (see the module docstring), as lower-cased lemma strings."""
    found: set[str] = set()
    run: list[Token] = []
    for token in [*doc, None]:
        if token is not None and token.tag_ in NOUNS and token.lower_ not in DEICTIC:
            run.append(token)
            continue
        while run and run[-1].tag_ not in COMMON_NOUNS:
            run.pop()
        words = [t for t in run[-MAX_WORDS:] if not t.is_stop]
        phrase = " ".join((t.lemma_ or t.text).lower() for t in words)
        if len(phrase) >= MIN_CHARS:
            found.add(phrase)
        run = []
    return found


def phrase_rows(
    nlp: Language, segments: list[dict[str, Any]], batch_size: int = 64
) -> Iterator[dict[str, Any]]:
    """SEGMENT_PHRASES rows (collection, doc_id, segment_id, phrase) of `segments` (rows
    with those ids and `text`), in segment order, phrases sorted."""
    texts = (str(row["text"]) for row in segments)
    for row, doc in zip(segments, nlp.pipe(texts, batch_size=batch_size), strict=True):
        for phrase in sorted(noun_phrases(doc)):
            yield {
                "collection": row["collection"],
                "doc_id": row["doc_id"],
                "segment_id": row["segment_id"],
                "phrase": phrase,
            }


class SpacyPhraseDoFn(SpacyBatchDoFn):
    """Beam DoFn: a batch of segment rows in, their phrase rows out."""

    COMPONENTS = PHRASE_COMPONENTS

    def run(self, nlp: Language, batch: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        yield from phrase_rows(nlp, batch, self._batch_size)


def shared_phrases(rows: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, str]]:
    """Link rows (segment_id, node_id, kind) of the phrases that two segments or more share,
    from phrase rows (segment_id, phrase)."""
    pairs = sorted({(row["segment_id"], row["phrase"]) for row in rows})
    counts = Counter(phrase for _, phrase in pairs)
    for segment_id, phrase in pairs:
        if counts[phrase] > 1:
            yield {"segment_id": segment_id, "node_id": f"{PHRASE}:{phrase}", "kind": PHRASE}
