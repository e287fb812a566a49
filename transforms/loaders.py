"""Loaders that turn the files of a collection into document records.

Formats (chosen by extension, then by JSON layout):
- `.txt`: the first non-empty line is the title; no date.
- `.md`: optional front matter between `---` lines (`title:`, `date:`); else the first
  line with visible text (a `#` heading, say) is the title, with its HTML, images and
  link targets removed (`transforms.markup.title_text`: a README that opens with
  `<h1 align="center">` or a row of badges is not titled with the markup).
- `.jsonl`: one document per line: `text` (required), `id`, `title`, `date` (optional).
- `.json`: a conversation log (`sessions[].turns[]` or a flat `turns[]`, each turn with
  `speaker`, `text`, `timestamp`), or the LoCoMo layout (a list of samples, each with a
  `conversation` of `session_N` turn lists and `session_N_date_time` stamps), or a passage
  corpus (a list of `{title, text}` objects, MuSiQue's `*_corpus.json`): one document per
  passage whose text is `title` then the passage on the next line, as HippoRAG indexes them.

A conversation becomes one document whose text is its transcript ("Speaker: text" per
line); its turns, with offsets into that transcript, travel in `turns_json` so that the
segmenter can cut turns and sessions. Ids are content hashes of the document's text and
turns, so an unchanged file keeps its ids. Anything unreadable goes to quarantine with the
file, the record and the reason; the rest of the collection still loads.

Files are read as UTF-8, or in the encoding a byte-order mark names (UTF-16 from Windows
tools), or else as Windows-1252/Latin-1 (`transforms.text_decoding`); only bytes that are
none of these are quarantined.

Fault isolation and limits (each with its own quarantine reason):
- any error while loading one file, whatever its kind, quarantines that file and only it;
- a file over `MAX_FILE_BYTES` (16 MiB; `$KGMEM_MAX_FILE_MB` changes it) is not read;
- JSON nested too deeply for the parser (about 1,000 levels) is quarantined;
- a text or Markdown document over `MAX_DOCUMENT_CHARS` is split at paragraph breaks into
  parts of at most that size (record `part N of M`), which bounds the segments of one
  document; a JSON Lines record or passage over it is quarantined (its format has no
  place to split);
- a symlink is followed to a file; one that loops, dangles or names a folder is
  quarantined, as is anything that is not a regular file (a FIFO, a socket).

Counts add up per unit: records read (files; JSON Lines lines; passages; conversations)
= documents out + records quarantined, and the turns of conversations are counted apart:
turns read = turns kept + turns quarantined, where a session that is not an object with a
list of turns counts as one quarantined turn (its turns cannot be told apart). A turn
whose time is missing or unreadable is kept, with its text, without a time, and gets a
warning row (`LoadResult.warnings`, reason prefixed `warning: `), which the stage stores
in the quarantine table beside the quarantined records; warnings are not quarantined
records and do not enter the counts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from transforms.ids import content_id
from transforms.markup import title_text
from transforms.quarantine import QuarantineRecord
from transforms.text_decoding import DecodeError, decode_text
from transforms.timeparse import parse_time

STAGE = "raw_documents"
WARNING_PREFIX = "warning: "
"""Reasons of the rows in `LoadResult.warnings`: records kept, with something lost (a
turn's unreadable time), stored in the quarantine table beside the records set aside."""
SUPPORTED_SUFFIXES = (".txt", ".md", ".jsonl", ".json")
MAX_FILE_MB_ENV = "KGMEM_MAX_FILE_MB"
MAX_FILE_BYTES = 16 * 1024 * 1024
"""Files larger than this are quarantined unread (default; `$KGMEM_MAX_FILE_MB` sets it)."""
MAX_DOCUMENT_CHARS = 1_000_000
"""Text and Markdown documents longer than this are split into parts of at most this size."""


def max_file_bytes() -> int:
    """The file size limit in force: `$KGMEM_MAX_FILE_MB` MiB when set, else the default."""
    configured = os.environ.get(MAX_FILE_MB_ENV)
    if not configured:
        return MAX_FILE_BYTES
    try:
        return int(float(configured) * 1024 * 1024)
    except ValueError as exc:
        raise ValueError(f"{MAX_FILE_MB_ENV}={configured!r} is not a number") from exc


@dataclass
class LoadResult:
    """Documents loaded from a set of inputs, the quarantined records, and how many were read."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[QuarantineRecord] = field(default_factory=list)
    records_read: int = 0
    turns_read: int = 0
    turns_quarantined: int = 0
    warnings: list[QuarantineRecord] = field(default_factory=list)

    def extend(self, other: LoadResult) -> None:
        self.documents.extend(other.documents)
        self.quarantined.extend(other.quarantined)
        self.warnings.extend(other.warnings)
        self.records_read += other.records_read
        self.turns_read += other.turns_read
        self.turns_quarantined += other.turns_quarantined

    @property
    def records_quarantined(self) -> int:
        """Quarantined records (files, lines, passages, conversations), turns not counted."""
        return len(self.quarantined) - self.turns_quarantined


class RecordError(ValueError):
    """A record that cannot be loaded; the message is the quarantine reason."""


def iter_input_files(inputs: Iterable[str | Path]) -> Iterator[Path]:
    """Every entry under `inputs` (files or folders) that is not a folder, sorted, skipping
    hidden ones: files, and also symlinks (to anything, looping or dangling) and special
    files, so that the loader quarantines what it cannot read instead of missing it.
    Folders are walked without following links."""
    for root in map(Path, inputs):
        if not root.exists():
            raise FileNotFoundError(f"input path {root} does not exist")
        if not root.is_dir():
            yield root
            continue
        found = []
        for folder, folders, files in os.walk(root):
            here = Path(folder)
            linked = [name for name in folders if (here / name).is_symlink()]
            folders[:] = sorted(name for name in folders if name not in linked)
            found.extend(here / name for name in [*files, *linked])
        for path in sorted(found):
            if not any(part.startswith(".") for part in path.relative_to(root.parent).parts):
                yield path


def entry_problem(path: Path) -> str | None:
    """Why the input entry `path` cannot be read as a file (a looping, dangling or
    folder symlink, a file deleted since the folder was listed, or not a regular file),
    or None when it can."""
    if path.is_symlink():
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return "symlink that loops or points to nothing"
        if target.is_dir():
            return f"symlink to the folder {target}; links to folders are not followed"
    if not path.is_symlink() and not path.exists():
        return "file was deleted or moved while the build ran"
    if not path.is_file():
        return "not a regular file"
    return None


def speaker_name(value: object) -> str:
    """A turn's speaker as a name: text, or a whole number (speaker ids such as 1 or 2 in
    exported logs); a RecordError saying what is wrong otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is not None and not isinstance(value, str):
        raise RecordError(f"turn's speaker is a {type(value).__name__}, not a name")
    if not value or not value.strip():
        raise RecordError("turn has no speaker")
    return value


