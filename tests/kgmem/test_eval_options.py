"""`kgmem eval retrieval` with build options (issue 37, 2) and its progress line (1)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kgmem.cli import eval_cmd
from kgmem.cli.eval_progress import describe
from stores.workspace import Workspace
from transforms.evaluation.retrieval_report import comparison_markdown
from transforms.progress import Progress


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    eval_cmd.add_parser(parser.add_subparsers())
    return parser.parse_args(["eval", "retrieval", "--benchmark", "locomo", *argv])


def _settings(home: Path, *argv: str):
    return eval_cmd.eval_settings(Workspace.at(home), _parse(*argv, "--home", str(home)))


def test_build_options_reach_the_settings_and_name_the_collection(tmp_path: Path) -> None:
    default = _settings(tmp_path)
    assert default.llm_backend == "none"
    assert eval_cmd.eval_collection("locomo", default) == "locomo"
    chunked = _settings(tmp_path, "--chunk-tokens", "128")
    fused = _settings(tmp_path, "--fusion-encoder", "none")
    assert chunked.chunk_tokens == 128 and fused.fusion_encoder == "none"
    names = {eval_cmd.eval_collection("locomo", s) for s in (default, chunked, fused)}
    assert len(names) == 3, "evaluations of different settings build different collections"
    assert eval_cmd.eval_collection("locomo", chunked) == eval_cmd.eval_collection(
        "locomo", _settings(tmp_path, "--chunk-tokens", "128")
    )
    assert _settings(tmp_path, "--llm", "openai").llm_backend == "openai"


def test_a_settings_file_is_read_and_flags_beat_it(tmp_path: Path) -> None:
    given = tmp_path / "eval.toml"
    given.write_text('chunk_tokens = 96\nllm_backend = "openai"\n')
    from_file = _settings(tmp_path, "--settings", str(given))
    assert (from_file.chunk_tokens, from_file.llm_backend) == (96, "openai")
    flagged = _settings(tmp_path, "--settings", str(given), "--chunk-tokens", "64", "--no-llm")
    assert (flagged.chunk_tokens, flagged.llm_backend) == (64, "none")
    with pytest.raises(ValueError, match=r"nosuch\.toml: settings file not found"):
        _settings(tmp_path, "--settings", str(tmp_path / "nosuch.toml"))


def test_the_report_names_the_build_settings() -> None:
    rows = [{"strategy": "dense", "metric": "turn_recall@5", "value": 0.5}]
    report = comparison_markdown("locomo", rows, "snap-1", {"chunk_tokens": 128, "llm": None})
    assert "build settings: `chunk_tokens=128`, `llm=None`" in report


def test_progress_names_the_strategy_and_the_questions_done() -> None:
    names = ["dense", "bm25", "hybrid"]
    found = Progress(done=7, total=30, unit="questions")  # question 3, its second strategy
    text = describe(names, 1, 0.0, found)
    assert text.startswith("strategy 2/3 bm25, 2/10 questions, elapsed ")
    assert describe(names, 2, 0.0, found).startswith("3 strategies in 2 processes, 2/10")
