"""Perception events: what an NPC perceived (topic npcworld.perception.v1, keyed by NPC)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import PERCEPTION, Topic

__all__ = ["ObservationMade", "PlacesDiscovered"]


class ObservationMade(EventPayload):
    """An NPC observed something: an event triple plus its natural-language description."""

    event_type: ClassVar[str] = "ObservationMade"
    topic: ClassVar[Topic] = PERCEPTION

    description: str = Field(min_length=1, max_length=2000)
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    location: str | None = None
    source: str = Field(default="perception", description="perception service or 'studio' for posted ones")


class PlacesDiscovered(EventPayload):
    """Places entered the NPC's spatial memory (the part of the world tree it has seen).

    Paths are ``world:sector:arena[:object]``; planning may only send an NPC to a known place.
    """

    event_type: ClassVar[str] = "PlacesDiscovered"
    topic: ClassVar[Topic] = PERCEPTION

    paths: tuple[str, ...] = Field(min_length=1)
