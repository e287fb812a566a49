"""Answers to rows: parsing, validation, entity anchoring and quarantine."""

import json
from datetime import UTC, datetime

import pyarrow as pa
import pytest

from schemas.llm_outputs import LLM_QUARANTINE, LLM_TRIPLETS
from tests.transforms.llm.factories import make_segment
from transforms.llm.base import Completion
from transforms.llm.extract import AnswerError, extract, parse_answer, relation_name
from transforms.llm.gate import PlannedCall
from transforms.llm.prompts import (
    MEMORAI_TRIPLETS_V1,
    PERSONALAI_THESES_V1,
    REAL_ATOMIC_FACTS_V1,
    Prompt,
)
from transforms.llm.runner import CallOutcome

DOC = make_segment(
    "Marcus Bennett became CEO of Acme Corporation in July 2022.",
    [("Marcus Bennett", "PERSON"), ("Acme Corporation", "ORG"), ("July 2022", "DATE")],
)
TURNS = [
    {"turn_id": "S1:1", "speaker": "Assistant", "text": "Where do you work?"},
    {"turn_id": "S1:2", "speaker": "Sam Okafor", "text": "I work at Brightwater in Leeds."},
]
TURN = make_segment(
    "I work at Brightwater in Leeds.",
    [("Brightwater", "ORG"), ("Leeds", "GPE")],
    kind="turn",
    turn_id="S1:2",
    speaker="Sam Okafor",
    turns=TURNS,
)


def _fact(head, tail, relation="ceo of", **extra):
    fact = {"head": head, "relation": relation, "tail": tail, "valid_from": None}
    fact |= {"valid_to": None, "confidence": 0.9, "intent": "FACT"}
    return fact | extra


def _run(prompt: Prompt, segment, answer: str | None, error: str | None = None):
    call = PlannedCall(segment, prompt, prompt.request(segment))
    completion = None if answer is None else Completion(answer, 10, 5, "m", "openai")
    outcome = CallOutcome(call.request, "key1", completion, False, 1, error)
    result = extract(call, outcome, "openai", "m")
    pa.Table.from_pylist(result.rows, schema=LLM_TRIPLETS)  # rows fit the schema
    pa.Table.from_pylist([q.as_row("c") for q in result.quarantined], schema=LLM_QUARANTINE)
    return result


def test_real_fact_becomes_a_row():
    answer = {"facts": [_fact("Marcus Bennett", "Acme Corp", valid_from="2022-07-01")]}
    (row,) = _run(REAL_ATOMIC_FACTS_V1, DOC, json.dumps(answer)).rows
    assert (row["head_text"], row["relation"], row["tail_text"]) == (
        "Marcus Bennett",
        "ceo_of",
        "Acme Corporation",
    )
    assert (row["head_match"], row["tail_match"]) == ("exact", "exact")
    assert (row["head_start"], row["head_end"], row["head_type"]) == (0, 14, "Person")
    assert row["valid_from"] == datetime(2022, 7, 1, tzinfo=UTC) and row["valid_to"] is None
    assert (row["confidence"], row["intent"], row["output_kind"]) == (0.9, "FACT", "atomic_fact")
    assert row["extractor"] == "llm:openai:m:real_atomic_facts/v1"
    assert row["cache_key"] == "key1" and row["source_turns"] is None


def test_chat_wrapping_is_tolerated_and_duplicates_collapse():
    fact = _fact("Marcus Bennett", "Acme Corporation")
    text = "Sure! ```json\n" + json.dumps({"facts": [fact, fact]}) + "\n``` Hope it helps."
    assert len(_run(REAL_ATOMIC_FACTS_V1, DOC, text).rows) == 1


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("I cannot help with that.", "invalid JSON: no JSON object"),
        ('{"facts": [{"head": "Marcus', "invalid JSON: Unterminated string"),
        ('{"facts": "none"}', "schema violation (1 errors): facts: Input should be a valid list"),
        (json.dumps({"facts": [_fact("A", "B", confidence=1.5)]}), "facts.0.confidence"),
        (json.dumps({"facts": [_fact("A", "B", intent="GUESS")]}), "facts.0.intent"),
        (json.dumps({"facts": [], "note": "x"}), "note: Extra inputs are not permitted"),
        (
            json.dumps(
                {"facts": [_fact("A", "B", valid_from="2022-01-01", valid_to="2021-01-01")]}
            ),
            "valid_to 2021-01-01 is before valid_from 2022-01-01",
        ),
    ],
)
def test_unreadable_answers_are_quarantined_whole(answer, reason):
    result = _run(REAL_ATOMIC_FACTS_V1, DOC, answer)
    (record,) = result.quarantined
    assert not result.rows
    assert reason in record.reason
    assert (record.stage, record.source_file, record.raw) == ("llm_triplets", "d1", answer)
    assert record.record_ref == "s1/real_atomic_facts/v1"


