"""Designer canon (npcworld.world.v1): facts a studio locks for a whole world or for one NPC, which NPCs
treat as true; what contradicts them is remembered as the speaker's claim, never as fact."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import WORLD, Topic

__all__ = ["CanonSet"]

Fact = Annotated[str, Field(min_length=1, max_length=500)]


class CanonSet(EventPayload):
    """The canon of the world (``npc_id`` None) or of one NPC, replacing that scope's previous facts
    (empty: none)."""

    event_type: ClassVar[str] = "CanonSet"
    topic: ClassVar[Topic] = WORLD

    npc_id: str | None = Field(default=None, max_length=100)
    facts: tuple[Fact, ...] = Field(default=(), max_length=50)
