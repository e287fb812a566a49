"""Cutting documents into sentence-aware chunks and conversations into turns and sessions.

Chunks never split a sentence: sentences are packed greedily until the token budget would
be exceeded (a single sentence longer than the budget becomes a chunk of its own; the
encoder truncates it). Tokens are counted as words and punctuation marks, which tracks
word-piece counts closely enough for budgeting without loading a tokenizer. Every segment
keeps its document, char offsets into the document text, speaker, session and the time it
was observed (the document's date, or the turn's timestamp).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from transforms.ids import content_id
from transforms.quarantine import QuarantineRecord
from transforms.temporal_mentions import mentioned_span
from transforms.timeparse import parse_time

DEFAULT_CHUNK_TOKENS = 200
"""A chunk fills the default encoder's window: MiniLM reads 256 word pieces, and English
prose runs about 1.12 word pieces per word-or-punctuation token (MuSiQue passages), so 200
tokens plus a title line fit, and no chunk's tail goes unread by the encoder. On MuSiQue
dev (best chunk per passage, title on each chunk, `python -m benchmarks.flat_gap`),
MiniLM passage recall@5 is 60.8 at 128 tokens and 61.5 at 200 packed greedily, 62.5 at
200 balanced, against 62.2 for whole passages."""

_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*\n")


def count_tokens(text: str) -> int:
    """Number of word and punctuation tokens in `text`."""
    return len(_TOKEN.findall(text))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Char spans of the sentences of `text`, stripped of surrounding whitespace."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.start() + len(match.group().rstrip())))
        start = match.end()
    spans.append((start, len(text)))
    return [_strip(text, s, e) for s, e in spans if text[s:e].strip()]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def chunk_spans(text: str, max_tokens: int = DEFAULT_CHUNK_TOKENS) -> list[tuple[int, int]]:
    """Whole sentences packed into as few spans of at most `max_tokens` tokens as greedy
    packing needs, balanced: among packings with that many spans, the one whose largest
    span is smallest (a 210-token passage becomes two of about 105, not 200 and 10).

    A short tail chunk carries little context and is one more chance for an unrelated
    passage to match by a fragment; on MuSiQue dev (200 tokens, best chunk per passage)
    balancing raised MiniLM passage recall@5 from 61.5 to 62.0."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}")
    sentences = sentence_spans(text)
    sizes = [count_tokens(text[start:end]) for start, end in sentences]
    fewest = len(_pack(sizes, max_tokens))
    low, high = max(1, -(-sum(sizes) // max(fewest, 1))), max_tokens
    while low < high:  # the smallest cap that still needs no more spans than `fewest`
        middle = (low + high) // 2
        if len(_pack(sizes, middle)) <= fewest:
            high = middle
        else:
            low = middle + 1
    return [(sentences[group[0]][0], sentences[group[-1]][1]) for group in _pack(sizes, high)]


def greedy_chunk_spans(text: str, max_tokens: int) -> list[tuple[int, int]]:
    """Sentences packed greedily, each span filled up to `max_tokens` before the next
    starts: the packing before balancing (kept for `benchmarks.flat_gap`)."""
    sentences = sentence_spans(text)
    sizes = [count_tokens(text[start:end]) for start, end in sentences]
    return [(sentences[g[0]][0], sentences[g[-1]][1]) for g in _pack(sizes, max_tokens)]


def _pack(sizes: list[int], cap: int) -> list[list[int]]:
    """Greedy packing of consecutive sentence indices into groups of at most `cap`
    tokens (a sentence longer than `cap` is a group of its own)."""
    groups: list[list[int]] = []
    used = 0
    for index, size in enumerate(sizes):
        if groups and used + size <= cap:
            groups[-1].append(index)
            used += size
        else:
            groups.append([index])
            used = size
    return groups


def segment_document(
    document: dict[str, Any], max_tokens: int = DEFAULT_CHUNK_TOKENS
) -> Iterator[dict[str, Any]]:
    """Segments of one document record (see `transforms.loaders`)."""
    if document["kind"] == "conversation":
        yield from _conversation_segments(document)
        return
    text = document["text"]
    for seq, (start, end) in enumerate(chunk_spans(text, max_tokens)):
        yield _segment(document, "chunk", seq, start, end, observed_at=document["doc_time"])


def _conversation_segments(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    turns = json.loads(document["turns_json"])
    sessions: dict[str, list[dict[str, Any]]] = {}
    for seq, turn in enumerate(turns):
        sessions.setdefault(turn["session_id"], []).append(turn)
        yield _segment(
            document,
            "turn",
            seq,
            turn["char_start"],
            turn["char_end"],
            observed_at=_turn_time(turn),
            speaker=turn["speaker"],
            session_id=turn["session_id"],
            turn_id=turn["turn_id"],
        )
    for seq, (session_id, members) in enumerate(sessions.items()):
        # A session spans its turns' lines, speaker prefixes included.
        first = members[0]
        start = first["char_start"] - len(first["speaker"]) - 2
        yield _segment(
            document,
            "session",
            seq,
            start,
            members[-1]["char_end"],
            observed_at=next(filter(None, map(_turn_time, members)), None),
            session_id=session_id,
        )


def _turn_time(turn: dict[str, Any]) -> datetime | None:
    """When a turn was said; None for a turn the loader kept without a time."""
    return parse_time(turn["timestamp"]) if turn["timestamp"] else None


def _segment(
    document: dict[str, Any],
    kind: str,
    seq: int,
    start: int,
    end: int,
    *,
    observed_at: datetime | None,
    speaker: str | None = None,
    session_id: str | None = None,
    turn_id: str | None = None,
) -> dict[str, Any]:
    mentioned = mentioned_span(document["text"][start:end])
    return {
        "segment_id": content_id(document["doc_id"], kind, start, end),
        "collection": document["collection"],
        "doc_id": document["doc_id"],
        "kind": kind,
        "seq": seq,
        "text": document["text"][start:end],
        "char_start": start,
        "char_end": end,
        "speaker": speaker,
        "session_id": session_id,
        "turn_id": turn_id,
        "observed_at": observed_at,
        "mentioned_from": mentioned[0],
        "mentioned_to": mentioned[1],
    }


@dataclass
class SegmentationResult:
    """Segments of a batch of documents and the records that could not be segmented."""

    segments: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[QuarantineRecord] = field(default_factory=list)


def segment_documents(
    documents: Iterable[dict[str, Any]], max_tokens: int = DEFAULT_CHUNK_TOKENS
) -> SegmentationResult:
    """Segment every document; a document that fails is quarantined with the reason."""
    result = SegmentationResult()
    for document in documents:
        try:
            produced = list(segment_document(document, max_tokens))
            bad = [s for s in produced if not _valid(s)]
            if bad:
                raise ValueError(
                    f"segment {bad[0]['seq']} ({bad[0]['kind']}) has empty text or bad offsets"
                )
        except (ValueError, KeyError, json.JSONDecodeError) as exc:
            result.quarantined.append(
                QuarantineRecord(
                    "segments", document["source_path"], document["record_ref"], str(exc)
                )
            )
            continue
        result.segments.extend(produced)
    return result


def _valid(segment: dict[str, Any]) -> bool:
    return bool(segment["text"].strip()) and 0 <= segment["char_start"] < segment["char_end"]
