"""Loading Re-DocRED-layout files (DocRED, Re-DocRED) into documents with exact char spans.

A file is a JSON list of documents, each with `title`, `sents` (token lists, one per
sentence), `vertexSet` (entity clusters: mentions with `sent_id`, `pos` = [start, end)
token range in the sentence, `type`, `name`) and optionally `labels` (`h`, `t`, `r` =
Wikidata P-id, `evidence` sentence ids). Any file of that layout loads, with or without
labels.

The text is rebuilt from the tokens by a deterministic join, so every token, and hence
every mention, has exact char offsets into it: tokens are separated by one space except
before closing punctuation and clitics (`,` `.` `)` `'s` `n't` ...), after opening
brackets and currency signs, and inside straight double quotes (an opening `"` takes no
space after it, a closing one none before it; they alternate within a document).
Sentences are joined by one space. Detokenised text reads like the original prose, which
matters for the spaCy and encoder models that run on it later; a plain space join would
leave " , " and "( 1963 )" everywhere.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transforms.entity_types import entity_type
from transforms.ids import content_id
from transforms.segmenting import DEFAULT_CHUNK_TOKENS, chunk_spans

_NO_SPACE_BEFORE = frozenset(
    {",", ".", ":", ";", "!", "?", ")", "]", "}", "%", "'s", "’s", "'", "n't", "'m", "'re"}
    | {"'ve", "'ll", "'d", "”", "’", "..."}
)
_NO_SPACE_AFTER = frozenset({"(", "[", "{", "$", "#", "“", "‘", "US$"})


@dataclass(frozen=True)
class Mention:
    """One mention of an entity: token range into the document's tokens, char span into its text."""

    entity: int
    label: str
    sent_id: int
    token_start: int
    token_end: int  # exclusive
    char_start: int
    char_end: int
    text: str


@dataclass(frozen=True)
class Entity:
    """An entity cluster (a `vertexSet` item) and its most frequent mention type."""

    index: int
    label: str
    mentions: tuple[Mention, ...]


@dataclass(frozen=True)
class Relation:
    """A gold relation between entity clusters `head` and `tail` (Wikidata P-id)."""

    head: int
    tail: int
    relation: str
    evidence: tuple[int, ...]


@dataclass(frozen=True)
class Document:
    """A Re-DocRED document rebuilt as text with exact offsets."""

    doc_id: str
    title: str
    text: str
    token_spans: tuple[tuple[int, int], ...]  # char span of every token, document order
    sentence_tokens: tuple[tuple[int, int], ...]  # [start, end) token range per sentence
    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]

    @functools.cached_property
    def mentions(self) -> list[Mention]:
        """Every mention of every entity, in text order."""
        found = [m for entity in self.entities for m in entity.mentions]
        return sorted(found, key=lambda m: (m.char_start, m.char_end, m.entity))


def join_tokens(sentences: Sequence[Sequence[str]]) -> tuple[str, list[tuple[int, int]]]:
    """Text of the tokenised `sentences` and the char span of each token (see module doc)."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    glue_next = True  # no space before the very first token
    quote_open = False
    for sentence in sentences:
        for token in sentence:
            glue = glue_next or token in _NO_SPACE_BEFORE
            glue_next = token in _NO_SPACE_AFTER
            if token == '"':
                glue = glue or quote_open
                glue_next = not quote_open
                quote_open = not quote_open
            if not glue:
                parts.append(" ")
                length += 1
            spans.append((length, length + len(token)))
            parts.append(token)
            length += len(token)
    return "".join(parts), spans


def parse_document(record: dict[str, Any]) -> Document:
    """One Re-DocRED record as a `Document`."""
    sentences = record["sents"]
    text, spans = join_tokens(sentences)
    offsets = [0]
    for sentence in sentences:
        offsets.append(offsets[-1] + len(sentence))
    sentence_tokens = tuple(
        (start, start + len(s)) for start, s in zip(offsets, sentences, strict=False)
    )
    entities = []
    for index, cluster in enumerate(record["vertexSet"]):
        mentions = []
        for raw in cluster:
            first = offsets[raw["sent_id"]] + raw["pos"][0]
            last = offsets[raw["sent_id"]] + raw["pos"][1]
            start, end = spans[first][0], spans[last - 1][1]
            mentions.append(
                Mention(
                    index, raw["type"], raw["sent_id"], first, last, start, end, text[start:end]
                )
            )
        label = Counter(m.label for m in mentions).most_common(1)[0][0]
        entities.append(Entity(index, label, tuple(mentions)))
    relations = tuple(
        Relation(int(r["h"]), int(r["t"]), r["r"], tuple(r.get("evidence", ())))
        for r in record.get("labels", ())
    )
    return Document(
        doc_id=content_id("redocred", record.get("title", ""), text),
        title=record.get("title", ""),
        text=text,
        token_spans=tuple(spans),
        sentence_tokens=sentence_tokens,
        entities=tuple(entities),
        relations=relations,
    )


def gold_segments(
    document: Document, chunk_tokens: int = DEFAULT_CHUNK_TOKENS, collection: str = "redocred"
) -> list[dict[str, Any]]:
    """`document` cut into chunks as the `segments` stage cuts text, each with the gold
    mentions that lie inside it.

    Rows have the `SEGMENT_WITH_MENTIONS` columns plus `char_start` (the chunk's offset into
    the document); each mention also carries `entity`, its gold cluster index. Mention
    offsets are relative to the chunk; `label` is the Re-DocRED type and `entity_type` its
    KGERMAR type.
    """
    rows = []
    for seq, (start, end) in enumerate(chunk_spans(document.text, chunk_tokens)):
        mentions = [
            {
                "text": m.text,
                "label": m.label,
                "entity_type": entity_type(m.label),
                "char_start": m.char_start - start,
                "char_end": m.char_end - start,
                "entity": m.entity,
            }
            for m in document.mentions
            if start <= m.char_start and m.char_end <= end
        ]
        rows.append(
            {
                "segment_id": content_id(document.doc_id, seq),
                "collection": collection,
                "doc_id": document.doc_id,
                "text": document.text[start:end],
                "speaker": None,
                "char_start": start,
                "mentions": mentions,
            }
        )
    return rows


def parse_documents(records: Iterable[dict[str, Any]]) -> list[Document]:
    """Documents of an already-parsed Re-DocRED JSON list."""
    return [parse_document(record) for record in records]


def load_redocred(path: str | Path) -> list[Document]:
    """Documents of a Re-DocRED-layout JSON file, in file order."""
    with Path(path).open(encoding="utf-8") as handle:
        return parse_documents(json.load(handle))
