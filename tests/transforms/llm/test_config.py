"""LLM configuration: environment fallbacks, and which backend the factory creates."""

import pytest

from tests.transforms.llm.factories import make_segment
from tests.transforms.llm.fake_openai_server import chat_response
from transforms.llm.backends import create_backend
from transforms.llm.config import OPENAI_BASE_URL, LLMConfig
from transforms.llm.http_backend import OpenAICompatibleBackend
from transforms.llm.prompts import REAL_ATOMIC_FACTS_V1


def test_defaults_to_the_embedded_model():
    cfg = LLMConfig().resolve_from_env({})
    assert (cfg.backend, cfg.model, cfg.base_url) == ("llama_cpp", None, None)


def test_environment_fills_empty_fields_only():
    env = {
        "KGMEM_LLM_BACKEND": "openai",
        "KGMEM_LLM_MODEL": "qwen",
        "KGMEM_LLM_BASE_URL": "http://127.0.0.1:8000/v1",
    }
    assert LLMConfig().resolve_from_env(env) == LLMConfig(
        backend="openai", model="qwen", base_url="http://127.0.0.1:8000/v1"
    )
    cfg = LLMConfig(model="llama3", base_url="http://10.0.0.1/v1").resolve_from_env(env)
    assert (cfg.model, cfg.base_url) == ("llama3", "http://10.0.0.1/v1")


def test_openai_defaults_and_requirements():
    cfg = LLMConfig(backend="openai", model="gpt-4o-mini").resolve_from_env({})
    assert cfg.base_url == OPENAI_BASE_URL
    with pytest.raises(ValueError, match="needs a model"):
        LLMConfig(backend="openai").resolve_from_env({})
    with pytest.raises(ValueError, match="unknown LLM backend"):
        LLMConfig(backend="gpt").resolve_from_env({})


def test_api_key_precedence_and_not_in_repr():
    cfg = LLMConfig(api_key="sk-config")
    assert cfg.api_key_from({"OPENAI_API_KEY": "sk-env"}) == "sk-config"
    assert "sk-config" not in repr(cfg)
    env = {"KGMEM_LLM_API_KEY": "sk-kgmem", "OPENAI_API_KEY": "sk-openai"}
    assert LLMConfig().api_key_from(env) == "sk-kgmem"
    assert LLMConfig().api_key_from({"OPENAI_API_KEY": "sk-openai"}) == "sk-openai"


def test_factory_builds_the_http_backend_from_env(fake_server, monkeypatch):
    server = fake_server(lambda body: (200, chat_response('{"facts": []}')))
    monkeypatch.setenv("KGMEM_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    backend = create_backend(LLMConfig(backend="openai", model="m"))
    assert isinstance(backend, OpenAICompatibleBackend)
    assert (backend.name, backend.model) == ("openai", "m")
    backend.complete(REAL_ATOMIC_FACTS_V1.request(make_segment("Acme.", [("Acme", "ORG")])), 5)
    assert server.headers[0]["Authorization"] == "Bearer sk-env"
