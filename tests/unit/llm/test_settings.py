"""LLM settings: offline by default, OpenAI-compatible when configured, bad values named at start."""

from __future__ import annotations

import pytest

from npcworld.errors import ConfigError
from npcworld.llm import load_llm_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "LLM_PROVIDER", "LLM_MODE", "LLM_MAX_RETRIES"):
        monkeypatch.delenv(name, raising=False)


def test_offline_is_the_default() -> None:
    assert load_llm_settings().provider == "offline"


def test_a_base_url_selects_the_openai_compatible_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    assert load_llm_settings().provider == "openai"
    monkeypatch.setenv("LLM_PROVIDER", "offline")
    assert load_llm_settings().provider == "offline"


@pytest.mark.parametrize(("name", "value"), [("LLM_MODE", "sometimes"), ("LLM_MAX_RETRIES", "-1")])
def test_bad_values_fail_naming_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=name):
        load_llm_settings()


def test_empty_variables_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert load_llm_settings().provider == "offline"
