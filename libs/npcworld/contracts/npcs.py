"""Designers' edits of NPCs (topic npcworld.world.v1, beside ``NpcCreated``): persona changes, retirement."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import WORLD, Topic

__all__ = ["NpcPersonaChanged", "NpcRetired"]


class NpcPersonaChanged(EventPayload):
    """A designer edited the NPC's persona; the payload is the whole persona after the edit.

    Every service that keeps a copy of the persona (prompts, names in observations) replaces it. Seed
    memories, the starting place and known places are not part of it: memories are edited one by one.
    """

    event_type: ClassVar[str] = "NpcPersonaChanged"
    topic: ClassVar[Topic] = WORLD

    npc_id: str = Field(min_length=1, max_length=100)
    name: str = Field(min_length=1, max_length=200)
    age: int | None = Field(default=None, ge=0, le=1000)
    traits: tuple[str, ...] = ()
    occupation: str | None = None


class NpcRetired(EventPayload):
    """A designer retired the NPC: it no longer perceives, plans, acts or talks, and others no longer see it.

    Its history (events, memories, relationships) stays readable; the id stays taken.
    """

    event_type: ClassVar[str] = "NpcRetired"
    topic: ClassVar[Topic] = WORLD

    npc_id: str = Field(min_length=1, max_length=100)
    reason: str = Field(default="", max_length=500)
