"""Loaders: every input format, content-hash ids, and quarantine of bad records."""

import json
from pathlib import Path

from transforms.loaders import load_file, load_inputs


def test_markdown_front_matter_and_text(tmp_path: Path):
    (tmp_path / "a.md").write_text(
        "---\ntitle: Opening\ndate: 2021-03-15\n---\nAcme opened an office.\n"
    )
    (tmp_path / "b.txt").write_text("Plain title\nBody of the plain file.\n")
    result = load_inputs("c", [tmp_path])
    by_title = {d["title"]: d for d in result.documents}
    assert set(by_title) == {"Opening", "Plain title"}
    assert by_title["Opening"]["text"] == "Acme opened an office.\n"
    assert by_title["Opening"]["doc_time"].isoformat() == "2021-03-15T00:00:00+00:00"
    assert by_title["Plain title"]["doc_time"] is None
    assert result.records_read == 2 and not result.quarantined


def test_ids_are_content_hashes(tmp_path: Path):
    (tmp_path / "a.txt").write_text("Same text.")
    first = load_file("c", tmp_path / "a.txt").documents[0]["doc_id"]
    (tmp_path / "a.txt").write_text("Same text.")
    assert load_file("c", tmp_path / "a.txt").documents[0]["doc_id"] == first
    (tmp_path / "a.txt").write_text("Changed text.")
    assert load_file("c", tmp_path / "a.txt").documents[0]["doc_id"] != first


def test_jsonl_bad_line_is_quarantined_with_reason(tmp_path: Path):
    lines = ['{"id": "n1", "title": "One", "text": "Good."}', "{not json", '{"id": "n3"}']
    (tmp_path / "d.jsonl").write_text("\n".join(lines))
    result = load_file("c", tmp_path / "d.jsonl")
    assert [d["title"] for d in result.documents] == ["One"]
    reasons = {q.record_ref: q.reason for q in result.quarantined}
    assert reasons["line 2"].startswith("invalid JSON")
    assert reasons["line 3 (id n3)"] == "missing string field 'text'"
    assert result.records_read == len(result.documents) + len(result.quarantined)


def test_conversation_turn_offsets_point_into_transcript(tmp_path: Path):
    log = {
        "conversation_id": "c1",
        "sessions": [
            {
                "session_id": "S1",
                "turns": [
                    {
                        "speaker": "Sam",
                        "text": "I live in Leeds.",
                        "timestamp": "2023-01-09T10:00:00Z",
                    },
                    {"speaker": "Assistant", "text": "Noted.", "timestamp": "2023-01-09T10:01:00Z"},
                    {"speaker": "", "text": "lost speaker", "timestamp": "2023-01-09T10:02:00Z"},
                ],
            },
        ],
    }
    (tmp_path / "c.json").write_text(json.dumps(log))
    result = load_file("c", tmp_path / "c.json")
    document = result.documents[0]
    turns = json.loads(document["turns_json"])
    assert [document["text"][t["char_start"] : t["char_end"]] for t in turns] == [
        "I live in Leeds.",
        "Noted.",
    ]
    assert result.quarantined[0].record_ref == "conversation c1 turn S1:3"
    assert result.quarantined[0].reason == "turn has no speaker"


def test_locomo_layout(tmp_path: Path):
    sample = [
        {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "A",
                "speaker_b": "B",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "A", "dia_id": "D1:1", "text": "Hi B!"},
                    {"speaker": "B", "dia_id": "D1:2", "text": "Hi A."},
                ],
            },
            "qa": [],
        }
    ]
    (tmp_path / "locomo.json").write_text(json.dumps(sample))
    document = load_file("c", tmp_path / "locomo.json").documents[0]
    turns = json.loads(document["turns_json"])
    assert [t["turn_id"] for t in turns] == ["D1:1", "D1:2"]
    assert turns[0]["timestamp"] == "2023-05-08T13:56:00+00:00"


def test_unsupported_and_duplicate_files(tmp_path: Path):
    (tmp_path / "x.pdf").write_bytes(b"%PDF")
    (tmp_path / "a.txt").write_text("Twin.")
    (tmp_path / "b.txt").write_text("Twin.")
    result = load_inputs("c", [tmp_path])
    reasons = sorted(q.reason.split(";")[0].split(" of ")[0] for q in result.quarantined)
    assert len(result.documents) == 1
    assert reasons == ["duplicate", "unsupported file type .pdf"]
    assert result.records_read == 3
