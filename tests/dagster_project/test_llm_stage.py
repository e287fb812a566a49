"""The LLM triplet stage in a build: opt-in, and stopped by its blocking quarantine-rate
check when its answers are mostly invalid (an LLM that answers junk, at the HTTP boundary)."""

from __future__ import annotations

import json

import pytest

from dagster_project.build import BuildFailed, build_collection
from dagster_project.definitions import kgmem_definitions
from dagster_project.resources import PipelineSettings
from stores.workspace import Workspace
from tests.transforms.llm.fake_openai_server import FakeChatServer, chat_response

defs = kgmem_definitions()

SESSION = {
    "conversation_id": "c1",
    "sessions": [
        {
            "session_id": "S1",
            "turns": [
                {
                    "speaker": "Sam Okafor",
                    "text": "Priya Natarajan works at the Harborview Office of Acme Corporation.",
                    "timestamp": "2023-01-09T10:00:00Z",
                },
                {
                    "speaker": "Assistant",
                    "text": "Noted: Priya Natarajan is at Acme Corporation in Leeds.",
                    "timestamp": "2023-01-09T10:01:00Z",
                },
            ],
        }
    ],
}


def test_a_stage_whose_answers_are_all_invalid_stops_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv("KGMEM_LLM_CACHE", str(tmp_path / "llm_cache.duckdb"))
    source = tmp_path / "chat"
    source.mkdir()
    (source / "chat.json").write_text(json.dumps(SESSION))
    server = FakeChatServer(lambda body: (200, chat_response("no JSON here"))).start()
    try:
        settings = PipelineSettings(
            llm_backend="openai", llm_model="fake-model", llm_base_url=server.base_url
        )
        with pytest.raises(BuildFailed, match="llm_triplets_quarantine_rate"):
            build_collection("llmrate", [str(source)], Workspace.at(tmp_path / "h"), defs, settings)
    finally:
        server.stop()
    assert server.requests, "the stage never called the LLM"
