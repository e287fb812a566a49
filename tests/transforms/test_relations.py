"""Dependency-pattern relation extraction and spaCy NER on real text with the packaged model."""

import pytest

from transforms.ner import NER_COMPONENTS, extract_mentions
from transforms.ner_backends import DEFAULT_SPACY_MODEL
from transforms.relations import PARSE_COMPONENTS, extract_relations
from transforms.spacy_models import load_spacy


def _segment(text: str, speaker: str | None = None) -> dict:
    return {
        "segment_id": "s1",
        "collection": "c",
        "doc_id": "d",
        "text": text,
        "char_start": 100,
        "speaker": speaker,
    }


def _relations(text: str, speaker: str | None = None) -> set[tuple[str, str, str, bool]]:
    segment = _segment(text, speaker)
    ner = load_spacy(DEFAULT_SPACY_MODEL, NER_COMPONENTS)
    segment["mentions"] = list(extract_mentions(ner, [segment], DEFAULT_SPACY_MODEL))
    parser = load_spacy(DEFAULT_SPACY_MODEL, PARSE_COMPONENTS)
    return {
        (r["head_text"], r["relation"], r["tail_text"], r["negated"])
        for r in extract_relations(parser, [segment])
    }


def test_ner_spans_are_exact_in_segment_and_document():
    segment = _segment("Priya Natarajan works at the Harborview Office in Rotterdam.")
    mentions = list(
        extract_mentions(load_spacy(DEFAULT_SPACY_MODEL, NER_COMPONENTS), [segment], "m")
    )
    by_text = {m["text"]: m for m in mentions}
    assert by_text["Priya Natarajan"]["entity_type"] == "Person"
    assert by_text["Rotterdam"]["label"] == "GPE"
    for m in mentions:
        assert segment["text"][m["char_start"] : m["char_end"]] == m["text"]
        assert m["doc_char_start"] == 100 + m["char_start"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Priya Natarajan works at the Harborview Office.",
            ("Priya Natarajan", "work_at", "the Harborview Office", False),
        ),
        (
            "The Harborview Office is located in Rotterdam.",
            ("The Harborview Office", "locate_in", "Rotterdam", False),
        ),
        (
            "Maria Lopez is the CEO of Acme Corporation.",
            ("Maria Lopez", "ceo_of", "Acme Corporation", False),
        ),
    ],
)
def test_patterns(text: str, expected: tuple):
    assert expected in _relations(text)


def test_first_person_resolves_to_speaker_and_negation_is_kept():
    found = _relations(
        "I live in Leeds now, and I no longer work at Northwind Traders.", "Sam Okafor"
    )
    assert ("Sam Okafor", "live_in", "Leeds", False) in found
    assert ("Sam Okafor", "work_at", "Northwind Traders", True) in found


def test_no_relation_without_two_entities():
    assert _relations("The weather was lovely all week.") == set()
