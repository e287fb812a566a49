"""The Hugging Face backend on a tiny random-weight BERT, and the classifier Beam pipeline."""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.util import assert_that

from pipelines import relation_classifier
from pipelines.parquet_io import read_shards
from schemas.tables import RELATION_CANDIDATES, SEGMENT_WITH_MENTIONS
from tests.beam_testing import direct_test_pipeline
from tests.tiny_models import save_tiny_bert
from transforms.relation_classifier.candidates import ClassifierConfig
from transforms.relation_classifier.huggingface import HuggingFaceBackend, marked_context
from transforms.relation_classifier.pairs import PairQuery, segment_pairs

LABELS = [
    "no_relation",
    "org:city_of_headquarters",
    "per:employee_of",
    "org:subsidiaries",
    "per:spouse",
]
TEXT = "Brightline is a subsidiary of Acme Corporation, based in Rotterdam."


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer BERT with TACRED labels whose head always prefers org:subsidiaries."""
    from transformers import BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny_re_bert")
    return save_tiny_bert(BertForSequenceClassification, LABELS, folder, LABELS[3], 5.0)


def _mentions() -> list[dict]:
    found = []
    for name, entity_type in [
        ("Brightline", "Organization"),
        ("Acme Corporation", "Organization"),
        ("Rotterdam", "Location"),
    ]:
        start = TEXT.index(name)
        found.append(
            {
                "text": name,
                "label": "ORG",
                "entity_type": entity_type,
                "char_start": start,
                "char_end": start + len(name),
            }
        )
    return found


def test_marked_context_wraps_the_pair_in_a_token_window():
    pair = PairQuery(
        head=(0, 10), tail=(30, 46), head_type="Organization", tail_type="Organization", distance=4
    )
    assert marked_context(TEXT, pair) == (
        "[E1] Brightline [/E1] is a subsidiary of [E2] Acme Corporation [/E2], based in Rotterdam."
    )
    typed = ("@ * {type} * ", " @", "# ^ {type} ^ ", " #")
    assert marked_context(TEXT, pair, typed, context_tokens=1) == (
        "@ * Organization * Brightline @ is a subsidiary of # ^ Organization ^ Acme Corporation #,"
    )
    reverse = PairQuery((30, 46), (0, 10), "Organization", "Organization", 4)
    assert marked_context(TEXT, reverse, context_tokens=0).startswith("[E2] Brightline [/E2]")


def test_backend_maps_model_labels_onto_the_inventory(tiny_model: Path):
    backend = HuggingFaceBackend(str(tiny_model), batch_size=2)
    assert backend.model_labels == tuple(LABELS)
    assert backend.classes == ("none", "LocatedAt", "PartOf", "PartOf^-1", "RelatedTo")
    assert backend.extractor == f"classifier/hf:{tiny_model}"
    item = segment_pairs(TEXT, _mentions(), window=50)
    (probabilities,) = backend.probabilities([item])
    assert probabilities.shape == (6, 5)
    assert np.allclose(probabilities.sum(axis=1), 1.0)
    expected = np.exp(5.0) / (np.exp(5.0) + 4)
    assert np.allclose(probabilities[:, 3], expected, atol=1e-4)
    cold = HuggingFaceBackend(str(tiny_model), temperature=100.0)
    assert cold.probabilities([item])[0][:, 3].max() < 0.25


def _input(tmp_path: Path) -> str:
    rows = [
        {
            "segment_id": "s1",
            "collection": "c",
            "doc_id": "d",
            "text": TEXT,
            "speaker": None,
            "mentions": _mentions(),
        },
        {
            "segment_id": "s2",
            "collection": "c",
            "doc_id": "d",
            "text": "Nothing here.",
            "speaker": None,
            "mentions": [],
        },
    ]
    path = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SEGMENT_WITH_MENTIONS), path)
    return str(path)


def test_pipeline_writes_classified_candidates(tiny_model: Path, tmp_path: Path):
    def check(actual: list[dict]) -> None:
        triples = {(r["head_text"], r["relation"], r["tail_text"]) for r in actual}
        assert ("Acme Corporation", "PartOf", "Brightline") in triples
        assert ("Brightline", "PartOf", "Acme Corporation") in triples
        assert len(triples) == len(actual) == 6
        assert {(r["pattern"], r["extractor"]) for r in actual} == {
            ("pair_window", f"classifier/hf:{tiny_model}")
        }

    cfg = ClassifierConfig(backend="hf", model=str(tiny_model), max_batch_size=2)
    with direct_test_pipeline() as p:
        out = relation_classifier.build(p, _input(tmp_path), str(tmp_path / "out" / "r"), cfg)
        assert_that(out, check)
    written = read_shards(tmp_path / "out" / "r", RELATION_CANDIDATES)
    assert written.num_rows == 6 and written.schema == RELATION_CANDIDATES


def test_pipeline_command_line(tiny_model: Path, tmp_path: Path):
    argv = [
        "--input",
        _input(tmp_path),
        "--output",
        str(tmp_path / "cli" / "r"),
        "--backend",
        "hf",
        "--model",
        str(tiny_model),
        "--min-confidence",
        "0.99",
    ]
    with direct_test_pipeline() as p:
        relation_classifier.main(argv, test_pipeline=p)
    assert read_shards(tmp_path / "cli" / "r", RELATION_CANDIDATES).num_rows == 0
