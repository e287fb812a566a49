"""Dependency-parse relation extraction between entity mentions of a segment.

Patterns over spaCy's parse (the mentions come from the NER stage and are laid onto the
parsed doc, so both stages agree on entity spans):

| pattern | example | relation | prior |
|---|---|---|---|
| `svo` | "Acme acquired Brightline." | verb lemma (`acquire`) | 0.85 |
| `verb_prep` | "Priya works at the Harborview Office." | verb + preposition (`work_at`) | 0.80 |
| `attr_prep` | "Maria is the CEO of Acme." | attribute + preposition (`ceo_of`) | 0.85 |
| `appos_prep` | "Maria, the CEO of Acme, said..." | appositive + preposition (`ceo_of`) | 0.75 |

The confidence is the pattern's prior: a hand-set precision estimate, not a calibrated
probability (the relation classifier gives those). A single clear declarative from a
document sits at or above REAL's θ_stable (0.8), so it is retrieved; appositives and
statements resolved from "I" sit below it and become stable once another segment
confirms them (noisy-OR upgrade in the fact fold).
A first-person subject ("I live in Leeds") in a conversation turn resolves to the turn's
speaker (pattern suffix `+speaker`). A negated verb ("no longer works at", "does not")
marks the candidate `negated`, which fact folding reads as a retraction. A relation
stated in a question, a future, a hypothesis or a wish ("Can't wait to see more when I'm
in Boston!") is kept as speculation: confidence halved below θ_stable, extractor
`speculative:dep_patterns/v1` (`transforms.speculation`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc, Span, Token

from transforms.entity_types import is_graph_entity
from transforms.ids import content_id
from transforms.spacy_models import SpacyBatchDoFn
from transforms.speculation import SPECULATIVE_FACTOR, is_speculative, speculative_extractor
from transforms.state_events import state_events

EXTRACTOR = "dep_patterns/v1"
PARSE_COMPONENTS = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer")
PATTERN_PRIORS = {"svo": 0.85, "verb_prep": 0.80, "attr_prep": 0.85, "appos_prep": 0.75}
SPEAKER_PENALTY = 0.9
"""Factor applied to a pattern's prior when its head was resolved from "I" to the speaker."""

_SUBJECT_DEPS = {"nsubj", "nsubjpass"}
_OBJECT_DEPS = {"dobj", "attr", "oprd"}
_FIRST_PERSON = {"i", "me", "we"}
_NEGATIONS = {"not", "n't", "never", "no"}


def _lay_mentions(doc: Doc, mentions: Iterable[dict[str, Any]]) -> list[Span]:
    spans: list[Span] = []
    for mention in sorted(mentions, key=lambda m: (m["char_start"], -m["char_end"])):
        if not is_graph_entity(mention["entity_type"]):
            continue
        span = doc.char_span(
            mention["char_start"],
            mention["char_end"],
            label=mention["label"],
            alignment_mode="expand",
        )
        if span is not None and (not spans or span.start >= spans[-1].end):
            spans.append(span)
    doc.set_ents(spans)
    return spans


def _is_negated(verb: Token) -> bool:
    if any(c.dep_ == "neg" or c.lower_ in _NEGATIONS for c in verb.children):
        return True
    # "no longer works": 'no' hangs off the adverb 'longer'.
    return any(
        c.lower_ == "longer" and any(g.lower_ == "no" for g in c.children) for c in verb.children
    )


def _relation_name(*words: str) -> str:
    return "_".join(w.lower().replace(" ", "_") for w in words if w)


def _subject_of(verb: Token, by_root: dict[int, Span]) -> tuple[Span | Token, str] | None:
    """The entity (or first-person pronoun) that is the subject of `verb`."""
    for child in verb.children:
        if child.dep_ in _SUBJECT_DEPS:
            if child.i in by_root:
                return by_root[child.i], ""
            if child.lower_ in _FIRST_PERSON:
                return child, "+speaker"
    if verb.dep_ in {"conj", "xcomp"} and verb.head.pos_ in {"VERB", "AUX"}:
        return _subject_of(verb.head, by_root)
    return None


