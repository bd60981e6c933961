"""LLM settings from the environment; a service's Settings class extends ``LLMSettings``."""

from __future__ import annotations

from typing import Literal

import pydantic
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from npcworld.errors import ConfigError

__all__ = ["LLMSettings", "load_llm_settings"]


class LLMSettings(BaseSettings):
    """Which provider answers prompts, and how hard to try. Unset OpenAI variables = offline provider."""

    # Empty variables (docker-compose passes `${OPENAI_BASE_URL:-}`) count as unset.
    model_config = SettingsConfigDict(
        env_prefix="", extra="ignore", case_sensitive=False, env_ignore_empty=True
    )

    openai_base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint (vLLM, Ollama...)"
    )
    openai_api_key: str | None = Field(default=None, description="API key; local servers accept any value")
    llm_provider: Literal["auto", "openai", "offline"] = Field(
        default="auto",
        description="auto = openai when OPENAI_BASE_URL or OPENAI_API_KEY is set, else offline",
    )
    llm_model: str = Field(default="gpt-4o-mini", min_length=1, description="model name sent to the provider")
    llm_mode: Literal["live", "replay"] = Field(default="live", description="replay answers from recordings")
    llm_response_format: Literal["json_object", "json_schema", "none"] = Field(
        default="json_object", description="how structured output is requested"
    )
    llm_temperature: float | None = Field(default=None, ge=0, le=2, description="overrides template defaults")
    llm_max_retries: int = Field(default=3, ge=0, le=10, description="retries after the first attempt")
    llm_timeout_s: float = Field(default=60.0, gt=0, description="per-request timeout")
    llm_backoff_base_s: float = Field(default=0.5, ge=0, description="first retry delay, doubled each retry")
    llm_backoff_max_s: float = Field(default=30.0, ge=0, description="longest delay, Retry-After included")
    llm_breaker_failures: int = Field(
        default=5, ge=1, description="consecutive failures that open the breaker"
    )
    llm_breaker_reset_s: float = Field(default=30.0, gt=0, description="how long the breaker stays open")
    llm_outage_policy: Literal["fallback", "fail"] = Field(
        default="fallback", description="provider down: answer offline (fallback) or raise a transient error"
    )
    llm_max_concurrency: int = Field(default=16, ge=1, description="provider calls in flight per process")
    llm_tenant_token_budget: int | None = Field(
        default=None, ge=1, description="tokens per tenant; unset = none"
    )
    llm_world_token_budget: int | None = Field(
        default=None, ge=1, description="tokens per world; unset = none"
    )

    @property
    def provider(self) -> Literal["openai", "offline"]:
        """The provider that answers live calls."""
        if self.llm_provider != "auto":
            return self.llm_provider
        return "openai" if (self.openai_base_url or self.openai_api_key) else "offline"


def load_llm_settings() -> LLMSettings:
    """Read ``LLMSettings`` from the environment.

    Raises:
        ConfigError: a variable has a bad value; the message names it.
    """
    try:
        return LLMSettings()
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{str(err['loc'][0]).upper() if err['loc'] else '?'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid LLM settings: {problems}") from exc
