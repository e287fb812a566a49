"""The OpenAI-compatible backend against a local fake server (127.0.0.1, bounded)."""

import json
import time

import pytest

from tests.transforms.llm.factories import first_pair_fact, make_segment
from tests.transforms.llm.fake_openai_server import chat_response
from transforms.llm.base import LLMError
from transforms.llm.http_backend import OpenAICompatibleBackend
from transforms.llm.prompts import REAL_ATOMIC_FACTS_V1
from transforms.llm.runner import LLMRunner, RetryPolicy
from transforms.llm.stats import LLMStats

SEGMENT = make_segment("Acme hired Priya.", [("Acme", "ORG"), ("Priya", "PERSON")])
REQUEST = REAL_ATOMIC_FACTS_V1.request(SEGMENT)


def _answer(body):
    return 200, chat_response(first_pair_fact(body["messages"][-1]["content"]), 42, 17)


def test_chat_request_with_json_schema_and_usage(fake_server):
    server = fake_server(_answer)
    backend = OpenAICompatibleBackend(server.base_url, "served-model", api_key="sk-test")
    completion = backend.complete(REQUEST, timeout_s=5)
    assert json.loads(completion.text)["facts"][0]["head"] == "Acme"
    assert (completion.prompt_tokens, completion.completion_tokens) == (42, 17)
    assert (completion.model, completion.backend) == ("fake-model", "openai")
    (body,) = server.requests
    assert body["model"] == "served-model" and body["temperature"] == 0.0
    assert body["messages"] == REQUEST.chat_messages()
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == REQUEST.json_schema
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_json_object_mode_and_no_key(fake_server):
    server = fake_server(_answer)
    OpenAICompatibleBackend(server.base_url, "m", response_format="json_object").complete(
        REQUEST, timeout_s=5
    )
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert "Authorization" not in server.headers[0]


def test_rejected_response_format_is_dropped(fake_server):
    def responder(body):
        if "response_format" in body:
            return 400, {"error": {"message": "response_format is not supported"}}
        return _answer(body)

    server = fake_server(responder)
    backend = OpenAICompatibleBackend(server.base_url, "m")
    backend.complete(REQUEST, timeout_s=5)
    backend.complete(REQUEST, timeout_s=5)
    assert ["response_format" in b for b in server.requests] == [True, False, False]


def test_http_500_is_retried_then_succeeds(fake_server, cache):
    statuses = iter([500, 503])

    def responder(body):
        status = next(statuses, 200)
        return (status, {"error": "overloaded"}) if status != 200 else _answer(body)

    server = fake_server(responder)
    runner = LLMRunner(
        OpenAICompatibleBackend(server.base_url, "m"),
        cache,
        retry=RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05),
    )
    stats = LLMStats()
    (outcome,) = runner.run([REQUEST], stats)
    assert outcome.completion is not None and outcome.attempts == 3
    assert (stats.llm_calls, stats.retries, stats.prompt_tokens) == (3, 2, 42)
    assert len(server.requests) == 3


def test_client_errors_are_permanent(fake_server):
    server = fake_server(lambda body: (401, {"error": "bad key"}))
    with pytest.raises(LLMError, match="HTTP 401") as caught:
        OpenAICompatibleBackend(server.base_url, "m").complete(REQUEST, timeout_s=5)
    assert not caught.value.transient


def test_malformed_completion_is_permanent(fake_server):
    server = fake_server(lambda body: (200, {"choices": []}))
    with pytest.raises(LLMError, match="malformed") as caught:
        OpenAICompatibleBackend(server.base_url, "m").complete(REQUEST, timeout_s=5)
    assert not caught.value.transient


def test_timeout_is_transient_and_bounded(fake_server, cache):
    server = fake_server(_answer)
    server.delay_s = 2.0
    backend = OpenAICompatibleBackend(server.base_url, "m")
    started = time.monotonic()
    with pytest.raises(LLMError, match="timed out") as caught:
        backend.complete(REQUEST, timeout_s=0.2)
    assert caught.value.transient and time.monotonic() - started < 1.5
    runner = LLMRunner(
        backend, cache, timeout_s=0.2, retry=RetryPolicy(2, 0.01, 0.01), sleep=lambda s: None
    )
    (outcome,) = runner.run([REQUEST], LLMStats())
    assert outcome.completion is None and outcome.attempts == 2 and "timed out" in outcome.error


def test_unreachable_server_is_transient():
    backend = OpenAICompatibleBackend("http://127.0.0.1:9/v1", "m")
    with pytest.raises(LLMError, match="transport error") as caught:
        backend.complete(REQUEST, timeout_s=2)
    assert caught.value.transient
