"""Re-DocRED loader: rebuilt text, exact mention offsets, clusters, labels, chunks."""

import json
from pathlib import Path

import pytest

from tests.transforms.redocred_samples import TINY, TINY_TEXT, write_records
from transforms.redocred import gold_segments, join_tokens, load_redocred, parse_document

ROOT = Path(__file__).resolve().parents[2]
REDOCRED = ROOT.parent / "shared" / "data" / "redocred" / "dev_revised.json"


def test_join_tokens_detokenises_deterministically():
    text, spans = join_tokens(TINY["sents"])
    assert text == TINY_TEXT
    tokens = [t for sentence in TINY["sents"] for t in sentence]
    assert [text[s:e] for s, e in spans] == tokens
    assert join_tokens(TINY["sents"]) == (text, spans)


def test_mentions_have_exact_char_spans_and_clusters():
    document = parse_document(TINY)
    assert document.text == TINY_TEXT
    by_text = {m.text: m for m in document.mentions}
    assert set(by_text) == {"Acme Corp", "1999", "Rotterdam", "Maria Lopez"}
    for mention in document.mentions:
        assert document.text[mention.char_start : mention.char_end] == mention.text
    lopez = by_text["Maria Lopez"]
    assert (lopez.entity, lopez.label, lopez.sent_id) == (3, "PER", 1)
    assert (lopez.token_start, lopez.token_end) == (14, 16)  # 11 tokens in sentence 0
    assert document.sentence_tokens == ((0, 11), (11, 22))
    assert [e.label for e in document.entities] == ["ORG", "TIME", "LOC", "PER"]
    assert (document.relations[0].head, document.relations[0].relation) == (0, "P159")


def test_load_file_and_ids_are_stable(tmp_path: Path):
    path = write_records([TINY, {**TINY, "title": "Other"}], tmp_path / "d.json")
    first, second = load_redocred(path)
    assert first.doc_id == parse_document(TINY).doc_id != second.doc_id
    assert parse_document({k: v for k, v in TINY.items() if k != "labels"}).relations == ()


def test_gold_segments_hold_their_mentions_with_relative_offsets():
    document = parse_document(TINY)
    segments = gold_segments(document, chunk_tokens=12)
    assert len(segments) == 2
    for segment in segments:
        assert document.text[segment["char_start"] :].startswith(segment["text"])
        for m in segment["mentions"]:
            assert segment["text"][m["char_start"] : m["char_end"]] == m["text"]
    assert [m["entity_type"] for m in segments[0]["mentions"]] == [
        "Organization",
        "Value",
        "Location",
    ]
    assert segments[1]["mentions"][0]["entity"] == 3


@pytest.mark.skipif(not REDOCRED.exists(), reason=f"Re-DocRED not found at {REDOCRED}")
def test_every_redocred_mention_spans_its_tokens():
    records = json.loads(REDOCRED.read_text())
    documents = load_redocred(REDOCRED)
    assert len(documents) == 500
    assert sum(len(d.mentions) for d in documents) == 13189
    for record, document in zip(records, documents, strict=True):
        tokens = [t for sentence in record["sents"] for t in sentence]
        for m in document.mentions:
            assert document.text[m.char_start : m.char_end] == m.text
            squashed = "".join("".join(tokens[m.token_start : m.token_end]).split())
            assert "".join(m.text.split()) == squashed
