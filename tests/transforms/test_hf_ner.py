"""Hugging Face NER plumbing on CPU with a tiny BERT built from a config (random weights):
word-piece aggregation, exact spans, long texts in windows, batching and keys, labels."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import transformers
from apache_beam.ml.inference.base import KeyedModelHandler
from transformers import BertForTokenClassification

from pipelines.entity_mentions import bare_throughput
from pipelines.options import NerBackendConfig
from tests.tiny_models import save_tiny_bert
from transforms.entity_types import entity_type
from transforms.hf_ner import HfNerModelHandler
from transforms.ner_backends import DEFAULT_HF_NER_MODEL, DEFAULT_SPACY_MODEL
from transforms.token_classifier import load_token_classifier, predict_spans, resolve_device
from transforms.token_spans import (
    EntitySpan,
    WordPiece,
    aggregate_entities,
    decode_words,
    split_label,
    trim_span,
    words_of,
)

CONLL_LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
TEXTS = [
    "Priya Natarajan works at the Harborview Office in Rotterdam.",
    "Acme Corporation (UK) hired Tomasz Kowalski, a firmware engineer from Gdańsk.",
    "",
    "The TonerLine-500 recall was announced on 8 November 2021 by Marcus Bennett.",
    "Laura Chen leads the Firmware team at the Northgate office.",
]
LONG_TEXT = " ".join(TEXTS) * 3


def build_tiny_ner_model(folder: Path, forced_label: str | None = None) -> str:
    """A 1-layer BERT token classifier with CoNLL BIO labels saved in `folder`; with
    `forced_label`, every piece gets that label."""
    return str(save_tiny_bert(BertForTokenClassification, CONLL_LABELS, folder, forced_label))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_tiny_ner_model(tmp_path_factory.mktemp("tiny_ner"))


@pytest.mark.parametrize(
    ("label", "expected"),
    [("B-PER", ("B", "PER")), ("I_ORG", ("I", "ORG")), ("LOC", ("", "LOC")), ("O", ("O", ""))],
)
def test_split_label(label, expected):
    assert split_label(label) == expected


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        # IOB2: B opens, I continues, a new B splits adjacent entities of one type
        (
            ["B-PER", "I-PER", "O", "B-ORG", "B-ORG", "I-ORG"],
            [(0, 2, "PER"), (3, 4, "ORG"), (4, 6, "ORG")],
        ),
        # IOB1 / stray I: an I that continues nothing opens an entity; a type change splits
        (
            ["I-LOC", "I-LOC", "I-PER", "O", "I-MISC"],
            [(0, 2, "LOC"), (2, 3, "PER"), (4, 5, "MISC")],
        ),
        # plain labels: adjacent words of one type merge
        (["PER", "PER", "O", "LOC", "ORG"], [(0, 2, "PER"), (3, 4, "LOC"), (4, 5, "ORG")]),
        # BIOES: S is a single word, E closes
        (["S-PER", "B-ORG", "E-ORG", "I-ORG", "O"], [(0, 1, "PER"), (1, 3, "ORG"), (3, 4, "ORG")]),
        (["O", "O"], []),
    ],
)
def test_decode_words_schemes(labels, expected):
    words = [WordPiece(i, i + 1, i, label) for i, label in enumerate(labels)]
    assert decode_words(words) == [EntitySpan(*span) for span in expected]


def test_words_take_the_label_of_their_first_piece():
    pieces = [
        WordPiece(0, 3, 0, "B-PER"),
        WordPiece(3, 5, 0, "I-ORG"),
        WordPiece(6, 9, 1, "I-PER"),
        WordPiece(9, 15, 1, "O"),
        WordPiece(16, 21, 2, "O"),
    ]
    assert list(words_of(pieces)) == [
        WordPiece(0, 5, 0, "B-PER"),
        WordPiece(6, 15, 1, "I-PER"),
        WordPiece(16, 21, 2, "O"),
    ]


def test_aggregate_bio_pieces_to_exact_spans():
    text = "Priya Natarajan works at Acme Corp. in Rotterdam."
    pieces = [
        WordPiece(0, 3, 0, "B-PER"),  # pri
        WordPiece(3, 5, 0, "I-PER"),  # ##ya
        WordPiece(6, 9, 1, "I-PER"),  # nat
        WordPiece(9, 15, 1, "B-LOC"),  # ##arajan: a later piece's label is ignored
        WordPiece(16, 21, 2, "O"),
        WordPiece(22, 24, 3, "O"),
        WordPiece(25, 29, 4, "B-ORG"),
        WordPiece(30, 34, 5, "I-ORG"),
        WordPiece(34, 35, 6, "I-ORG"),  # the period of the abbreviation stays
        WordPiece(36, 38, 7, "O"),
        WordPiece(39, 48, 8, "B-LOC"),
        WordPiece(48, 49, 9, "I-LOC"),  # the sentence's period is trimmed
    ]
    spans = aggregate_entities(text, pieces)
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("Priya Natarajan", "PER"),
        ("Acme Corp.", "ORG"),
        ("Rotterdam", "LOC"),
    ]


@pytest.mark.parametrize(
    ("raw", "trimmed"),
    [
        (' "(Acme Corp.)", ', "Acme Corp."),
        ("Acme (UK)", "Acme (UK)"),
        ("Acme (UK", "Acme (UK"),
        ("(Acme", "Acme"),
        ("Acme's", "Acme"),
        ("the U.S.", "the U.S."),
        ("J.", "J."),
        ("Rotterdam.", "Rotterdam"),
        ("Zürich-", "Zürich"),
        (" ,.; ", ""),
    ],
)
def test_trim_span(raw, trimmed):
    start, end = trim_span(raw, 0, len(raw))
    assert raw[start:end] == trimmed


@pytest.mark.parametrize(
    ("label", "kgermar"),
    [
        ("B-PER", "Person"),
        ("I-ORG", "Organization"),
        ("LOC", "Location"),
        ("S-LOC", "Location"),
        ("MISC", "Concept"),
        ("TIME", "Value"),
        ("NUM", "Value"),
        ("GPE", "Location"),
        ("location", "Location"),
        ("LABEL_3", "Concept"),
    ],
)
def test_labels_map_to_kgermar_types(label, kgermar):
    assert entity_type(label) == kgermar


def test_config_defaults_tag_and_validation():
    assert NerBackendConfig().model_tag == f"spacy:{DEFAULT_SPACY_MODEL}"
    assert NerBackendConfig(backend="hf").model == DEFAULT_HF_NER_MODEL
    assert NerBackendConfig(backend="hf", model="/m").model_tag == "hf:/m"
    with pytest.raises(ValueError, match="backend"):
        NerBackendConfig(backend="flair")
    with pytest.raises(ValueError, match="device"):
        NerBackendConfig(device="tpu")
    with pytest.raises(ValueError, match="stride"):
        NerBackendConfig(max_length=64, stride=64)


def test_resolve_device():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError):
        resolve_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            resolve_device("cuda")


def test_slow_tokenizers_are_refused(monkeypatch, tiny_model):
    slow = SimpleNamespace(is_fast=False)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *_a, **_k: slow)
    with pytest.raises(ValueError, match="fast tokenizer"):
        load_token_classifier(tiny_model, "cpu")


def test_random_model_spans_are_exact_and_labelled(tiny_model):
    classifier = load_token_classifier(tiny_model, "cpu")
    results = predict_spans(classifier, TEXTS)
    assert len(results) == len(TEXTS)
    assert any(results), "a random model tags something"
    for text, spans in zip(TEXTS, results, strict=True):
        assert spans == sorted(spans)
        for before, after in pairwise(spans):
            assert before.end <= after.start
        for span in spans:
            assert 0 <= span.start < span.end <= len(text)
            mention = text[span.start : span.end]
            assert mention == mention.strip() and mention[-1] not in ",;:"
            assert span.label in {"PER", "ORG", "LOC", "MISC"}


def test_long_texts_run_in_overlapping_windows_without_dropping_words(tmp_path):
    every_word = build_tiny_ner_model(tmp_path / "b_per", forced_label="B-PER")
    classifier = load_token_classifier(every_word, "cpu", max_length=16)
    (spans,) = predict_spans(classifier, [LONG_TEXT], stride=4, window_batch=3)
    windows = classifier.tokenizer(
        LONG_TEXT, max_length=16, stride=4, truncation=True, return_overflowing_tokens=True
    )
    assert len(windows["input_ids"]) > 10, "the text needs many windows"
    found = [LONG_TEXT[s.start : s.end] for s in spans]
    words = classifier.tokenizer.backend_tokenizer.pre_tokenizer.pre_tokenize_str(LONG_TEXT)
    assert found == [word for word, _ in words if word[0].isalnum()]

    one_entity = build_tiny_ner_model(tmp_path / "i_org", forced_label="I-ORG")
    classifier = load_token_classifier(one_entity, "cpu", max_length=16)
    (spans,) = predict_spans(classifier, [LONG_TEXT], stride=4)
    assert spans == [EntitySpan(0, len(LONG_TEXT.rstrip(".")), "ORG")]


def test_keyed_handler_batches_and_keeps_keys(tiny_model):
    handler = HfNerModelHandler(tiny_model, device="cpu", min_batch_size=2, max_batch_size=2)
    assert handler.batch_elements_kwargs() == {"min_batch_size": 2, "max_batch_size": 2}
    keyed = KeyedModelHandler(handler)
    model = keyed.load_model()
    batches = [[("a", TEXTS[0]), ("b", TEXTS[1])], [("c", TEXTS[2]), ("d", TEXTS[3])]]
    expected = predict_spans(load_token_classifier(tiny_model, "cpu"), TEXTS[:4])
    results = [kv for batch in batches for kv in keyed.run_inference(batch, model)]
    assert [key for key, _ in results] == ["a", "b", "c", "d"]
    for (_, result), text, spans in zip(results, TEXTS, expected, strict=False):
        assert result.example == text
        assert result.inference == spans
        assert result.model_id == f"hf:{tiny_model}"


def test_bare_throughput_of_both_backends(tiny_model):
    hf = NerBackendConfig(backend="hf", model=tiny_model, device="cpu", max_batch_size=2)
    assert bare_throughput(hf, TEXTS) > 0
    assert bare_throughput(NerBackendConfig(max_batch_size=2), TEXTS) > 0