def load_inputs(collection: str, inputs: Iterable[str | Path]) -> LoadResult:
    """Load every supported file under `inputs` into document records of `collection`."""
    result = LoadResult()
    for path in iter_input_files(inputs):
        result.extend(load_file(collection, path))
    return _without_duplicates(result)


def _without_duplicates(result: LoadResult) -> LoadResult:
    """Keep the first of documents with identical content; quarantine the others."""
    first: dict[str, dict[str, Any]] = {}
    for document in result.documents:
        original = first.setdefault(document["doc_id"], document)
        if original is not document:
            reason = f"duplicate of {original['source_path']} ({original['record_ref']})"
            path = Path(document["source_path"])
            result.quarantined.append(_quarantine(path, document["record_ref"], reason))
    result.documents = list(first.values())
    return result


def load_file(collection: str, path: Path) -> LoadResult:
    """Load one file; unreadable files or records are quarantined, never raised. Any error
    while loading the file (a JSON shape no loader expected, say) quarantines the whole
    file with its type and message, and nothing of it is kept. A bad `$KGMEM_MAX_FILE_MB`
    is a configuration error and raises."""
    limit = max_file_bytes()
    try:
        return _load_file(collection, path, limit)
    except Exception as exc:  # fault isolation: one bad file never fails the collection
        reason = f"cannot load file: {type(exc).__name__}: {exc}"
        return LoadResult(quarantined=[_quarantine(path, "file", reason)], records_read=1)


