"""Entity matching cascade: pronoun, exact, containment, fuzzy, or nothing."""

import pytest

from schemas.llm_outputs import MATCH_KINDS
from tests.transforms.llm.factories import make_segment
from transforms.llm.matching import MentionMatcher

TEXT = "Priya Natarajan joined Acme Corporation at the Harborview Office in Rotterdam in 2020."
MENTIONS = [
    ("Priya Natarajan", "PERSON"),
    ("Acme Corporation", "ORG"),
    ("the Harborview Office", "ORG"),
    ("Rotterdam", "GPE"),
    ("2020", "DATE"),
]


@pytest.fixture
def matcher() -> MentionMatcher:
    return MentionMatcher(make_segment(TEXT, MENTIONS)["mentions"], ["Sam Okafor"])


@pytest.mark.parametrize(
    ("name", "text", "how"),
    [
        ("ACME Corp.", "Acme Corporation", "exact"),
        ("Harborview Office", "the Harborview Office", "exact"),
        ("2020", "2020", "exact"),
        ("Priya", "Priya Natarajan", "containment"),
        ("the new Harborview Office", "the Harborview Office", "containment"),
        ("Rotterdamm", "Rotterdam", "fuzzy"),
        ("Sam Okafor", "Sam Okafor", "speaker"),
    ],
)
def test_cascade(matcher, name, text, how):
    found = matcher.match(name)
    assert (found.text, found.match) == (text, how)
    assert found.match in MATCH_KINDS


def test_match_keeps_the_mention_span(matcher):
    found = matcher.match("rotterdam")
    assert TEXT[found.char_start : found.char_end] == "Rotterdam"
    assert found.entity_type == "Location"


def test_first_person_is_the_speaker(matcher):
    assert matcher.match("I", speaker="Sam Okafor").match == "speaker"
    assert matcher.match("my", speaker=None) is None


@pytest.mark.parametrize(
    "name", ["Brightpage", "Jo", "", "the", "the Harborview Office in Rotterdam"]
)
def test_unmatched(matcher, name):
    assert matcher.match(name) is None


def test_fuzzy_threshold_is_configurable():
    mentions = make_segment(TEXT, MENTIONS)["mentions"]
    assert MentionMatcher(mentions, [], fuzzy_threshold=0.99).match("Rotterdamm") is None


def test_containment_in_two_mentions_is_ambiguous():
    text = "Acme Labs and Acme Printing merged."
    mentions = make_segment(text, [("Acme Labs", "ORG"), ("Acme Printing", "ORG")])["mentions"]
    assert MentionMatcher(mentions, []).match("Acme") is None
    assert MentionMatcher(mentions[:1], []).match("Acme").text == "Acme Labs"
