"""The numpy BERT encoder gives sentence-transformers' vectors, and a query is embedded
without importing torch."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from tests.import_probe import MODEL_LIBRARIES, loaded_after
from transforms.embedding import DEFAULT_ENCODER, encode, load_encoder, resolve_model_path
from transforms.numpy_bert import NumpyBertEncoder, numpy_encoder

TEXTS = [
    "Who is the CEO of Acme Corporation?",
    "Melanie: I went camping with the kids at the lake last weekend. " * 40,  # truncated
    "E-42",
    "",
]


def test_vectors_equal_sentence_transformers():
    directory = resolve_model_path(DEFAULT_ENCODER)
    ours = numpy_encoder(directory).encode(TEXTS)
    theirs = load_encoder(DEFAULT_ENCODER).encode_query(TEXTS, normalize_embeddings=True)
    assert ours.dtype == np.float32 and ours.shape == theirs.shape
    assert np.abs(ours - theirs).max() < 1e-5


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores for a second BLAS thread")
def test_vectors_are_the_same_bits_under_any_blas_thread_limit():
    """A graph strategy's query (one BLAS thread), `dense` (the pool) and an evaluation's
    batch must embed a question alike; OpenBLAS's two-thread products differ in the last
    bits, so the encoder holds itself to one thread."""
    encoder = numpy_encoder(resolve_model_path(DEFAULT_ENCODER))
    questions = [f"What did speaker {i} say about the trip to Boston in May?" for i in range(8)]
    with threadpool_limits(limits=1, user_api="blas"):
        one = encoder.encode(questions)
    with threadpool_limits(limits=2, user_api="blas"):
        two = encoder.encode(questions)
    assert np.array_equal(one, two)


def test_query_role_goes_through_numpy_and_passages_through_torch():
    queries = encode(TEXTS[:1], role="query")
    passages = encode(TEXTS[:1], role="passage")
    assert np.abs(queries - passages).max() < 1e-5  # MiniLM has no query prompt


def test_a_query_process_never_imports_torch():
    code = (
        "from transforms.embedding import encode\n"
        "vector = encode(['where is the office?'], role='query')\n"
        "assert vector.shape == (1, 384), vector.shape\n"
        "assert encode([]).shape == (0, 384)  # a graph without theses asks for none\n"
    )
    assert loaded_after(code, MODEL_LIBRARIES) == []


def _copy_model(tmp_path):
    target = tmp_path / "model"
    shutil.copytree(resolve_model_path(DEFAULT_ENCODER), target)
    return target


def test_models_of_another_shape_are_left_to_sentence_transformers(tmp_path):
    model = _copy_model(tmp_path)
    assert NumpyBertEncoder.supports(model)
    prompts = model / "config_sentence_transformers.json"
    prompts.write_text(json.dumps({"prompts": {"query": "query: "}}))
    assert not NumpyBertEncoder.supports(model)  # a query prompt: sentence-transformers
    prompts.unlink()
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    assert not NumpyBertEncoder.supports(model)
    assert not NumpyBertEncoder.supports(tmp_path / "missing")
    with pytest.raises(ValueError, match="not a BERT sentence-transformers model"):
        NumpyBertEncoder(model)
