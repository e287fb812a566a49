"""The gate: one call per segment by default, none without graph entities."""

import pytest

from tests.transforms.llm.factories import make_segment
from transforms.llm.gate import GateConfig, plan_calls


def _segments():
    return [
        make_segment("Acme hired Priya.", [("Acme", "ORG"), ("Priya", "PERSON")], segment_id="a"),
        make_segment("It rained in 2020.", [("2020", "DATE")], segment_id="b"),
        make_segment("Nothing here.", segment_id="c"),
        make_segment(
            "I live in Leeds.", [("Leeds", "GPE")], segment_id="d", kind="turn", turn_id="S1:1"
        ),
        make_segment("   ", [], segment_id="e"),
    ]


def test_default_one_call_per_segment_with_entities():
    plan = plan_calls(_segments(), GateConfig())
    assert [(c.segment["segment_id"], c.prompt.version_id) for c in plan.calls] == [
        ("a", "real_atomic_facts/v1"),
        ("d", "real_atomic_facts/v1"),
    ]
    assert plan.gated_out == {"too few graph entities": 2, "empty text": 1}


def test_prompts_per_kind_and_budget():
    cfg = GateConfig(
        prompts={
            "chunk": ("real_atomic_facts/v1", "personalai_theses/v1"),
            "turn": ("memorai_triplets/v1",),
        },
        max_calls_per_segment=2,
        min_entities=2,
    )
    plan = plan_calls(_segments(), cfg)
    assert [(c.segment["segment_id"], c.prompt.name) for c in plan.calls] == [
        ("a", "real_atomic_facts"),
        ("a", "personalai_theses"),
    ]


def test_kind_without_prompts_is_gated_out():
    plan = plan_calls(_segments()[:1], GateConfig(prompts={"turn": ("real_atomic_facts/v1",)}))
    assert not plan.calls and plan.gated_out == {"no prompt for chunk segments": 1}


def test_config_errors_are_raised_early():
    with pytest.raises(ValueError, match="budget"):
        GateConfig(prompts={"chunk": ("real_atomic_facts/v1", "personalai_theses/v1")})
    with pytest.raises(ValueError, match="does not apply"):
        GateConfig(prompts={"chunk": ("memorai_triplets/v1",)})
    with pytest.raises(KeyError):
        GateConfig(prompts={"chunk": ("nope/v1",)})


def test_prompt_that_cites_turns_needs_turns():
    session = make_segment("Hi. I live in Leeds.", [("Leeds", "GPE")], kind="session")
    plan = plan_calls([session], GateConfig())
    assert not plan.calls and plan.gated_out == {"no turns to cite": 1}
    turns = [{"turn_id": "S1:1", "speaker": "Sam", "text": "I live in Leeds."}]
    assert len(plan_calls([{**session, "turns": turns}], GateConfig()).calls) == 1
