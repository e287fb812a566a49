"""`kgmem eval temporal` end to end on one TimeQA article (34 paragraphs, 5 questions),
through the Dagster assets."""

import json

import pytest

from kgmem.cli import main
from tests.conftest import SHARED_DATA

TIMEQA = SHARED_DATA / "timeqa" / "human_annotated_train.json"


@pytest.mark.slow
@pytest.mark.skipif(not TIMEQA.exists(), reason=f"TimeQA data not found at {TIMEQA}")
def test_eval_temporal_reports_hits_with_and_without_time(tmp_path, capsys):
    args = [
        "eval",
        "temporal",
        "--dataset",
        str(TIMEQA),
        "--articles",
        "1",
        "--home",
        str(tmp_path),
    ]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    metrics = {(r["strategy"], r["metric"]) for r in rows}
    for strategy in ("dense", "bm25", "hipporag_ppr"):
        assert {(strategy, "hit@5_with_time"), (strategy, "hit@5_ignoring_time")} <= metrics
    assert all(0.0 <= r["value"] <= 1.0 for r in rows)
    assert len({r["snapshot_id"] for r in rows}) == 1
