"""Reflection events (topic npcworld.reflection.v1, keyed by NPC): a run triggered, completed or failed."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import REFLECTION, Topic

__all__ = ["ReflectionCompleted", "ReflectionFailed", "ReflectionInsight", "ReflectionTriggered"]


class ReflectionTriggered(EventPayload):
    """The importance of the NPC's memories since its last reflection exceeded the threshold; run number
    ``run`` (1, 2, ...) of this NPC is due. ``run_key`` names the job: one run key, at most one result."""

    event_type: ClassVar[str] = "ReflectionTriggered"
    topic: ClassVar[Topic] = REFLECTION

    run: int = Field(ge=1)
    run_key: str = Field(min_length=1, max_length=400)
    importance_sum: int = Field(ge=0)
    threshold: int = Field(ge=1)


class ReflectionInsight(BaseModel):
    """One insight: its text, the question it answers, the memory ids citing it, its reflection-tree depth."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1, max_length=4000)
    question: int = Field(ge=0, description="index into the run's questions")
    evidence: tuple[str, ...] = Field(min_length=1)
    depth: int = Field(ge=1, description="1 + the largest depth among the cited memories")


class ReflectionCompleted(EventPayload):
    """A reflection run finished: its questions and the insights (with evidence) that become the NPC's
    reflection memories. ``provider`` says who answered (``offline`` for the offline provider)."""

    event_type: ClassVar[str] = "ReflectionCompleted"
    topic: ClassVar[Topic] = REFLECTION

    run: int = Field(ge=1)
    run_key: str = Field(min_length=1, max_length=400)
    questions: tuple[str, ...] = Field(min_length=1)
    insights: tuple[ReflectionInsight, ...] = Field(min_length=1)
    memories_considered: int = Field(ge=0, description="recent memories the questions were asked about")
    provider: Literal["openai", "offline", "replay", "mixed"]


class ReflectionFailed(EventPayload):
    """A reflection run gave up (malformed model output after retries, or retries exhausted); nothing of
    it was stored, and the NPC's next counted memory triggers a new run."""

    event_type: ClassVar[str] = "ReflectionFailed"
    topic: ClassVar[Topic] = REFLECTION

    run: int = Field(ge=1)
    run_key: str = Field(min_length=1, max_length=400)
    reason: str = Field(min_length=1, max_length=2000)
