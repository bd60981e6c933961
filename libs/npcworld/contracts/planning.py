"""Planning events (topic npcworld.planning.v1, keyed by NPC): day plans, revisions and decided actions."""

from __future__ import annotations

from datetime import date, datetime
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import PLANNING, Topic

__all__ = [
    "ActionDecided",
    "ConversationRequested",
    "DayPlanned",
    "ObjectStateChange",
    "PlanItem",
    "PlanRevised",
]


class ObjectStateChange(BaseModel):
    """An object the action changes, and its new free-text state ("coffee machine: brewing coffee")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    object_path: str = Field(min_length=1, max_length=400, description="world:sector:arena:object")
    state: str = Field(min_length=1, max_length=400)


class PlanItem(BaseModel):
    """One item of a plan: what the NPC does from ``start`` for ``duration_minutes``, and where."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: datetime
    duration_minutes: int = Field(ge=1, le=24 * 60)
    description: str = Field(min_length=1, max_length=1000)
    location_path: str = Field(min_length=1, max_length=400, description="world:sector:arena[:object]")


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


class DayPlanned(EventPayload):
    """The NPC planned its waking day: an outline of 5-8 blocks and its decomposition into hour-long chunks.

    ``items`` cover the waking day without gaps or overlaps; ``fallbacks`` records every place the
    plan named that the NPC does not know, and the known place used instead.
    """

    event_type: ClassVar[str] = "DayPlanned"
    topic: ClassVar[Topic] = PLANNING

    day: date
    outline: tuple[PlanItem, ...] = Field(min_length=1)
    items: tuple[PlanItem, ...] = Field(min_length=1)
    goals: tuple[str, ...] = Field(
        default=(), description="goals the plan was made with (inner voice, promises)"
    )
    fallbacks: tuple[str, ...] = ()


class PlanRevised(EventPayload):
    """The rest of the NPC's day from ``from_time`` on was re-planned, and why.

    ``items`` replace every planned item at or after ``from_time``; earlier items stay as they were.
    """

    event_type: ClassVar[str] = "PlanRevised"
    topic: ClassVar[Topic] = PLANNING

    from_time: datetime
    items: tuple[PlanItem, ...] = Field(min_length=1)
    reason: str = Field(min_length=1, max_length=2000)
    reaction_to: str | None = Field(
        default=None, description="event id of the event that caused the revision"
    )
    fallbacks: tuple[str, ...] = ()


class ConversationRequested(EventPayload):
    """The envelope's NPC decided (a reaction) to talk to ``target_npc_id``; dialogue runs it."""

    event_type: ClassVar[str] = "ConversationRequested"
    topic: ClassVar[Topic] = PLANNING

    target_npc_id: str = Field(min_length=1, max_length=100)
    reason: str = Field(min_length=1, max_length=2000)
    location_path: str | None = Field(default=None, max_length=400, description="world:sector:arena[:object]")
    reaction_to: str | None = Field(default=None, description="event id of the perception this reacts to")
