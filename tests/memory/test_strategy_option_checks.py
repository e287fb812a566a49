"""`kgmem query --option` is checked against what the strategy reads: an unknown key or an
invalid value is a one-line error naming it, before the snapshot opens."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgmem.cli.app import main
from memory.strategies.names import STRATEGY_NAMES
from memory.strategies.options import OPTIONS, check_options


def test_every_strategy_declares_its_options():
    assert set(OPTIONS) == set(STRATEGY_NAMES)


@pytest.mark.parametrize(
    ("strategy", "options", "message"),
    [
        ("gram_paths", {"bogus": 1}, "--option bogus: not an option of strategy gram_paths"),
        ("gram_paths", {"max_lenght": 2}, "did you mean max_length"),
        ("gram_paths", {"max_length": -5}, "--option max_length=-5: must be a whole number >= 1"),
        ("hipporag_ppr", {"damping": 1.5}, "must be a number from 0 to 1"),
        ("dense", {"traversal": "off"}, "not an option of strategy dense"),
        ("memorai_dwpr", {"traversal": "sideways"}, "must be one of on, off"),
        ("personalai_astar", {"astar_max_depth": "deep"}, "must be a whole number >= 0"),
    ],
)
def test_unknown_keys_and_invalid_values_are_refused(strategy, options, message):
    with pytest.raises(ValueError, match=message):
        check_options(strategy, options)


def test_valid_options_pass():
    check_options("gram_paths", {"max_length": 2, "flat_share": 0.3, "vector_probes": 0})
    check_options("personalai_beam", {"bs_max_paths": 5, "bs_mean_alpha": 0.5})
    check_options("kgermar_fusion", {"bank_budget": "split", "node_share": 0.5, "layers": 2})


def test_query_refuses_a_bad_option_in_one_line(tmp_path, capsys):
    argv = ["query", "q", "--strategy", "gram_paths", "--option", "max_length=-5"]
    assert main([*argv, "--home", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == ["error: --option max_length=-5: must be a whole number >= 1"]


def test_every_option_a_strategy_reads_is_declared():
    """A key read in the query package (`options.get("key"`) but declared for no strategy
    would be refused by `kgmem query`: this catches a new option added without its rule."""
    root = Path(__file__).parents[2]
    sources = [*(root / "memory").rglob("*.py"), root / "transforms" / "traversal_blend.py"]
    read = {
        m.group(1)
        for path in sources
        for m in re.finditer(r'(?:\bo|options)\.get\(\s*"([a-z_]+)"', path.read_text())
    }
    declared = set().union(*OPTIONS.values())
    assert read - declared == set()


def test_memory_query_refuses_an_option_the_strategy_does_not_read(graph_memory) -> None:
    """The API and the MCP tools reach `Memory.query`, not the CLI's check."""
    with pytest.raises(ValueError, match="not an option of strategy hybrid"):
        graph_memory.query("Acme", strategy="hybrid", options={"max_length": 2})
    with pytest.raises(ValueError, match="max_length=-5"):
        graph_memory.query("Acme", strategy="gram_paths", options={"max_length": -5})
