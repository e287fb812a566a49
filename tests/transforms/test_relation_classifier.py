"""The trained relation classifier: calibration, training on a tiny synthetic set, the
saved artifact, and candidate rows from any backend."""

from pathlib import Path

import numpy as np
import pytest

from tests.transforms.redocred_samples import synthetic_records, write_records
from transforms.relation_classifier.calibration import (
    calibrated_probabilities,
    expected_calibration_error,
    fit_temperature,
)
from transforms.relation_classifier.candidates import ClassifierConfig, classify_segments
from transforms.relation_classifier.pairs import SegmentPairs, segment_pairs
from transforms.relation_classifier.probe import (
    LinearProbe,
    ProbeBackend,
    artifact_dir,
    find_artifact,
)
from transforms.relation_classifier.training import TrainingConfig, train_relation_classifier


def test_temperature_scaling_recovers_the_true_temperature():
    rng = np.random.default_rng(0)
    true_logits = rng.normal(scale=2.0, size=(4000, 4))
    labels = np.array([rng.choice(4, p=p) for p in calibrated_probabilities(true_logits)])
    assert fit_temperature(true_logits * 3.0, labels) == pytest.approx(3.0, rel=0.1)


def test_expected_calibration_error():
    assert expected_calibration_error(np.array([0.9, 0.9]), np.array([1, 0])) == pytest.approx(0.4)
    assert expected_calibration_error(np.array([0.75] * 4), np.array([1, 1, 1, 0])) == 0.0
    assert expected_calibration_error(np.array([]), np.array([])) == 0.0


def _segment(text: str, mentions: list[tuple[str, str]]) -> dict:
    spans = []
    for name, entity_type in mentions:
        start = text.index(name)
        spans.append(
            {
                "text": name,
                "label": entity_type,
                "entity_type": entity_type,
                "char_start": start,
                "char_end": start + len(name),
            }
        )
    return {"segment_id": "s1", "collection": "c", "doc_id": "d", "text": text, "mentions": spans}


def test_segment_pairs_skip_values_and_same_entity():
    segment = _segment(
        "Acme Corp, founded in 1999, is in Rotterdam; ACME grew.",
        [
            ("Acme Corp", "Organization"),
            ("1999", "Value"),
            ("Rotterdam", "Location"),
            ("ACME", "Organization"),
        ],
    )
    item = segment_pairs(segment["text"], segment["mentions"], window=50)
    names = {(h["text"], t["text"]) for h, t in item.mentions}
    assert names == {
        ("Acme Corp", "Rotterdam"),
        ("Rotterdam", "Acme Corp"),
        ("Rotterdam", "ACME"),
        ("ACME", "Rotterdam"),
    }
    assert segment_pairs(segment["text"], segment["mentions"], window=1).pairs == ()


class _FixedBackend:
    """A backend whose probabilities come from a table keyed by (head, tail) text."""

    extractor = "classifier/fixed:test"
    classes = ("none", "LocatedAt", "PartOf^-1")
    none_label = "none"

    def __init__(self, table: dict[tuple[str, str], list[float]]) -> None:
        self.table = table

    def probabilities(self, items: list[SegmentPairs]) -> list[np.ndarray]:
        return [
            np.array(
                [
                    self.table[(item.text[slice(*p.head)], item.text[slice(*p.tail)])]
                    for p in item.pairs
                ]
            )
            for item in items
        ]


def test_candidates_drop_none_swap_inverse_and_keep_best_direction():
    segment = _segment(
        "Maria works for Acme in Rotterdam.",
        [("Maria", "Person"), ("Acme", "Organization"), ("Rotterdam", "Location")],
    )
    backend = _FixedBackend(
        {
            ("Maria", "Acme"): [0.9, 0.05, 0.05],
            ("Acme", "Maria"): [0.2, 0.1, 0.7],  # Maria PartOf Acme
            ("Acme", "Rotterdam"): [0.1, 0.8, 0.1],
            ("Rotterdam", "Acme"): [0.5, 0.3, 0.2],
            ("Maria", "Rotterdam"): [0.4, 0.35, 0.25],  # none wins
            ("Rotterdam", "Maria"): [0.1, 0.45, 0.45],
        }
    )
    rows = list(classify_segments(backend, [segment], window=50))
    found = {(r["head_text"], r["relation"], r["tail_text"], r["confidence"]) for r in rows}
    assert found == {
        ("Maria", "PartOf", "Acme", 0.7),
        ("Acme", "LocatedAt", "Rotterdam", 0.8),
        ("Rotterdam", "LocatedAt", "Maria", 0.45),
    }
    assert {(r["pattern"], r["extractor"], r["negated"]) for r in rows} == {
        ("pair_window", "classifier/fixed:test", False)
    }
    maria = next(r for r in rows if r["head_text"] == "Maria")
    assert segment["text"][maria["head_start"] : maria["head_end"]] == "Maria"
    strict = list(classify_segments(backend, [segment], window=50, min_confidence=0.7))
    assert [r["relation"] for r in strict] == ["LocatedAt"]


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        ClassifierConfig(backend="svm")


def test_missing_artifact_says_how_to_train(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match=r"relation_classifier\.training"):
        ProbeBackend(tmp_path / "absent")


def test_training_on_a_synthetic_set_learns_and_round_trips(tmp_path: Path):
    dataset = write_records(synthetic_records(40), tmp_path / "synthetic.json")
    config = TrainingConfig(regularization=1.0, max_iter=300)
    metadata = train_relation_classifier(dataset, tmp_path / "model", config)
    assert metadata["split"]["held_out_documents"] == 12
    assert metadata["classes"] == ["LocatedAt", "PartOf", "none"]
    assert metadata["metrics"]["pair"]["f1"] > 0.9
    assert metadata["metrics"]["document"]["triples"]["f1"] > 0.9
    assert len(metadata["dataset"]["sha256"]) == 64

    backend = ProbeBackend(tmp_path / "model")
    assert backend.extractor == "classifier/probe:model"
    segment = _segment(
        "Orbis is located in Malmo. Ravi is a member of Helio.",
        [
            ("Orbis", "Organization"),
            ("Malmo", "Location"),
            ("Ravi", "Person"),
            ("Helio", "Organization"),
        ],
    )
    rows = list(classify_segments(backend, [segment], window=50))
    triples = {(r["head_text"], r["relation"], r["tail_text"]) for r in rows}
    assert {("Orbis", "LocatedAt", "Malmo"), ("Ravi", "PartOf", "Helio")} <= triples
    probabilities = backend.probabilities([segment_pairs(segment["text"], segment["mentions"])])
    assert np.allclose(probabilities[0].sum(axis=1), 1.0)

    probe, saved = LinearProbe.load(tmp_path / "model")
    assert saved["temperature"] == probe.temperature > 0
    assert find_artifact(tmp_path, str(tmp_path / "model")) == tmp_path / "model"
    assert find_artifact(tmp_path, "absent") is None
    assert artifact_dir(tmp_path, "x") == tmp_path / "models" / "relation_classifier" / "x"