def test_unmatched_items_are_quarantined_one_by_one():
    answer = {
        "facts": [
            _fact("Marcus Bennett", "Acme Corporation"),
            _fact("Marcus Bennett", "Globex"),
            _fact("Acme", "Acme Corporation"),
            _fact("Marcus Bennett", "Acme Corporation", relation="!!"),
        ]
    }
    result = _run(REAL_ATOMIC_FACTS_V1, DOC, json.dumps(answer))
    assert len(result.rows) == 1
    assert [(q.record_ref, q.reason) for q in result.quarantined] == [
        ("s1/real_atomic_facts/v1#1", "no matching mention for tail 'Globex'"),
        ("s1/real_atomic_facts/v1#2", "head and tail are the same entity 'Acme Corporation'"),
        ("s1/real_atomic_facts/v1#3", "relation '!!' has no word characters"),
    ]
    assert json.loads(result.quarantined[0].raw)["tail"] == "Globex"


def test_failed_call_is_quarantined_with_the_input():
    result = _run(REAL_ATOMIC_FACTS_V1, DOC, None, error="HTTP 500 from server")
    (record,) = result.quarantined
    assert record.reason == "LLM call failed after 1 attempt(s): HTTP 500 from server"
    assert "Marcus Bennett" in record.raw


def test_real_fact_in_a_turn_resolves_i_and_cites_the_turn():
    answer = {"facts": [_fact("I", "Brightwater", relation="works at")]}
    (row,) = _run(REAL_ATOMIC_FACTS_V1, TURN, json.dumps(answer)).rows
    assert (row["head_text"], row["head_match"], row["head_start"]) == (
        "Sam Okafor",
        "speaker",
        None,
    )
    assert row["relation"] == "works_at" and row["source_turns"] == ["S1:2"]


def test_memorai_triplets_cite_known_turns_only():
    good = {"head": "Sam Okafor", "relation": "works_at", "tail": "Brightwater"}
    answer = {
        "triplets": [
            good | {"source_turns": ["S1:2", "S1:2"]},
            good | {"relation": "lives in", "tail": "Leeds", "source_turns": ["S9:9"]},
        ]
    }
    result = _run(MEMORAI_TRIPLETS_V1, TURN, json.dumps(answer))
    (row,) = result.rows
    assert row["source_turns"] == ["S1:2"] and row["output_kind"] == "turn_triplet"
    assert row["confidence"] is None and row["intent"] is None
    assert result.quarantined[0].reason == "cites turns that were not in the input: ['S9:9']"


def test_theses_keep_their_matched_entities():
    answer = {
        "theses": [
            {"text": "Marcus Bennett leads Acme.", "entities": ["Marcus Bennett", "Acme"]},
            {"text": "Acme sells printers.", "entities": ["Acme", "printers"]},
        ]
    }
    result = _run(PERSONALAI_THESES_V1, DOC, json.dumps(answer))
    (row,) = result.rows
    assert row["thesis"] == "Marcus Bennett leads Acme." and row["head_text"] is None
    assert [(e["text"], e["match_kind"]) for e in row["thesis_entities"]] == [
        ("Marcus Bennett", "exact"),
        ("Acme Corporation", "exact"),
    ]
    assert result.quarantined[0].reason == "no matching mention for thesis entities ['printers']"


def test_parse_answer_and_relation_name():
    with pytest.raises(AnswerError):
        parse_answer(REAL_ATOMIC_FACTS_V1, "[]")
    assert relation_name(" Works At ") == "works_at"
    assert relation_name("is-CEO of") == "is_ceo_of"
