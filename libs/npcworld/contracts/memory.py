"""Memory-stream events (topic npcworld.memory.v1, keyed by NPC)."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import MEMORY, Topic

__all__ = ["MemoriesAccessed", "MemoryCorrected", "MemoryForgotten", "MemoryKind", "MemoryRecorded"]

MemoryKind = Literal["observation", "reflection", "plan", "dialogue", "seed"]


class MemoryRecorded(EventPayload):
    """A memory entered an NPC's memory stream, with its LLM-rated importance (1-10)."""

    event_type: ClassVar[str] = "MemoryRecorded"
    topic: ClassVar[Topic] = MEMORY

    memory_id: str
    kind: MemoryKind
    description: str = Field(min_length=1, max_length=4000)
    importance: int = Field(ge=1, le=10)
    created_at: datetime
    location: str | None = None
    subject: str | None = None
    evidence: tuple[str, ...] = ()
    depth: int = Field(default=0, ge=0)
    embedding_model: str
    embedding_dimensions: int | None = Field(default=None, ge=1)
    importance_model: str | None = None


class MemoriesAccessed(EventPayload):
    """Retrieval returned these memories; their last-access time moves to ``accessed_at``."""

    event_type: ClassVar[str] = "MemoriesAccessed"
    topic: ClassVar[Topic] = MEMORY

    memory_ids: tuple[str, ...] = Field(min_length=1)
    accessed_at: datetime
    query: str


class MemoryCorrected(EventPayload):
    """A designer corrected a memory of the envelope's NPC: its description is now ``description``.

    The memory service re-embeds the new text; kind, importance, times and evidence stay as recorded.
    """

    event_type: ClassVar[str] = "MemoryCorrected"
    topic: ClassVar[Topic] = MEMORY

    memory_id: str
    description: str = Field(min_length=1, max_length=4000)


class MemoryForgotten(EventPayload):
    """A designer removed a memory from the envelope's NPC: it is gone from retrieval and listings."""

    event_type: ClassVar[str] = "MemoryForgotten"
    topic: ClassVar[Topic] = MEMORY

    memory_id: str
