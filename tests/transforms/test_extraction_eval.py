"""Extraction metrics on hand-made predictions, the extractor adapters and the report."""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.transforms.redocred_samples import TINY, write_records
from transforms.evaluation.extraction import (
    PredictedMention,
    PredictedTriple,
    gold_triples,
    score_mentions,
    score_relations,
)
from transforms.evaluation.extractors import (
    candidate_extractor,
    classifier_extractor,
    dependency_extractor,
)
from transforms.evaluation.report import evaluate_extraction
from transforms.evaluation.window_recall import window_recall
from transforms.ner_backends import DEFAULT_SPACY_MODEL
from transforms.redocred import gold_segments, load_redocred, parse_document
from transforms.relation_classifier.pairs import SegmentPairs

ROOT = Path(__file__).resolve().parents[2]
REDOCRED = ROOT.parent / "shared" / "data" / "redocred" / "dev_revised.json"
DOC = parse_document(TINY)


def _span(text: str) -> tuple[int, int]:
    start = DOC.text.index(text)
    return start, start + len(text)


def test_ner_scores_exact_span_typed_and_untyped():
    predicted = [
        PredictedMention(DOC.doc_id, *_span("Acme Corp"), "ORG"),  # right
        PredictedMention(DOC.doc_id, *_span("Rotterdam"), "PERSON"),  # wrong type
        PredictedMention(DOC.doc_id, *_span("Maria"), "PERSON"),  # span too short
        PredictedMention(DOC.doc_id, *_span("1999"), "DATE"),  # Value == Value
        PredictedMention("other-doc", 0, 4, "ORG"),  # ignored
    ]
    scores = score_mentions([DOC], predicted)
    assert (scores.typed.true_positives, scores.typed.predicted, scores.typed.gold) == (2, 4, 4)
    assert scores.untyped.true_positives == 3
    assert scores.typed.precision == 0.5 and scores.untyped.recall == 0.75
    assert scores.per_type["Location"].recall == 0.0
    assert scores.per_type["Organization"].f1 == 1.0


def test_gold_triples_map_direction_and_skip_values():
    assert gold_triples([DOC]) == {
        (DOC.doc_id, 0, "LocatedAt", 2),  # P159 and reversed P150 coincide
        (DOC.doc_id, 3, "PartOf", 0),
    }


def test_relation_scores_match_clusters_by_overlap():
    predicted = [
        PredictedTriple(DOC.doc_id, _span("Acme"), "LocatedAt", _span("Rotterdam")),  # overlap
        PredictedTriple(DOC.doc_id, _span("Acme Corp"), "LocatedAt", _span("Rotterdam")),  # dup
        PredictedTriple(DOC.doc_id, _span("Maria Lopez"), "RelatedTo", _span("Acme Corp")),
        PredictedTriple(DOC.doc_id, _span("CEO"), "IsA", _span("Maria Lopez")),  # no cluster
    ]
    scores = score_relations([DOC], predicted)
    assert (scores.overall.true_positives, scores.overall.predicted, scores.overall.gold) == (
        1,
        3,
        2,
    )
    assert scores.unmatched_predictions == 1
    assert scores.per_label["PartOf"].recall == 0.0
    assert scores.per_label["LocatedAt"].f1 == 1.0


def test_window_recall_on_the_tiny_document():
    rows = {r.window: r for r in window_recall([DOC], windows=(5, 10, 20))}
    assert rows[5].recall == 0.0
    assert rows[10].recall == pytest.approx(0.6667)  # Acme-Rotterdam at 8 tokens, both ways
    assert rows[20].recall == rows[None].recall == 1.0  # Lopez-Acme at 13 tokens
    assert rows[10].mention_pairs == 4 and rows[None].mention_pairs == 6  # Rotterdam-Lopez: 5


def test_candidate_rows_become_document_triples():
    segments = gold_segments(DOC, chunk_tokens=12)
    second = segments[1]

    def source(rows):
        yield {
            "segment_id": second["segment_id"],
            "doc_id": DOC.doc_id,
            "negated": False,
            "head_start": 0,
            "head_end": 3,
            "tail_start": 9,
            "tail_end": 20,
            "relation": "include",
            "confidence": 0.8,
        }
        yield {
            "segment_id": second["segment_id"],
            "doc_id": DOC.doc_id,
            "negated": True,
            "head_start": 0,
            "head_end": 3,
            "tail_start": 9,
            "tail_end": 20,
            "relation": "include",
            "confidence": 0.8,
        }

    extract = candidate_extractor(source, lambda name: ("PartOf", name == "include"))
    (triple,) = extract(segments)
    offset = second["char_start"]
    assert triple.head == (offset + 9, offset + 20) and triple.tail == (offset, offset + 3)
    assert DOC.text[slice(*triple.head)] == "Maria Lopez"


def test_dependency_extractor_on_gold_mentions():
    record = {
        "title": "Office",
        "sents": [["The", "Harborview", "Office", "is", "located", "in", "Rotterdam", "."]],
        "vertexSet": [
            [{"name": "The Harborview Office", "pos": [0, 3], "sent_id": 0, "type": "ORG"}],
            [{"name": "Rotterdam", "pos": [6, 7], "sent_id": 0, "type": "LOC"}],
        ],
        "labels": [{"h": 0, "t": 1, "r": "P131", "evidence": [0]}],
    }
    document = parse_document(record)
    predicted = list(dependency_extractor()(gold_segments(document)))
    assert score_relations([document], predicted).overall.f1 == 1.0


class _AlwaysLocated:
    extractor = "classifier/fixed:located"
    classes = ("none", "LocatedAt")
    none_label = "none"

    def probabilities(self, items: list[SegmentPairs]) -> list[np.ndarray]:
        return [np.tile([0.3, 0.7], (len(item.pairs), 1)) for item in items]


def test_classifier_extractor_with_and_without_the_weight_filter():
    segments = gold_segments(DOC)
    raw = list(classifier_extractor(_AlwaysLocated())(segments))
    assert len(raw) == 6  # three graph entities, both directions
    kept = list(classifier_extractor(_AlwaysLocated(), weighted=True)(segments))
    assert len(kept) == 6 and {t.confidence for t in kept} == {0.79}  # 0.49 + 0.3
    assert score_relations([DOC], raw).overall.true_positives == 1


def test_report_on_a_file_prints_and_serialises(tmp_path: Path):
    path = write_records([TINY], tmp_path / "tiny.json")
    extra = {"always-located": classifier_extractor(_AlwaysLocated())}
    report = evaluate_extraction(path, extra=extra)
    table = report.table()
    assert "dep_patterns/v1" in table and "always-located" in table
    payload = json.loads(json.dumps(report.to_dict()))
    assert payload["documents"] == 1
    assert {(r["extractor"], r["mentions"]) for r in payload["relations"]} >= {
        ("always-located", "gold"),
        ("always-located", "spacy"),
    }
    assert set(payload["ner"][DEFAULT_SPACY_MODEL]) == {"typed", "untyped", "per_type"}


@pytest.mark.skipif(not REDOCRED.exists(), reason=f"Re-DocRED not found at {REDOCRED}")
def test_window_recall_grows_with_w_on_redocred():
    rows = window_recall(load_redocred(REDOCRED)[:50])
    recalls = [r.recall for r in rows]
    assert recalls == sorted(recalls) and recalls[-1] == 1.0
    assert all(r.recall_in_chunk <= r.recall for r in rows)
