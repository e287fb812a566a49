"""Versioned prompts: examples obey their own schema, rendering, request hashing."""

import dataclasses
import json

import pytest

from schemas.llm_outputs import OUTPUT_KINDS
from tests.transforms.llm.factories import make_segment
from transforms.llm.extract import parse_answer
from transforms.llm.prompts import PROMPTS, REAL_ATOMIC_FACTS_V1, get_prompt, render_input


@pytest.mark.parametrize("version_id", sorted(PROMPTS))
def test_examples_are_valid_answers(version_id):
    prompt = get_prompt(version_id)
    assert version_id == f"{prompt.name}/{prompt.version}"
    assert prompt.output_kind in OUTPUT_KINDS
    for _, output in prompt.examples:
        parse_answer(prompt, output)


def test_schema_has_no_titles_and_keeps_field_order():
    schema = REAL_ATOMIC_FACTS_V1.request(make_segment("x")).json_schema
    fact = schema["$defs"]["AtomicFact"]
    assert "title" not in fact and "description" not in fact
    assert list(fact["properties"])[:3] == ["head", "relation", "tail"]


def test_render_chunk_lists_date_entities_and_text():
    segment = make_segment(
        "Acme hired Priya Natarajan.", [("Acme", "ORG"), ("Priya Natarajan", "PERSON")]
    )
    assert render_input(segment) == (
        "Date: 2023-01-09\nEntities: Acme; Priya Natarajan\nText: Acme hired Priya Natarajan."
    )


def test_render_turns_puts_speakers_first_and_numbers_turns():
    turns = [
        {"turn_id": "S1:1", "speaker": "Assistant", "text": "Where do you live?"},
        {"turn_id": "S1:2", "speaker": "Sam Okafor", "text": "I live in Leeds."},
    ]
    segment = make_segment(
        "I live in Leeds.", [("Leeds", "GPE")], kind="turn", turn_id="S1:2",
        speaker="Sam Okafor", turns=turns,
    )  # fmt: skip
    assert render_input(segment).splitlines()[1:] == [
        "Entities: Assistant; Sam Okafor; Leeds",
        "Turns:",
        "[S1:1] Assistant: Where do you live?",
        "[S1:2] Sam Okafor: I live in Leeds.",
    ]


def test_turn_without_context_shows_its_own_turn():
    segment = make_segment(
        "I live in Leeds.", [("Leeds", "GPE")], kind="turn", turn_id="S1:2", speaker="Sam"
    )
    assert render_input(segment).endswith("Turns:\n[S1:2] Sam: I live in Leeds.")


def test_request_forms_and_hash():
    segment = make_segment("Acme hired Priya.", [("Acme", "ORG"), ("Priya", "PERSON")])
    request = REAL_ATOMIC_FACTS_V1.request(segment)
    messages = request.chat_messages()
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[-1]["content"] == request.input
    assert request.completion_prompt().endswith(request.input + "\nOutput:")
    assert request.input_hash == REAL_ATOMIC_FACTS_V1.request(dict(segment)).input_hash
    other = REAL_ATOMIC_FACTS_V1.request({**segment, "text": "Acme fired Priya."})
    assert other.input_hash != request.input_hash
    assert dataclasses.replace(request, max_tokens=1).input_hash != request.input_hash
    json.loads(request.schema_json)


def test_unknown_prompt_names_the_known_ones():
    with pytest.raises(KeyError, match="real_atomic_facts/v1"):
        get_prompt("real_atomic_facts/v0")
