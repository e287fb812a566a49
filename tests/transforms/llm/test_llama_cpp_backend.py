"""The embedded backend with the real packaged Gemma-3-270M GGUF (a base model: these tests
check structure and validity handling, not extraction quality)."""

import dataclasses
import json
import os
from pathlib import Path

import pytest

from tests.transforms.llm.factories import make_segment
from transforms.llm.base import CompletionRequest, LLMError
from transforms.llm.extract import extract
from transforms.llm.gate import GateConfig, plan_calls
from transforms.llm.llama_cpp_backend import LlamaCppBackend, packaged_gemma_path
from transforms.llm.runner import LLMRunner
from transforms.llm.stats import LLMStats

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 40}, "country": {"type": "string"}},
    "required": ["city", "country"],
    "additionalProperties": False,
}
SHORT = CompletionRequest(
    prompt_version="test_city/v1",
    instruction="Answer with JSON.",
    examples=(("Where is the Eiffel Tower?", '{"city": "Paris", "country": "France"}'),),
    input="Where is the Colosseum?",
    schema_json=json.dumps(CITY),
    max_tokens=24,
)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def gemma(model_dir) -> LlamaCppBackend:
    return LlamaCppBackend(model_dir=model_dir)


def test_packaged_model_is_assembled_once(gemma, model_dir):
    path = packaged_gemma_path(model_dir)
    assert path == gemma.model_path and path.stat().st_size > 200_000_000
    before = path.stat().st_mtime_ns
    assert packaged_gemma_path(model_dir).stat().st_mtime_ns == before
    assert not [p for p in os.listdir(model_dir) if p.endswith(".partial")]
    assert gemma.model.startswith("gemma-3-270m-q4_k_m.gguf==")


def test_grammar_constrained_answer_is_valid_json(gemma):
    completion = gemma.complete(SHORT, timeout_s=60)
    answer = json.loads(completion.text)
    assert set(answer) == {"city", "country"} and all(isinstance(v, str) for v in answer.values())
    assert completion.prompt_tokens > 10 and 0 < completion.completion_tokens <= 24
    assert (completion.backend, completion.model) == ("llama_cpp", gemma.model)


def test_timeout_is_a_permanent_failure(gemma):
    with pytest.raises(LLMError, match="timeout") as caught:
        gemma.complete(SHORT, timeout_s=0.0)
    assert not caught.value.transient


def test_real_prompt_end_to_end_is_cached_and_never_crashes(gemma, cache):
    segment = make_segment(
        "Marcus Bennett became CEO of Acme Corporation in July 2022.",
        [("Marcus Bennett", "PERSON"), ("Acme Corporation", "ORG"), ("July 2022", "DATE")],
    )
    (call,) = plan_calls([segment], GateConfig()).calls
    # A short budget keeps the test fast; the answer may be cut off, which must quarantine.
    call = dataclasses.replace(call, request=dataclasses.replace(call.request, max_tokens=40))
    first, second = LLMStats(), LLMStats()
    (outcome,) = LLMRunner(gemma, cache, timeout_s=60).run([call.request], first)
    assert outcome.completion.text.startswith('{"facts": [')
    result = extract(call, outcome, gemma.name, gemma.model)
    assert result.rows or result.quarantined
    for record in result.quarantined:
        assert record.reason.startswith(("invalid JSON", "schema violation", "no matching"))
    (again,) = LLMRunner(gemma, cache).run([call.request], second)
    assert (first.llm_calls, second.llm_calls, second.cache_hits) == (1, 0, 1)
    assert again.completion == outcome.completion


def test_any_gguf_path_is_accepted(gemma, tmp_path):
    other = LlamaCppBackend(gemma.model_path, n_threads=1, n_ctx=512, grammar=False)
    assert other.model == f"{gemma.model_path.name}:{gemma.model_path.stat().st_size}+nogrammar"
    with pytest.raises(FileNotFoundError):
        LlamaCppBackend(tmp_path / "missing.gguf")
