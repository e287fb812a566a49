"""Loaders: every input format, content-hash ids, and quarantine of bad records."""

import json
import os
from pathlib import Path

import pytest

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


def _counts_add_up(result) -> None:
    assert result.records_read == len(result.documents) + result.records_quarantined


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"sessions": ["not a dict"]}', "session is not an object"),
        ('{"sessions": [{"turns": ["a turn as text"]}]}', "turn is not an object"),
        ('{"turns": 5}', "session is not an object"),
        ("[" * 50_000 + "]" * 50_000, "nested too deeply"),
        ('[{"conversation": 3}]', "cannot load file: "),
    ],
)
def test_bad_json_shapes_quarantine_the_file_or_record_and_never_raise(tmp_path, content, reason):
    (tmp_path / "bad.json").write_text(content)
    (tmp_path / "good.txt").write_text("Acme is in Leeds.")
    result = load_inputs("c", [tmp_path])
    assert [d["title"] for d in result.documents] == ["Acme is in Leeds."]
    assert any(reason in q.reason for q in result.quarantined), result.quarantined
    assert all(q.source_file.endswith("bad.json") for q in result.quarantined)
    _counts_add_up(result)
    assert result.turns_read >= result.turns_quarantined


def test_turn_counts_are_separate_from_file_counts(tmp_path):
    log = {
        "sessions": [
            {
                "turns": [
                    {"speaker": "A", "text": "Hi.", "timestamp": "2023-01-09T10:00:00Z"},
                    {"speaker": "", "text": "lost", "timestamp": "2023-01-09T10:01:00Z"},
                    "junk",
                ]
            }
        ]
    }
    (tmp_path / "c.json").write_text(json.dumps(log))
    result = load_file("c", tmp_path / "c.json")
    assert (result.records_read, len(result.documents), result.records_quarantined) == (1, 1, 0)
    assert (result.turns_read, result.turns_quarantined) == (3, 2)


def test_file_over_the_size_limit_is_quarantined_unread(tmp_path, monkeypatch):
    monkeypatch.setenv("KGMEM_MAX_FILE_MB", "0.001")
    (tmp_path / "big.txt").write_text("word " * 400)
    result = load_file("c", tmp_path / "big.txt")
    assert not result.documents
    assert "over the 1,048-byte limit" in result.quarantined[0].reason
    monkeypatch.setenv("KGMEM_MAX_FILE_MB", "lots")
    with pytest.raises(ValueError, match="KGMEM_MAX_FILE_MB"):
        load_file("c", tmp_path / "big.txt").documents  # noqa: B018


def test_long_text_is_split_into_parts_at_paragraph_breaks(tmp_path, monkeypatch):
    monkeypatch.setattr("transforms.loaders.MAX_DOCUMENT_CHARS", 100)
    paragraphs = [f"Paragraph {i} " + "x" * 40 for i in range(6)]
    (tmp_path / "long.txt").write_text("\n\n".join(paragraphs))
    result = load_file("c", tmp_path / "long.txt")
    texts = [d["text"] for d in result.documents]
    assert len(texts) > 1 and all(len(t) <= 100 for t in texts)
    assert result.documents[0]["record_ref"] == f"part 1 of {len(texts)}"
    assert "".join(texts).replace("\n", "") == "".join(paragraphs)
    _counts_add_up(result)


def test_symlinks_are_followed_to_files_and_quarantined_otherwise(tmp_path):
    source = tmp_path / "in"
    (source / "sub").mkdir(parents=True)
    (source / "real.txt").write_text("Acme is in Leeds.")
    (source / "alias.txt").symlink_to(source / "real.txt")
    (source / "loop_a.txt").symlink_to(source / "loop_b.txt")
    (source / "loop_b.txt").symlink_to(source / "loop_a.txt")
    (source / "gone.txt").symlink_to(source / "missing.txt")
    (source / "folder_link").symlink_to(source / "sub")
    os.mkfifo(source / "pipe.txt")
    result = load_inputs("c", [source])
    reasons = {Path(q.source_file).name: q.reason for q in result.quarantined}
    assert "loops or points to nothing" in reasons["loop_a.txt"]
    assert "loops or points to nothing" in reasons["gone.txt"]
    assert "links to folders are not followed" in reasons["folder_link"]
    assert reasons["pipe.txt"] == "not a regular file"
    assert reasons["real.txt"].startswith("duplicate of") or reasons["alias.txt"].startswith(
        "duplicate of"
    )
    assert len(result.documents) == 1
    _counts_add_up(result)


def test_markdown_title_skips_html_and_badges(tmp_path):
    (tmp_path / "README.md").write_text(
        '<p align="center"><img src="logo.png"></p>\n'
        "[![CI](https://ci/badge.svg)](https://ci)\n\n"
        '<h1 align="center">Kgmem <sup>beta</sup></h1>\n\nMemory for agents.\n'
    )
    (tmp_path / "front.md").write_text("---\ntitle: <b>Notes</b>\n---\nText.\n")
    titles = {d["title"] for d in load_inputs("c", [tmp_path]).documents}
    assert titles == {"Kgmem beta", "Notes"}


def test_files_in_utf16_and_cp1252_load_instead_of_being_quarantined(tmp_path):
    (tmp_path / "notepad.txt").write_bytes("Zoë lives in Köln.".encode("utf-16"))
    (tmp_path / "windows.md").write_bytes("# Café\n“Acme” opened – in Köln.".encode("cp1252"))
    (tmp_path / "blob.txt").write_bytes(bytes(range(256)) * 4)
    result = load_inputs("c", [tmp_path])
    texts = sorted(d["text"] for d in result.documents)
    assert texts == ["# Café\n“Acme” opened – in Köln.", "Zoë lives in Köln."]
    assert [q.source_file.endswith("blob.txt") for q in result.quarantined] == [True]
    assert result.quarantined[0].reason.startswith("cannot decode file: not text in UTF-8")
    _counts_add_up(result)


def test_a_turn_with_a_bad_or_no_timestamp_keeps_its_text_without_a_time(tmp_path):
    turns = [
        {"speaker": "Sam", "text": "Hi.", "timestamp": "soon"},
        {"speaker": "Ana", "text": "I live in Leeds.", "timestamp": "2023-01-09T10:00:00Z"},
        {"speaker": "Sam", "text": "Nice.", "timestamp": None},
    ]
    (tmp_path / "c.json").write_text(json.dumps({"turns": turns}))
    result = load_file("c", tmp_path / "c.json")
    (document,) = result.documents
    kept = json.loads(document["turns_json"])
    assert [t["timestamp"] for t in kept] == [None, "2023-01-09T10:00:00+00:00", None]
    assert document["text"] == "Sam: Hi.\nAna: I live in Leeds.\nSam: Nice.\n"
    assert document["doc_time"].isoformat() == "2023-01-09T10:00:00+00:00"
    assert (result.turns_read, result.turns_quarantined, result.quarantined) == (3, 0, [])
    assert [w.reason.split(":")[0] for w in result.warnings] == ["warning", "warning"]
    assert "'soon'" in result.warnings[0].reason
    assert [w.record_ref for w in result.warnings] == [
        "conversation c turn S1:1",
        "conversation c turn S1:3",
    ]
