"""Quarantine reasons say what happened: a file gone mid-build is missing, not "not a regular
file"; a numeric speaker is a speaker, and a speaker of another type is named as such."""

from __future__ import annotations

import json
from pathlib import Path

from transforms.loaders import entry_problem, load_file


def test_a_file_deleted_before_it_is_read_is_reported_as_deleted(tmp_path: Path):
    path = tmp_path / "gone.txt"
    path.write_text("text")
    path.unlink()  # listed by the walk, deleted before the loader reached it
    assert entry_problem(path) == "file was deleted or moved while the build ran"
    assert load_file("c", path).quarantined[0].reason == entry_problem(path)


def _conversation(tmp_path: Path, speakers: list[object]) -> list[str]:
    turns = [{"speaker": s, "text": f"turn {i}"} for i, s in enumerate(speakers)]
    log = {"conversation_id": "c1", "sessions": [{"session_id": "S1", "turns": turns}]}
    (tmp_path / "c.json").write_text(json.dumps(log))
    result = load_file("c", tmp_path / "c.json")
    kept = [t["speaker"] for d in result.documents for t in json.loads(d["turns_json"])]
    return kept + [q.reason for q in result.quarantined]


def test_a_numeric_speaker_is_a_speaker_name(tmp_path: Path):
    assert _conversation(tmp_path, [1, 2]) == ["1", "2"]


def test_a_speaker_of_another_type_is_reported_as_such(tmp_path: Path):
    assert _conversation(tmp_path, ["Ann", {"id": 3}, True, None]) == [
        "Ann",
        "turn's speaker is a dict, not a name",
        "turn's speaker is a bool, not a name",
        "turn has no speaker",
    ]