def _file_rejected(path: Path, reason: str, raw: str = "") -> LoadResult:
    return LoadResult(quarantined=[_quarantine(path, "file", reason, raw)], records_read=1)


def _load_file(collection: str, path: Path, limit: int) -> LoadResult:
    problem = entry_problem(path)
    if problem:
        return _file_rejected(path, problem)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        return _file_rejected(
            path,
            f"unsupported file type {suffix or '(none)'}; "
            f"expected one of {', '.join(SUPPORTED_SUFFIXES)}",
        )
    size = path.stat().st_size
    if size > limit:
        return _file_rejected(
            path,
            f"file is {size:,} bytes, over the {limit:,}-byte limit (${MAX_FILE_MB_ENV} raises it)",
        )
    try:
        raw = decode_text(path.read_bytes())
    except OSError as exc:
        return _file_rejected(path, f"cannot read file: {exc}")
    except DecodeError as exc:
        return _file_rejected(path, f"cannot decode file: {exc}")
    if suffix == ".jsonl":
        return _load_jsonl(collection, path, raw)
    if suffix == ".json":
        return _load_json(collection, path, raw)
    result = LoadResult(records_read=1)
    try:
        title, doc_time, body = _split_markdown(raw) if suffix == ".md" else _split_text(raw)
        parts = split_long_text(body, MAX_DOCUMENT_CHARS)
        result.records_read = len(parts)  # each part is a record of its own
        for number, part in enumerate(parts, 1):
            ref, name = "file", title
            if len(parts) > 1:
                ref, name = f"part {number} of {len(parts)}", f"{title} (part {number})"
            result.documents.append(_document(collection, path, ref, name, part, doc_time))
    except RecordError as exc:
        return _file_rejected(path, str(exc), raw)
    return result


def split_long_text(text: str, limit: int) -> list[str]:
    """`text` cut into consecutive parts of at most `limit` characters, at the last
    paragraph break (else line break, else space) before each cut; one part when short."""
    parts = []
    while len(text) > limit:
        window = text[:limit]
        cut = max(window.rfind("\n\n"), 0) or max(window.rfind("\n"), 0) or window.rfind(" ")
        cut = cut if cut > limit // 2 else limit
        parts.append(text[:cut])
        text = text[cut:].lstrip("\n")
    return [*parts, text]


def _quarantine(path: Path, record_ref: str, reason: str, raw: str = "") -> QuarantineRecord:
    return QuarantineRecord(STAGE, str(path), record_ref, reason, raw)


