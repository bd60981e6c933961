"""Dialogue service settings from the environment; embedded-mode defaults; bad values fail at start."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from npcworld.llm.settings import LLMSettings
from npcworld.memory_client.settings import MemoryClientSettings
from npcworld.settings import CommonSettings
from services.dialogue.domain import DEFAULT_COOLDOWN, DEFAULT_MAX_UTTERANCES, TurnRules

__all__ = ["DialogueSettings", "Settings"]


class DialogueSettings(BaseSettings):
    """Conversation rules (DESIGN.md: 16 utterances, 800 steps of 10 s cooldown) and retrieval size."""

    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False, populate_by_name=True)

    max_utterances: int = Field(
        default=DEFAULT_MAX_UTTERANCES, ge=2, le=64, validation_alias="DIALOGUE_MAX_UTTERANCES"
    )
    cooldown_minutes: float = Field(
        default=DEFAULT_COOLDOWN.total_seconds() / 60, ge=0, validation_alias="DIALOGUE_COOLDOWN_MINUTES"
    )
    retrieve_k: int = Field(default=8, ge=1, le=50, validation_alias="DIALOGUE_RETRIEVE_K")

    def rules(self) -> TurnRules:
        return TurnRules(self.max_utterances, timedelta(minutes=self.cooldown_minutes))


class Settings(CommonSettings, LLMSettings, MemoryClientSettings, DialogueSettings):
    """Everything the dialogue process reads: connections, the LLM provider, the memory API and rules."""
