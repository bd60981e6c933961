"""Planning service settings from the environment; defaults are the embedded mode, bad values fail early."""

from __future__ import annotations

from pydantic import Field

from npcworld.llm.settings import LLMSettings
from npcworld.memory_client.settings import MemoryClientSettings
from npcworld.settings import CommonSettings

__all__ = ["PlanningSettings", "Settings"]


class PlanningSettings(CommonSettings):
    """Tuning of the planning service."""

    max_npcs_per_tick: int = Field(
        default=50, ge=1, le=10000, validation_alias="PLANNING_MAX_NPCS_PER_TICK",
        description="NPCs whose action ended that one world tick starts; the rest wait for the next tick",
    )


class Settings(PlanningSettings, LLMSettings, MemoryClientSettings):
    """Everything the planning process reads: connections, the LLM provider, the memory API, tuning."""
