"""Named-entity recognition of segments with spaCy, as a pure function and as a Beam DoFn.

The DoFn loads the model once per worker in `setup` and receives batches (from
`beam.BatchElements`), so spaCy's `nlp.pipe` batching does the heavy lifting. Mentions
keep exact char spans into the segment and into the document.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc

from transforms.entity_types import entity_type
from transforms.ids import content_id
from transforms.spacy_models import SpacyBatchDoFn

NER_COMPONENTS = ("tok2vec", "ner")


def mentions_of(doc: Doc, segment: dict[str, Any], model: str) -> Iterator[dict[str, Any]]:
    """Mention records for the entities spaCy found in `doc`, the parse of `segment`'s text."""
    for ent in doc.ents:
        yield {
            "mention_id": content_id(
                segment["segment_id"], ent.start_char, ent.end_char, ent.label_
            ),
            "collection": segment["collection"],
            "segment_id": segment["segment_id"],
            "doc_id": segment["doc_id"],
            "text": ent.text,
            "label": ent.label_,
            "entity_type": entity_type(ent.label_),
            "char_start": ent.start_char,
            "char_end": ent.end_char,
            "doc_char_start": segment["char_start"] + ent.start_char,
            "doc_char_end": segment["char_start"] + ent.end_char,
            "model": model,
        }


def extract_mentions(
    nlp: Language, segments: Iterable[dict[str, Any]], model: str, batch_size: int = 64
) -> Iterator[dict[str, Any]]:
    """Run `nlp` over `segments` in batches and yield their mentions."""
    items = list(segments)
    docs = nlp.pipe((s["text"] for s in items), batch_size=batch_size)
    for segment, doc in zip(items, docs, strict=True):
        yield from mentions_of(doc, segment, model)


class SpacyNerDoFn(SpacyBatchDoFn):
    """Beam DoFn: a batch of segment rows in, mention rows out."""

    COMPONENTS = NER_COMPONENTS

    def run(self, nlp: Language, batch: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        yield from extract_mentions(nlp, batch, self._model, self._batch_size)
