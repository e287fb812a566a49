"""Kinds of broken input a user may feed a build, each written by a small function.

Each writer puts one bad file (or link, or FIFO) named after its kind into a folder and
returns its path. `benchmarks.reliability` loads each beside a good file and checks that
the bad one is quarantined with a reason (`BAD_INPUTS`) or loaded (`RECOVERED_INPUTS`),
the good one loads, and no record is lost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from transforms.loaders import MAX_FILE_BYTES

Writer = Callable[[Path], Path]

TURN = {"speaker": "Sam", "text": "I live in Leeds.", "timestamp": "2023-01-09T10:00:00Z"}


def _text(name: str, content: str | bytes) -> Writer:
    def write(folder: Path) -> Path:
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write


def _json(name: str, data: object) -> Writer:
    return _text(name, json.dumps(data))


def _conversation(name: str, turn: dict) -> Writer:
    return _json(name, {"sessions": [{"session_id": "S1", "turns": [turn]}]})


def _link(name: str, target: str) -> Writer:
    def write(folder: Path) -> Path:
        (folder / name).symlink_to(folder / target)
        return folder / name

    return write


def _loop(folder: Path) -> Path:
    (folder / "loop_a.txt").symlink_to(folder / "loop_b.txt")
    (folder / "loop_b.txt").symlink_to(folder / "loop_a.txt")
    return folder / "loop_a.txt"


def _folder_link(folder: Path) -> Path:
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.txt").write_text("Inner.")
    (folder / "folder_link").symlink_to(folder / "sub")
    return folder / "folder_link"


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "pipe.txt")
    return folder / "pipe.txt"


def _oversize(folder: Path) -> Path:
    path = folder / "huge.txt"
    line = "Acme shipped another printer today.\n"
    with path.open("w", encoding="utf-8") as out:
        out.write(line * (MAX_FILE_BYTES // len(line) + 10))
    return path


def _duplicate(folder: Path) -> Path:
    """A copy of `good.txt`, named to sort after it: the loader keeps the first."""
    (folder / "zz_copy.txt").write_text((folder / "good.txt").read_text())
    return folder / "zz_copy.txt"


BAD_INPUTS: dict[str, Writer] = {
    "empty text file": _text("empty.txt", ""),
    "whitespace-only Markdown": _text("blank.md", "  \n\t\n"),
    "binary bytes named .txt": _text("binary.txt", bytes(range(256)) * 4),
    "unsupported type (.pdf)": _text("report.pdf", b"%PDF-1.7"),
    "no file extension": _text("README", "Acme."),
    "unclosed front matter": _text("open.md", "---\ntitle: Open\nAcme opened.\n"),
    "bad front-matter date": _text("date.md", "---\ndate: yesterday-ish\n---\nAcme.\n"),
    "invalid JSON": _text("broken.json", '{"sessions": ['),
    "JSON nested 50,000 deep": _text("deep.json", "[" * 50_000 + "]" * 50_000),
    "JSON null": _text("null.json", "null"),
    "unrecognised JSON layout": _json("layout.json", {"foo": 1}),
    "session that is not an object": _json("session.json", {"sessions": ["not a dict"]}),
    "turns that are not a list": _json("turns.json", {"turns": 5}),
    "turn that is not an object": _json("turn.json", {"turns": ["a turn as text"]}),
    "turn without speaker": _conversation("nospeaker.json", {**TURN, "speaker": ""}),
    "turn without text": _conversation("notext.json", {**TURN, "text": None}),
    "turn whose speaker is an object": _conversation("objspeaker.json", {**TURN, "speaker": {}}),
    "passage with a non-string text": _json("passages.json", [{"title": "T", "text": 5}]),
    "LoCoMo sample of the wrong shape": _json("locomo.json", [{"conversation": 3}]),
    "JSON Lines: invalid line": _text("lines.jsonl", '{"text": "ok"}\n{broken\n'),
    "JSON Lines: line not an object": _text("array.jsonl", "[1, 2]\n"),
    "JSON Lines: no text field": _text("notext.jsonl", '{"title": "T"}\n'),
    "JSON Lines: bad date": _text("baddate.jsonl", '{"text": "Acme.", "date": "whenever"}\n'),
    "file over the size limit": _oversize,
    "symlink loop": _loop,
    "dangling symlink": _link("gone.txt", "missing.txt"),
    "symlink to a folder": _folder_link,
    "FIFO": _fifo,
    "duplicate of another file": _duplicate,
}

RECOVERED_INPUTS: dict[str, Writer] = {
    "Latin-1 text": _text("latin1.txt", "caf\xe9 cr\xe8me in K\xf6ln".encode("latin-1")),
    "Windows-1252 text": _text("cp1252.txt", "\u201cAcme\u201d \u2013 K\xf6ln".encode("cp1252")),
    "UTF-16 with BOM": _text("utf16.txt", "Acme in K\xf6ln".encode("utf-16")),
    "UTF-16 big-endian with BOM": _text("utf16be.txt", "\ufeffAcme".encode("utf-16-be")),
    "turn with a bad timestamp": _conversation("stamp.json", {**TURN, "timestamp": "soon"}),
    "turn with a numeric speaker": _conversation("numspeaker.json", {**TURN, "speaker": 7}),
    "turn without any time": _conversation("notime.json", {**TURN, "timestamp": None}),
}
"""Inputs that look broken but hold good records: each must load as a document (a turn
without a readable time is kept without one, with a warning row)."""
