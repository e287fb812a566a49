"""A batch through gate, runner and extraction without Beam."""

from tests.transforms.llm.factories import (
    ScriptedBackend,
    first_pair_fact,
    first_pair_responder,
    make_segment,
)
from transforms.llm.batch import LLMExtractor
from transforms.llm.config import LLMConfig, LLMStageConfig
from transforms.llm.gate import GateConfig
from transforms.llm.runner import LLMRunner

SEGMENTS = [
    make_segment("Acme hired Priya.", [("Acme", "ORG"), ("Priya", "PERSON")], segment_id="a"),
    make_segment("Quiet day.", segment_id="b"),
    make_segment("Globex sued Initech.", [("Globex", "ORG")], segment_id="c"),
]


def test_batch_rows_quarantine_and_stats(cache):
    backend = ScriptedBackend(lambda request: first_pair_fact(request.input))
    extractor = LLMExtractor(LLMRunner(backend, cache), GateConfig())
    result = extractor.extract_batch(SEGMENTS)
    assert [(r["segment_id"], r["head_text"], r["tail_text"]) for r in result.rows] == [
        ("a", "Acme", "Priya")
    ]
    assert result.quarantined == []  # c has one entity: the answer is an empty list
    assert result.stats.as_dict() == {
        "segments_in": 3,
        "segments_gated_out": 1,
        "requests": 2,
        "llm_calls": 2,
        "cache_hits": 0,
        "failed_calls": 0,
        "retries": 0,
        "prompt_tokens": 200,
        "completion_tokens": 40,
        "rows_out": 1,
        "quarantined": 0,
    }
    again = extractor.extract_batch(SEGMENTS)
    assert again.rows == result.rows and again.stats.cache_hits == 2 and len(backend.calls) == 2


def test_failed_calls_become_quarantine_rows(cache):
    backend = ScriptedBackend(lambda request: RuntimeError("boom"))
    result = LLMExtractor(LLMRunner(backend, cache), GateConfig()).extract_batch(SEGMENTS[:1])
    (row,) = result.quarantined
    assert row["collection"] == "c" and row["stage"] == "llm_triplets"
    assert row["reason"] == "LLM call failed after 1 attempt(s): RuntimeError: boom"
    assert (result.stats.failed_calls, result.stats.quarantined) == (1, 1)


def test_from_config_uses_the_configured_backend(cache, fake_server):
    server = fake_server(first_pair_responder)
    llm = LLMConfig(backend="openai", model="m", base_url=server.base_url)
    extractor = LLMExtractor.from_config(LLMStageConfig(cache_path=str(cache.path), llm=llm))
    assert len(extractor.extract_batch(SEGMENTS).rows) == 1
    assert len(server.requests) == 2