def _objects_of(verb: Token, by_root: dict[int, Span]) -> Iterator[tuple[Span, str, str]]:
    """(entity, relation, pattern) for each entity object reached from `verb`."""
    lemma = verb.lemma_
    for child in verb.children:
        if child.dep_ in _OBJECT_DEPS and child.i in by_root:
            yield by_root[child.i], lemma, "svo"
        elif child.dep_ == "prep":
            for pobj in child.children:
                if pobj.dep_ == "pobj" and pobj.i in by_root:
                    yield by_root[pobj.i], _relation_name(lemma, child.lower_), "verb_prep"
        if child.dep_ in {"attr", "dobj"} and child.i not in by_root:
            for prep in (c for c in child.children if c.dep_ == "prep"):
                for pobj in prep.children:
                    if pobj.dep_ == "pobj" and pobj.i in by_root:
                        name = _relation_name(child.lemma_, prep.lower_)
                        yield by_root[pobj.i], name, "attr_prep"


def _appositives(span: Span, by_root: dict[int, Span]) -> Iterator[tuple[Span, str, str]]:
    for appos in (c for c in span.root.children if c.dep_ == "appos"):
        for prep in (c for c in appos.children if c.dep_ == "prep"):
            for pobj in prep.children:
                if pobj.dep_ == "pobj" and pobj.i in by_root:
                    yield by_root[pobj.i], _relation_name(appos.lemma_, prep.lower_), "appos_prep"


def relations_in(doc: Doc, segment: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Relation candidates of one parsed segment whose entities are already set on `doc`."""
    by_root = {span.root.i: span for span in doc.ents}
    speaker = segment.get("speaker")
    for token in doc:
        if token.pos_ not in {"VERB", "AUX"}:
            continue
        subject = _subject_of(token, by_root)
        if subject is None:
            continue
        head, suffix = subject
        if suffix and not speaker:
            continue
        for tail, relation, pattern in _objects_of(token, by_root):
            candidate = _candidate(
                segment, head, tail, relation, pattern + suffix, _is_negated(token)
            )
            yield _as_speculation(candidate) if is_speculative(token) else candidate
    for span in doc.ents:
        for tail, relation, pattern in _appositives(span, by_root):
            candidate = _candidate(segment, span, tail, relation, pattern, negated=False)
            yield _as_speculation(candidate) if is_speculative(span.root) else candidate


def _as_speculation(candidate: dict[str, Any]) -> dict[str, Any]:
    """`candidate` marked as read from a speculative statement."""
    return {
        **candidate,
        "confidence": round(candidate["confidence"] * SPECULATIVE_FACTOR, 4),
        "extractor": speculative_extractor(candidate["extractor"]),
    }


def _candidate(
    segment: dict[str, Any],
    head: Span | Token,
    tail: Span,
    relation: str,
    pattern: str,
    negated: bool,
) -> dict[str, Any]:
    from_speaker = pattern.endswith("+speaker")
    head_text = segment["speaker"] if from_speaker else head.text
    head_start = head.idx if isinstance(head, Token) else head.start_char
    head_end = head_start + len(head.text)
    prior = PATTERN_PRIORS[pattern.removesuffix("+speaker")]
    return {
        "candidate_id": content_id(segment["segment_id"], head_start, relation, tail.start_char),
        "collection": segment["collection"],
        "segment_id": segment["segment_id"],
        "doc_id": segment["doc_id"],
        "head_text": head_text,
        "head_start": head_start,
        "head_end": head_end,
        "relation": relation,
        "tail_text": tail.text,
        "tail_start": tail.start_char,
        "tail_end": tail.end_char,
        "negated": negated,
        "confidence": round(prior * (SPEAKER_PENALTY if from_speaker else 1.0), 4),
        "pattern": pattern,
        "extractor": EXTRACTOR,
    }


def extract_relations(
    nlp: Language, segments: Iterable[dict[str, Any]], batch_size: int = 64
) -> Iterator[dict[str, Any]]:
    """Parse `segments` (each with its `mentions`) and yield their relation candidates:
    dependency patterns, and issue-state events of conversation turns."""
    items = list(segments)
    docs = nlp.pipe((s["text"] for s in items), batch_size=batch_size)
    for segment, doc in zip(items, docs, strict=True):
        yield from state_events(segment)
        if len(_lay_mentions(doc, segment["mentions"] or [])) + bool(segment.get("speaker")) < 2:
            continue
        yield from relations_in(doc, segment)


class DependencyRelationDoFn(SpacyBatchDoFn):
    """Beam DoFn: a batch of segments with their mentions in, relation candidates out."""

    COMPONENTS = PARSE_COMPONENTS

    def run(self, nlp: Language, batch: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        yield from extract_relations(nlp, batch, self._batch_size)
