"""Phrase nodes: common-noun runs, lemmatised, and only those two segments share."""

from transforms.ner_backends import DEFAULT_SPACY_MODEL
from transforms.phrases import PHRASE_COMPONENTS, noun_phrases, shared_phrases
from transforms.spacy_models import load_spacy


def _phrases(text: str) -> set[str]:
    return noun_phrases(load_spacy(DEFAULT_SPACY_MODEL, PHRASE_COMPONENTS)(text))


def test_noun_runs_drop_adjectives_pronouns_and_proper_noun_tails():
    found = _phrases("She took the local football clubs to see my dog Max last Tuesday.")
    assert found == {"football club", "dog"}


def test_runs_of_proper_nouns_alone_are_left_to_ner():
    assert _phrases("The Society for the Exploration of Psychotherapy Integration met.") == set()


def test_long_runs_keep_their_last_words_and_end_at_deictic_time_words():
    found = _phrases("We visited the city council budget committee meeting room yesterday.")
    assert found == {"budget committee meeting room"}


def test_only_phrases_of_two_segments_or_more_become_links():
    rows = [
        {"segment_id": "a", "phrase": "support group"},
        {"segment_id": "b", "phrase": "support group"},
        {"segment_id": "b", "phrase": "painting class"},
        {"segment_id": "b", "phrase": "support group"},
    ]
    links = list(shared_phrases(rows))
    assert links == [
        {"segment_id": "a", "node_id": "phrase:support group", "kind": "phrase"},
        {"segment_id": "b", "node_id": "phrase:support group", "kind": "phrase"},
    ]
