"""The ``MemoryReader`` port and the models that cross it (also the memory service's internal API bodies)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts import MemoryKind, MemorySource, Trust

__all__ = ["MemoryPage", "MemoryReader", "MemoryView", "RetrievalRequest", "RetrievedView", "Weights",
           "relied_on"]


class Weights(BaseModel):
    """Retrieval weights a_rec, a_imp, a_rel (DESIGN.md: each defaults to 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recency: float = Field(default=1.0, ge=0, le=100)
    importance: float = Field(default=1.0, ge=0, le=100)
    relevance: float = Field(default=1.0, ge=0, le=100)


class MemoryView(BaseModel):
    """One memory as other services see it (no embedding)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_id: str
    kind: MemoryKind
    description: str
    importance: int = Field(ge=1, le=10)
    created_at: datetime
    last_accessed_at: datetime
    location: str | None = None
    subject: str | None = None
    evidence: tuple[str, ...] = ()
    depth: int = Field(default=0, ge=0)
    source: MemorySource = "perceived"
    told_by: str | None = None
    trust: Trust = "high"


def relied_on(memory: MemoryView) -> bool:
    """Whether the NPC may go on ``memory`` as fact: anything but a player's uncorroborated claim (trust
    "low"). Reflection never shows such a claim to the model, and a reaction never weighs one
    (docs/studio-controls.md "Memory provenance")."""
    return memory.trust != "low"


class RetrievedView(MemoryView):
    """A retrieved memory with its normalised component scores and weighted total."""

    recency: float
    importance_score: float
    relevance: float
    score: float


class MemoryPage(BaseModel):
    """One page of an NPC's memories, newest first; ``next_cursor`` is None on the last page."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: tuple[MemoryView, ...]
    next_cursor: str | None = None


class RetrievalRequest(BaseModel):
    """A retrieval query against one NPC's stream at world time ``now``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str = Field(min_length=1, max_length=100)
    world_id: str = Field(min_length=1, max_length=100)
    npc_id: str = Field(min_length=1, max_length=100)
    query: str = Field(min_length=1, max_length=2000)
    k: int = Field(default=10, ge=1, le=100)
    now: datetime
    weights: Weights | None = None


class MemoryReader(Protocol):
    """Read access to memory streams. Raises ``NotFoundError`` for an unknown NPC and ``ValidationError``
    (naming the field) for a bad query, whatever the adapter."""

    async def retrieve(self, request: RetrievalRequest) -> list[RetrievedView]:
        """Top-k by recency + importance + relevance; marks the returned memories accessed."""
        ...

    async def recent(
        self, tenant_id: str, world_id: str, npc_id: str, *, limit: int = 100,
        kinds: tuple[MemoryKind, ...] = (),
    ) -> list[MemoryView]:
        """The NPC's most recent memories (newest first), optionally only of some kinds."""
        ...
