"""`kgmem bench backfill`: its levels, ratios and identity verdict, and its argument errors.
The concurrent backfill itself (identical snapshots, LLM pool, quiet workers) is tested
end to end in tests/dagster_project/test_scheduling.py; no timing assertions here."""

from __future__ import annotations

import pytest

from benchmarks.backfill_scaling import BackfillScaling, Level, parse_levels
from kgmem.cli.app import main


def _level(at_once: int, seconds: float, hashes: dict[str, str], status: str = "built") -> Level:
    partitions = [{"collection": c, "status": status, "seconds": 1.0} for c in hashes]
    return Level(at_once, seconds, partitions, hashes)


def test_levels_are_two_or_more_distinct_positive_counts() -> None:
    assert parse_levels("1,2,4") == [1, 2, 4]
    for bad in ("2", "0,2", "2,2", "1,-1"):
        with pytest.raises(ValueError, match="--concurrency"):
            parse_levels(bad)


def test_ratios_are_to_the_first_level_and_identity_is_per_collection() -> None:
    same = {"part0": "h0", "part1": "h1"}
    result = BackfillScaling(2, 5, [_level(1, 100.0, same), _level(2, 60.0, dict(same))])
    assert result.ratios == {1: 1.0, 2: 0.6}
    assert result.identical and result.as_dict()["identical_snapshots"] is True
    other = BackfillScaling(2, 5, [_level(1, 100.0, same), _level(2, 60.0, {"part0": "h0"})])
    assert not other.identical
    failed = _level(2, 1.0, same, status="failed")
    assert failed.failed == ["part0", "part1"] and _level(1, 1.0, same).failed == []


def test_cli_refuses_bad_levels_and_too_few_partitions(tmp_path, capsys) -> None:
    base = ["bench", "backfill", "--home", str(tmp_path)]
    assert main([*base, "--concurrency", "2"]) == 2
    assert "--concurrency needs two or more" in capsys.readouterr().err
    assert main([*base, "--partitions", "1"]) == 2
    assert "--partitions must be at least 2" in capsys.readouterr().err
