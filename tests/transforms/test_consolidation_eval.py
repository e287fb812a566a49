"""Pairwise consolidation scores against Re-DocRED-layout coreference groups."""

from transforms.evaluation.consolidation import consolidation_scores
from transforms.redocred import parse_document

RECORD = {
    "title": "t",
    "sents": [
        ["Priya", "Natarajan", "met", "Natarajan", "'s", "twin", "in", "the", "U.S.", "."],
        ["The", "United", "States", "and", "the", "2006", "Winter", "Olympics", "."],
        ["The", "2010", "Winter", "Olympics", "followed", "."],
    ],
    "vertexSet": [
        [
            {"name": "Priya Natarajan", "pos": [0, 2], "sent_id": 0, "type": "PER"},
            {"name": "Natarajan", "pos": [3, 4], "sent_id": 0, "type": "PER"},
        ],
        [
            {"name": "U.S.", "pos": [8, 9], "sent_id": 0, "type": "LOC"},
            {"name": "United States", "pos": [1, 3], "sent_id": 1, "type": "LOC"},
        ],
        [{"name": "2006 Winter Olympics", "pos": [5, 8], "sent_id": 1, "type": "MISC"}],
        [{"name": "2010 Winter Olympics", "pos": [1, 4], "sent_id": 2, "type": "MISC"}],
    ],
    "labels": [],
}


def test_cascade_finds_surname_and_acronym_but_not_other_olympics():
    scores = {s.method: s for s in consolidation_scores([parse_document(RECORD)], embed=None)}
    cascade = scores["cascade"]
    assert (cascade.pairs_gold, cascade.pairs_predicted) == (2, 2)
    assert (cascade.precision, cascade.recall, cascade.f1) == (1.0, 1.0, 1.0)
    assert scores["normalized"].recall == 0.0
