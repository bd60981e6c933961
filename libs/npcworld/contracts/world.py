"""World-level events: world lifecycle and NPC creation (topic npcworld.world.v1)."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from pydantic import Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import WORLD, Topic

__all__ = ["NpcCreated", "WorldCreated", "WorldDeleted", "WorldForked", "WorldTicked"]


class WorldCreated(EventPayload):
    """A world came into being, empty or from a template."""

    event_type: ClassVar[str] = "WorldCreated"
    topic: ClassVar[Topic] = WORLD

    name: str = Field(min_length=1, max_length=200)
    template: str | None = None
    start_time: datetime


class WorldForked(EventPayload):
    """This world was forked from another at a world time; its history up to then was copied."""

    event_type: ClassVar[str] = "WorldForked"
    topic: ClassVar[Topic] = WORLD

    source_world_id: str
    at_world_time: datetime
    copied_events: int = Field(ge=0)


class WorldDeleted(EventPayload):
    """The world was deleted; projections drop it."""

    event_type: ClassVar[str] = "WorldDeleted"
    topic: ClassVar[Topic] = WORLD


class NpcCreated(EventPayload):
    """An NPC joined the world with a persona; ``seed`` is split on ';' into seed memories."""

    event_type: ClassVar[str] = "NpcCreated"
    topic: ClassVar[Topic] = WORLD

    npc_id: str = Field(min_length=1, max_length=100)
    name: str = Field(min_length=1, max_length=200)
    age: int | None = Field(default=None, ge=0, le=1000)
    traits: tuple[str, ...] = ()
    occupation: str | None = None
    seed: str = ""
    location: str | None = None


class WorldTicked(EventPayload):
    """The world clock advanced one step to ``world_time`` (the envelope's world_time is the same).

    Perception computes what each NPC perceives on every tick; planning starts the next action of an
    NPC whose current one has ended.
    """

    event_type: ClassVar[str] = "WorldTicked"
    topic: ClassVar[Topic] = WORLD

    step: int = Field(ge=0)
    step_seconds: float = Field(gt=0, le=86400)
