"""Read-side views of a world and its NPCs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["NpcView", "WorldView"]


@dataclass(frozen=True)
class WorldView:
    """A world as the projection knows it."""

    tenant_id: str
    world_id: str
    name: str
    template: str | None
    start_time: datetime
    forked_from: str | None


@dataclass(frozen=True)
class NpcView:
    """An NPC of a world, with its persona basics and last known location."""

    world_id: str
    npc_id: str
    name: str
    age: int | None
    traits: tuple[str, ...]
    occupation: str | None
    location: str | None
