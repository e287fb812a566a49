"""`<home>/kgmem.toml`: every launchpad setting from a file, flags on top, typos refused;
the LLM triplet stage runs only when a backend is chosen."""

from __future__ import annotations

import pytest

from dagster_project.resources.settings import PipelineSettings
from dagster_project.resources.settings_file import SETTINGS_FILE, load_settings


def test_file_values_apply_and_flags_win(tmp_path):
    (tmp_path / SETTINGS_FILE).write_text('chunk_tokens = 123\nllm_backend = "openai"\n')
    settings = load_settings(tmp_path, {"llm_backend": "none"})
    assert settings.chunk_tokens == 123
    assert settings.llm_backend == "none"


def test_no_file_gives_defaults(tmp_path):
    assert load_settings(tmp_path) == PipelineSettings()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("chunk_tokenz = 3\n", "'chunk_tokenz' is not a setting"),
        ('chunk_tokens = "many"\n', "setting 'chunk_tokens'"),
        ("chunk_tokens = \n", "not valid TOML"),
    ],
)
def test_bad_file_is_an_error_naming_file_and_key(tmp_path, text, reason):
    (tmp_path / SETTINGS_FILE).write_text(text)
    with pytest.raises(ValueError, match=reason) as caught:
        load_settings(tmp_path)
    assert str(tmp_path / SETTINGS_FILE) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_llm_stage_is_opt_in(tmp_path, monkeypatch):
    monkeypatch.delenv("KGMEM_LLM_BACKEND", raising=False)
    assert PipelineSettings().llm_stage(str(tmp_path / "c.duckdb")) is None
    chosen = PipelineSettings(llm_backend="llama_cpp").llm_stage(str(tmp_path / "c.duckdb"))
    assert chosen is not None and chosen.llm.backend == "llama_cpp"
    monkeypatch.setenv("KGMEM_LLM_BACKEND", "llama_cpp")
    assert PipelineSettings().llm_stage(str(tmp_path / "c.duckdb")) is not None
