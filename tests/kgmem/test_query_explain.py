"""`kgmem query --explain`: seeds with the heads of their text, and each hit's paths or
a line saying the strategy records none (issue 37, 3.14)."""

from __future__ import annotations

from kgmem.cli import main


def _explained(sample_build, capsys, strategy: str) -> str:
    workspace, _ = sample_build
    question = "Where does Priya Natarajan work?"
    args = ["query", question, "--strategy", strategy, "-k", "2", "--explain"]
    assert main([*args, "--home", str(workspace.root)]) == 0
    return capsys.readouterr().out


def test_seed_segments_show_their_text(sample_build, capsys) -> None:
    printed = _explained(sample_build, capsys, "memorai_dwpr")
    seeds = printed[printed.index('"seeds"') : printed.index('"entities"')]
    assert "«Priya Natarajan works at the Harborview Office" in seeds
    assert printed.count("   path ") >= 2, "every hit lists its paths"


def test_a_hit_without_paths_says_so(sample_build, capsys) -> None:
    printed = _explained(sample_build, capsys, "hipporag_ppr")
    assert printed.count("no path: hipporag_ppr records none for this hit") == 2
