"""LLM budget events (topic npcworld.world.v1, keyed by world): a world now answered offline."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import WORLD, Topic

__all__ = ["LLMBudgetExhausted"]


class LLMBudgetExhausted(EventPayload):
    """The world's or its tenant's token budget ran out; the world's prompts are now answered by the
    offline provider until the budget is raised or reset."""

    event_type: ClassVar[str] = "LLMBudgetExhausted"
    topic: ClassVar[Topic] = WORLD

    scope: Literal["tenant", "world"]
    limit_tokens: int = Field(ge=0)
    used_tokens: int = Field(ge=0)
    fallback_provider: Literal["offline"] = "offline"
    prompt_kind: str = Field(description="the prompt that found the budget exhausted")
