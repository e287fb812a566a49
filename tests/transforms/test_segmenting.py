"""Segmenting: sentence-aware chunks within the budget, turns and sessions with offsets."""

import json
from datetime import UTC, datetime

import pytest

from transforms.segmenting import chunk_spans, count_tokens, segment_document, sentence_spans

TEXT = "Acme opened an office. It is in Rotterdam! Is it big? Yes.\n\nA new paragraph starts here."


def test_sentences_keep_offsets():
    spans = sentence_spans(TEXT)
    assert [TEXT[s:e] for s, e in spans] == [
        "Acme opened an office.",
        "It is in Rotterdam!",
        "Is it big?",
        "Yes.",
        "A new paragraph starts here.",
    ]


@pytest.mark.parametrize("budget", [1, 6, 12, 100])
def test_chunks_pack_whole_sentences_within_budget(budget: int):
    spans = sentence_spans(TEXT)
    starts, ends = {s for s, _ in spans}, {e for _, e in spans}
    chunks = chunk_spans(TEXT, budget)
    for start, end in chunks:
        assert start in starts and end in ends
        assert count_tokens(TEXT[start:end]) <= budget or (start, end) in spans
    assert chunks[0][0] == spans[0][0] and chunks[-1][1] == spans[-1][1]


def test_chunk_budget_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        chunk_spans(TEXT, 0)


def _conversation() -> dict:
    turns = []
    text = ""
    for i, (session, speaker, words) in enumerate(
        [("S1", "Sam", "I live in Leeds."), ("S1", "Bot", "Noted."), ("S2", "Sam", "I moved.")]
    ):
        prefix = f"{speaker}: "
        start = len(text) + len(prefix)
        text += f"{prefix}{words}\n"
        stamp = datetime(2023, 1, 9 + i, tzinfo=UTC).isoformat()
        turns.append(
            {
                "turn_id": f"{session}:{i}",
                "session_id": session,
                "speaker": speaker,
                "timestamp": stamp,
                "char_start": start,
                "char_end": start + len(words),
            }
        )
    return {
        "doc_id": "d",
        "collection": "c",
        "kind": "conversation",
        "text": text,
        "doc_time": None,
        "turns_json": json.dumps(turns),
    }


def test_conversation_turns_and_sessions():
    document = _conversation()
    segments = list(segment_document(document))
    turns = [s for s in segments if s["kind"] == "turn"]
    sessions = [s for s in segments if s["kind"] == "session"]
    assert [t["text"] for t in turns] == ["I live in Leeds.", "Noted.", "I moved."]
    assert turns[0]["speaker"] == "Sam" and turns[0]["session_id"] == "S1"
    assert turns[2]["observed_at"] == datetime(2023, 1, 11, tzinfo=UTC)
    assert [s["text"] for s in sessions] == ["Sam: I live in Leeds.\nBot: Noted.", "Sam: I moved."]
    for segment in segments:
        assert document["text"][segment["char_start"] : segment["char_end"]] == segment["text"]


def test_chunks_are_balanced_without_adding_chunks():
    sentence = "Acme builds printers in a large factory near the river Tyne. "
    text = sentence * 9  # 12 tokens each, 108 in all
    spans = chunk_spans(text, max_tokens=100)
    sizes = [count_tokens(text[s:e]) for s, e in spans]
    assert len(spans) == 2 and sizes == [60, 48], "two chunks of 5 and 4 sentences, not 8 + 1"
    assert chunk_spans("One sentence only.", max_tokens=100) == [(0, 18)]
    assert chunk_spans("", max_tokens=100) == []


def test_a_turn_without_a_time_is_segmented_unobserved():
    document = _conversation()
    turns = json.loads(document["turns_json"])
    turns[0]["timestamp"] = None
    segments = list(segment_document({**document, "turns_json": json.dumps(turns)}))
    observed = {(s["kind"], s["text"].split("\n")[0]): s["observed_at"] for s in segments}
    assert observed[("turn", "I live in Leeds.")] is None
    assert observed[("session", "Sam: I live in Leeds.")] == datetime(2023, 1, 10, tzinfo=UTC)
