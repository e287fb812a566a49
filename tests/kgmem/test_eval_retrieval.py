"""`kgmem eval retrieval` end to end on small LoCoMo and MuSiQue slices through the Dagster
assets, and the regression check's verdict on a drop."""

import json
from pathlib import Path

import pytest

from dagster_project.defs.retrieval_evaluation.assets import check_name, regression_check
from kgmem.cli import main
from tests.tiny_models import save_tiny_bert
from tests.transforms.test_retrieval_questions import (
    locomo_slice,
    musique_slice,
    needs_locomo,
    needs_musique,
)


def run_eval(tmp_path: Path, capsys: pytest.CaptureFixture, *args: str) -> list[dict]:
    home = tmp_path / "home"
    assert main(["eval", "retrieval", *args, "--json", "--home", str(home)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def locomo_workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a folder whose `home` the LoCoMo evaluations share, the slice): the second
    evaluation finds the corpus built and only evaluates."""
    folder = tmp_path_factory.mktemp("locomo_eval")
    return folder, locomo_slice(folder)


@pytest.mark.slow
@needs_musique
def test_eval_retrieval_musique_slice(tmp_path: Path, capsys: pytest.CaptureFixture):
    corpus, questions, answerable = musique_slice(tmp_path, size=20)  # 10 of them distractors
    strategies = ("dense", "bm25", "hybrid", "hipporag_ppr")
    missed_file = tmp_path / "misses.jsonl"
    rows = run_eval(
        tmp_path,
        capsys,
        *("--benchmark", "musique", "--input", str(corpus), "--dataset", str(questions)),
        *("--strategies", ",".join(strategies), "--questions", "4"),
        *("--misses", str(missed_file)),
    )
    values = {(r["strategy"], r["metric"]): r["value"] for r in rows}
    for strategy in strategies:
        for metric in ("recall@2", "recall@5", "mrr", "latency_p50_ms", "llm_calls_per_query"):
            assert (strategy, metric) in values
        assert values[(strategy, "questions")] == min(4, answerable)
        assert 0.0 <= values[(strategy, "recall@2")] <= values[(strategy, "recall@5")] <= 1.0
    assert max(values[(s, "recall@5")] for s in strategies) > 0.5
    assert len({r["snapshot_id"] for r in rows}) == 1
    missed = [json.loads(line) for line in missed_file.read_text().splitlines()]
    values_missed = sum(1 - values[(s, "recall@5")] for s in strategies)
    assert (len(missed) > 0) == (values_missed > 1e-9)
    for miss in missed:
        assert (
            set(miss["ranks"]) == set(strategies)
            and miss["rank"] == miss["ranks"][miss["strategy"]]
        )
        assert miss["gold"] not in miss["retrieved"]
    hipporag = [m for m in missed if m["strategy"] == "hipporag_ppr"]
    assert all("flat" in m["explanation"] for m in hipporag)
    results = tmp_path / "home" / "results"
    assert (results / "retrieval_musique.png").read_bytes().startswith(b"\x89PNG")
    assert "| dense |" in (results / "retrieval_musique.md").read_text()
    home = str(tmp_path / "home")
    fit = ["train", "hybrid-weights", "--benchmark", "musique", "--dataset", str(questions)]
    assert main([*fit, "--questions-limit", "4", "--home", home]) == 0
    fitted = json.loads((tmp_path / "home" / "models" / "hybrid_weights.json").read_text())
    record = fitted["documents"]
    assert record["questions"] == min(4, answerable) and record["objective"] == "recall@5"
    assert sum(record["weights"].values()) == pytest.approx(1.0)
    assert record["score"] >= max(record["signal_scores"].values()) - 1e-9


@needs_locomo
def test_eval_retrieval_locomo_slice(locomo_workspace, capsys: pytest.CaptureFixture):
    folder, path = locomo_workspace
    rows = run_eval(
        folder,
        capsys,
        *("--benchmark", "locomo", "--input", str(path), "--strategies", "dense,bm25"),
        *("--questions", "8"),
    )
    values = {(r["strategy"], r["metric"]): r["value"] for r in rows}
    assert {r["strategy"] for r in rows} == {"dense", "bm25"}
    for strategy in ("dense", "bm25"):
        assert values[(strategy, "questions")] == 8
        turn = [values[(strategy, f"turn_recall@{k}")] for k in (3, 5, 10)]
        session = [values[(strategy, f"session_recall@{k}")] for k in (3, 5, 10)]
        assert turn == sorted(turn) and session == sorted(session)
        assert all(0.0 <= v <= 1.0 for v in turn + session)
    assert any(metric.startswith("turn_recall@5[") for _, metric in values)
    assert values[("bm25", "turn_recall@10")] > 0.0
    results = folder / "home" / "results"
    report = json.loads((results / "retrieval_locomo.json").read_text())
    assert report["build_settings"]["llm_backend"] == "none" and report["rows"]
    assert "`llm_backend=none`" in (results / "retrieval_locomo.md").read_text()


@needs_locomo
def test_eval_retrieval_scores_a_reranked_variant(
    locomo_workspace, tmp_path: Path, capsys: pytest.CaptureFixture
):
    from transformers import BertForSequenceClassification

    reranker = save_tiny_bert(BertForSequenceClassification, ["relevance"], tmp_path / "rr")
    folder, path = locomo_workspace
    rows = run_eval(
        folder,
        capsys,
        *("--benchmark", "locomo", "--input", str(path), "--questions", "4"),
        *("--strategies", "bm25,bm25+rerank", "--reranker", str(reranker)),
        *("--rerank-depth", "5"),
    )
    values = {(r["strategy"], r["metric"]): r["value"] for r in rows}
    assert {r["strategy"] for r in rows} == {"bm25", "bm25+rerank"}
    assert values[("bm25+rerank", "questions")] == 4
    # the reranker only reorders the first 5 turns: what lies beyond them is unchanged
    assert values[("bm25+rerank", "turn_recall@10")] == values[("bm25", "turn_recall@10")]


def test_a_reranked_variant_without_a_reranker_is_a_one_line_error(tmp_path, capsys):
    home = str(tmp_path / "home")
    code = main(
        [
            "eval",
            "retrieval",
            "--benchmark",
            "locomo",
            "--strategies",
            "bm25+rerank",
            "--home",
            home,
        ]
    )
    assert code == 2
    captured = capsys.readouterr()
    assert "bm25+rerank need --reranker MODEL" in captured.out + captured.err


def test_regression_check_fails_on_a_drop_beyond_the_margin():
    previous = {"recall@2": 0.40, "recall@5": 0.60}
    dropped = regression_check("dense", previous, {"recall@2": 0.40, "recall@5": 0.55}, 0.02)
    assert not dropped.passed and dropped.check_name == check_name("dense")
    assert dropped.metadata["drops"].value == {"recall@5": pytest.approx(0.05)}
    assert regression_check("dense", previous, {"recall@2": 0.39, "recall@5": 0.6}, 0.02).passed
    assert not regression_check("dense", previous, {"recall@2": 0.39, "recall@5": 0.6}, 0.0).passed
    assert regression_check("dense", {}, {"recall@5": 0.1}, 0.02).passed
    assert regression_check("dense", previous, {}, 0.02).passed
