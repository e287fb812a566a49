"""The extraction benchmark runs end to end and reports both sides of every ratio."""

import json

from kgmem.cli import main


def test_bench_extraction_writes_ratios(tmp_path, capsys):
    output = tmp_path / "bench.json"
    assert main(["bench", "extraction", "--segments", "24", "--output", str(output)]) == 0
    rows = json.loads(output.read_text())
    assert [r["backend"].split(":")[0] for r in rows] == ["ner", "relations"]
    for row in rows:
        assert row["segments"] == 24
        assert row["stage_per_s"] > 0 and row["bare_per_s"] > 0
        assert row["ratio"] == round(row["stage_per_s"] / row["bare_per_s"], 3)
    assert "stage / bare" in capsys.readouterr().out
