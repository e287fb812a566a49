"""`kgmem entities merge|split` refuses names that are no entity of the collection."""

from __future__ import annotations

import duckdb

from kgmem.cli.app import main


def _constraints(home) -> int:
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return con.execute("SELECT count(*) FROM entity_constraints").fetchone()[0]


def test_merge_of_unknown_names_is_refused_and_records_nothing(copied_home, capsys):
    before = _constraints(copied_home)
    argv = ["entities", "merge", "Nosuch1", "Nosuch2", "--collection", "sample"]
    assert main([*argv, "--home", str(copied_home)]) == 2
    assert "no entity named 'Nosuch1' in collection 'sample'" in capsys.readouterr().err
    assert _constraints(copied_home) == before


def test_merge_of_known_names_is_recorded(copied_home, capsys):
    before = _constraints(copied_home)
    argv = ["entities", "merge", "Sam Okafor", "Acme Corporation", "--collection", "sample"]
    assert main([*argv, "--home", str(copied_home)]) == 0
    assert _constraints(copied_home) == before + 1
