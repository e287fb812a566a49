"""`kgmem eval extraction` through the Dagster asset, on a few Re-DocRED documents."""

import json

import pytest

from kgmem.cli import main
from tests.conftest import SHARED_DATA
from transforms.ner_backends import DEFAULT_SPACY_MODEL

REDOCRED = SHARED_DATA / "redocred" / "dev_revised.json"


@pytest.mark.skipif(not REDOCRED.exists(), reason=f"Re-DocRED data not found at {REDOCRED}")
def test_eval_extraction_scores_ner_and_relations(tmp_path, capsys):
    args = ["eval", "extraction", "--dataset", str(REDOCRED), "--limit", "4"]
    assert main([*args, "--home", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["documents"] == 4
    typed = report["ner"][DEFAULT_SPACY_MODEL]["typed"]
    assert 0.0 < typed["f1"] <= 1.0
    assert {r["extractor"] for r in report["relations"]} == {"dep_patterns/v1"}
    assert (tmp_path / "results" / "extraction_evaluation.json").exists()