def _document(
    collection: str,
    path: Path,
    record_ref: str,
    title: str,
    text: str,
    doc_time: datetime | None,
    turns: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    if not text.strip():
        raise RecordError("document has no text")
    kind = "conversation" if turns is not None else "document"
    turns_json = json.dumps(turns, ensure_ascii=False, default=str) if turns is not None else None
    return {
        "doc_id": content_id(kind, title, text, turns_json),
        "collection": collection,
        "source_path": str(path),
        "record_ref": record_ref,
        "kind": kind,
        "title": title,
        "text": text,
        "doc_time": doc_time,
        "turns_json": turns_json,
    }


def _split_text(raw: str) -> tuple[str, datetime | None, str]:
    title = next((line.strip() for line in raw.splitlines() if line.strip()), "")
    return title, None, raw


def _split_markdown(raw: str) -> tuple[str, datetime | None, str]:
    meta: dict[str, str] = {}
    body = raw
    lines = raw.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is None:
            raise RecordError("front matter opened with '---' is never closed")
        for line in lines[1:end]:
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip().strip("\"'")
        body = "".join(lines[end + 1 :]).lstrip("\n")
    title = title_text(meta.get("title", "")) or next(
        (text for text in map(title_text, body.splitlines()) if text), ""
    )
    try:
        doc_time = parse_time(meta["date"]) if meta.get("date") else None
    except ValueError as exc:
        raise RecordError(f"front matter date: {exc}") from exc
    return title, doc_time, body


def _load_jsonl(collection: str, path: Path, raw: str) -> LoadResult:
    result = LoadResult()
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        result.records_read += 1
        ref = f"line {number}"
        try:
            record = _parse_json(line)
            if not isinstance(record, dict):
                raise RecordError("expected a JSON object")
            ref = f"line {number} (id {record['id']})" if record.get("id") else ref
            text = record.get("text")
            if not isinstance(text, str):
                raise RecordError("missing string field 'text'")
            _check_length(text)
            doc_time = _optional_time(record.get("date") or record.get("timestamp"))
            title = str(record.get("title") or record.get("id") or _split_text(text)[0])
            result.documents.append(_document(collection, path, ref, title, text, doc_time))
        except RecordError as exc:
            result.quarantined.append(_quarantine(path, ref, str(exc), line))
    return result


def _load_json(collection: str, path: Path, raw: str) -> LoadResult:
    try:
        data = _parse_json(raw)
    except RecordError as exc:
        return LoadResult(quarantined=[_quarantine(path, "file", str(exc), raw)], records_read=1)
    if isinstance(data, list) and all(isinstance(s, dict) and "conversation" in s for s in data):
        result = LoadResult()
        for index, sample in enumerate(data):
            result.extend(_load_conversation(collection, path, _locomo_to_log(sample, index)))
        return result
    if isinstance(data, dict) and ("sessions" in data or "turns" in data):
        return _load_conversation(collection, path, data)
    if isinstance(data, list) and data and all(_is_passage(p) for p in data):
        return _load_passages(collection, path, data)
    return LoadResult(
        quarantined=[
            _quarantine(
                path,
                "file",
                "unrecognised JSON layout: expected a conversation "
                "({sessions|turns: [...]}), a LoCoMo list of samples or a passage "
                "list ([{title, text}, ...])",
                raw,
            )
        ],
        records_read=1,
    )


def _is_passage(record: object) -> bool:
    return isinstance(record, dict) and "title" in record and "text" in record


def passage_text(title: str, text: str) -> str:
    """The document text of a corpus passage: its title line, then the passage."""
    return f"{title}\n{text}"


def passage_document(
    collection: str, path: Path, index: int, title: str, text: str
) -> dict[str, Any]:
    """The document record of passage `index` of a passage corpus (its id is the content
    hash of title and text, so a benchmark's gold passage maps to it by exact match)."""
    return _document(collection, path, f"passage {index}", title, passage_text(title, text), None)


def _load_passages(collection: str, path: Path, passages: list[dict[str, Any]]) -> LoadResult:
    result = LoadResult(records_read=len(passages))
    for index, passage in enumerate(passages):
        title, text = passage["title"], passage["text"]
        try:
            if not isinstance(title, str) or not isinstance(text, str) or not text.strip():
                raise RecordError("passage needs a string title and a non-empty string text")
            _check_length(text)
            result.documents.append(passage_document(collection, path, index, title, text))
        except RecordError as exc:
            raw = json.dumps(passage, ensure_ascii=False, default=str)
            result.quarantined.append(_quarantine(path, f"passage {index}", str(exc), raw))
    return result


def _check_length(text: str) -> None:
    if len(text) > MAX_DOCUMENT_CHARS:
        raise RecordError(f"text of {len(text):,} characters, over {MAX_DOCUMENT_CHARS:,}")


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise RecordError(f"invalid JSON: {exc.msg} at {where}") from exc
    except RecursionError as exc:
        raise RecordError("JSON nested too deeply to parse (over about 1,000 levels)") from exc


def _optional_time(value: object) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return parse_time(value)
    except ValueError as exc:
        raise RecordError(str(exc)) from exc


def _locomo_to_log(sample: dict[str, Any], index: int) -> dict[str, Any]:
    """Rewrite one LoCoMo sample into the conversation layout (turn ids keep `dia_id`)."""
    conversation = sample["conversation"]
    numbers = sorted(
        int(key.removeprefix("session_"))
        for key in conversation
        if key.startswith("session_") and key.removeprefix("session_").isdigit()
    )
    sessions = []
    for number in numbers:
        stamp = conversation.get(f"session_{number}_date_time")
        turns = [
            {
                "turn_id": turn.get("dia_id"),
                "speaker": turn.get("speaker"),
                "text": turn.get("text"),
                "timestamp": stamp,
            }
            for turn in conversation[f"session_{number}"]
        ]
        sessions.append({"session_id": f"S{number}", "started_at": stamp, "turns": turns})
    return {"conversation_id": locomo_conversation_id(sample, index), "sessions": sessions}


def locomo_conversation_id(sample: dict[str, Any], index: int) -> str:
    """The id (and document title) of LoCoMo sample `index`: its `sample_id`."""
    return str(sample.get("sample_id") or f"sample {index}")


def _turn_time(turn: dict[str, Any], session: dict[str, Any]) -> tuple[datetime | None, str]:
    """The time of `turn` (its timestamp, else its session's `started_at`) and, when it has
    none, why: the turn is kept without a time rather than dropped."""
    value = turn.get("timestamp") or session.get("started_at")
    if value in (None, ""):
        return None, "turn kept without a time: no timestamp and its session no started_at"
    try:
        return parse_time(value), ""
    except ValueError as exc:
        return None, f"turn kept without a time: {exc}"


def _load_conversation(collection: str, path: Path, log: dict[str, Any]) -> LoadResult:
    """Flatten sessions into turns with transcript offsets; quarantine bad turns one by one."""
    result = LoadResult(records_read=1)
    conversation_id = str(log.get("conversation_id") or path.stem)
    sessions = log.get("sessions")
    if sessions is None:
        sessions = [{"session_id": "S1", "turns": log.get("turns")}]
    if not isinstance(sessions, list) or not sessions:
        result.quarantined.append(
            _quarantine(path, f"conversation {conversation_id}", "no sessions or turns")
        )
        return result
    transcript: list[str] = []
    offset = 0
    turns: list[dict[str, Any]] = []
    for s_index, session in enumerate(sessions, 1):
        session_turns = session.get("turns") if isinstance(session, dict) else None
        if not isinstance(session_turns, list):
            result.quarantined.append(
                _quarantine(
                    path,
                    f"conversation {conversation_id} session {s_index}",
                    "session is not an object with a list of turns",
                    json.dumps(session, default=str)[:2000],
                )
            )
            result.turns_quarantined += 1
            result.turns_read += 1
            continue
        session_id = str(session.get("session_id") or f"S{s_index}")
        for t_index, turn in enumerate(session_turns, 1):
            result.turns_read += 1
            if not isinstance(turn, dict):
                ref = f"conversation {conversation_id} turn {session_id}:{t_index}"
                raw = json.dumps(turn, default=str)[:2000]
                result.quarantined.append(_quarantine(path, ref, "turn is not an object", raw))
                result.turns_quarantined += 1
                continue
            turn_id = str(turn.get("turn_id") or f"{session_id}:{t_index}")
            ref = f"conversation {conversation_id} turn {turn_id}"
            try:
                speaker, text = speaker_name(turn.get("speaker")), turn.get("text")
                if not isinstance(text, str) or not text.strip():
                    raise RecordError("turn has no text")
            except RecordError as exc:
                result.quarantined.append(
                    _quarantine(path, ref, str(exc), json.dumps(turn, default=str))
                )
                result.turns_quarantined += 1
                continue
            stamp, problem = _turn_time(turn, session)
            if problem:
                raw = json.dumps(turn, default=str)
                result.warnings.append(_quarantine(path, ref, f"{WARNING_PREFIX}{problem}", raw))
            prefix = f"{speaker}: "
            start = offset + len(prefix)
            line = f"{prefix}{text}\n"
            transcript.append(line)
            turns.append(
                {
                    "turn_id": turn_id,
                    "session_id": session_id,
                    "speaker": speaker,
                    "timestamp": stamp.isoformat() if stamp else None,
                    "char_start": start,
                    "char_end": start + len(text),
                }
            )
            offset += len(line)
    if not turns:
        result.quarantined.append(
            _quarantine(path, f"conversation {conversation_id}", "no valid turns")
        )
        return result
    title = str(log.get("title") or conversation_id)
    first_time = next((parse_time(t["timestamp"]) for t in turns if t["timestamp"]), None)
    ref = f"conversation {conversation_id}"
    result.documents.append(
        _document(collection, path, ref, title, "".join(transcript), first_time, turns)
    )
    return result
