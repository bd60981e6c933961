"""Planning events (topic npcworld.planning.v1, keyed by NPC): what an NPC decided to do next."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import PLANNING, Topic

__all__ = ["ActionDecided", "ObjectStateChange"]


class ObjectStateChange(BaseModel):
    """An object the action changes, and its new free-text state ("coffee machine: brewing coffee")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    object_path: str = Field(min_length=1, max_length=400, description="world:sector:arena:object")
    state: str = Field(min_length=1, max_length=400)


class ActionDecided(EventPayload):
    """The NPC's next action, decided by planning (from its plan or as a reaction).

    World-state moves the NPC to ``location_path`` and applies ``object_state``; the location is always
    one the NPC knows (planning never sends an NPC to an invented place).
    """

    event_type: ClassVar[str] = "ActionDecided"
    topic: ClassVar[Topic] = PLANNING

    description: str = Field(min_length=1, max_length=1000)
    location_path: str = Field(min_length=1, max_length=400, description="world:sector:arena[:object]")
    start: datetime
    duration_minutes: int = Field(ge=1, le=24 * 60)
    emoji: str = Field(default="", max_length=16, description="short pictogram summary of the action")
    object_state: ObjectStateChange | None = None
    reaction_to: str | None = Field(default=None, description="event id of the perception this reacts to")
