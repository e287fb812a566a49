"""Adapters that let any relation extractor be scored by `transforms.evaluation.extraction`.

An `Extractor` takes segment rows (`transforms.redocred.gold_segments`: text, document
offset `char_start`, and mentions, either gold or from an NER model) and yields
`PredictedTriple`s in document char offsets with inventory labels. Anything that produces
RELATION_CANDIDATES rows plugs in through `candidate_extractor` with a function mapping
its relation names onto the inventory: the dependency patterns, the pair classifier, and
later the LLM triplet stage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from transforms.evaluation.extraction import PredictedMention, PredictedTriple
from transforms.ner import NER_COMPONENTS, extract_mentions
from transforms.ner_backends import DEFAULT_SPACY_MODEL
from transforms.pair_window import DEFAULT_WINDOW
from transforms.relation_classifier.backend import RelationBackend
from transforms.relation_classifier.candidates import classify_segments
from transforms.relation_inventory import DEFAULT_INVENTORY, RelationInventory
from transforms.relations import PARSE_COMPONENTS, extract_relations
from transforms.spacy_models import load_spacy
from transforms.triple_weights import filter_candidates

Segment = Mapping[str, Any]
Extractor = Callable[[Sequence[Segment]], Iterable[PredictedTriple]]
CandidateSource = Callable[[Sequence[Segment]], Iterable[Mapping[str, Any]]]
RelationMap = Callable[[str], tuple[str, bool]]


def with_model_mentions(
    segments: Sequence[Segment], model: str = DEFAULT_SPACY_MODEL
) -> list[dict[str, Any]]:
    """Copies of `segments` whose mentions come from the spaCy NER model `model`."""
    nlp = load_spacy(model, NER_COMPONENTS)
    rows = [{**segment, "mentions": []} for segment in segments]
    by_id = {row["segment_id"]: row for row in rows}
    for mention in extract_mentions(nlp, rows, model):
        by_id[mention["segment_id"]]["mentions"].append(mention)
    return rows


def mentions_of(segments: Sequence[Segment]) -> Iterator[PredictedMention]:
    """The segments' mentions in document offsets, for NER scoring."""
    for segment in segments:
        for m in segment["mentions"]:
            yield PredictedMention(
                segment["doc_id"],
                segment["char_start"] + m["char_start"],
                segment["char_start"] + m["char_end"],
                m["label"],
            )


def candidate_extractor(source: CandidateSource, to_inventory: RelationMap) -> Extractor:
    """An extractor from a producer of RELATION_CANDIDATES rows; negated rows are dropped
    (they retract facts rather than assert them)."""

    def extract(segments: Sequence[Segment]) -> Iterator[PredictedTriple]:
        offsets = {s["segment_id"]: s["char_start"] for s in segments}
        for row in source(segments):
            if row["negated"]:
                continue
            offset = offsets[row["segment_id"]]
            head = (offset + row["head_start"], offset + row["head_end"])
            tail = (offset + row["tail_start"], offset + row["tail_end"])
            label, reverse = to_inventory(row["relation"])
            if reverse:
                head, tail = tail, head
            yield PredictedTriple(row["doc_id"], head, label, tail, float(row["confidence"]))

    return extract


def dependency_extractor(
    model: str = DEFAULT_SPACY_MODEL, inventory: RelationInventory = DEFAULT_INVENTORY
) -> Extractor:
    """The dependency-pattern extractor (`transforms.relations`), names mapped by
    `RelationInventory.map_dependency`."""

    def source(segments: Sequence[Segment]) -> Iterable[Mapping[str, Any]]:
        return extract_relations(load_spacy(model, PARSE_COMPONENTS), segments)

    return candidate_extractor(source, inventory.map_dependency)


def classifier_extractor(
    backend: RelationBackend,
    window: int = DEFAULT_WINDOW,
    weighted: bool = False,
    inventory: RelationInventory = DEFAULT_INVENTORY,
) -> Extractor:
    """A pair classifier; with `weighted`, only triples passing KGERMAR's weight filter
    within each document (`transforms.triple_weights`)."""

    def source(segments: Sequence[Segment]) -> Iterable[Mapping[str, Any]]:
        rows = classify_segments(backend, segments, window)
        return filter_candidates(rows, scope="doc_id") if weighted else rows

    return candidate_extractor(source, lambda label: (inventory.resolve(label), False))


def llm_extractor(cfg: Any, inventory: RelationInventory = DEFAULT_INVENTORY) -> Extractor:
    """The LLM triplet step (`transforms.llm`, `cfg` an `LLMStageConfig`) on chunks with
    their mentions; free-form relation names are mapped like the dependency patterns', and
    triplets whose ends are not spans of the segment (a speaker) are not scored."""
    from transforms.llm.batch import LLMExtractor

    extractor = LLMExtractor.from_config(cfg)

    def source(segments: Sequence[Segment]) -> Iterable[Mapping[str, Any]]:
        chunks = [{**s, "kind": "chunk", "turns": None} for s in segments]
        for row in extractor.extract_batch(chunks).rows:
            if row["head_start"] is not None and row["tail_start"] is not None:
                yield {**row, "negated": False}

    return candidate_extractor(source, inventory.map_dependency)
