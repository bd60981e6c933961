"""world_state projection appliers (and, later, its reactions)."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import Envelope, NpcCreated, WorldCreated, WorldForked
from npcworld.projection import Projection
from services.world_state.repository import TABLES, WorldRepository

__all__ = ["HANDLERS", "PROJECTION"]

CONSUMER = "world_state"


async def apply_world_created(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, WorldCreated)
    await WorldRepository(conn).add_world(event, event.payload)


async def apply_world_forked(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, WorldForked)
    await WorldRepository(conn).mark_forked(event.world_id, event.payload)


async def apply_world_deleted(event: Envelope, conn: AsyncConnection[Any]) -> None:
    await WorldRepository(conn).mark_deleted(event.world_id)


async def apply_npc_created(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, NpcCreated)
    await WorldRepository(conn).add_npc(event, event.payload)


PROJECTION = Projection(
    CONSUMER,
    TABLES,
    {
        "WorldCreated": apply_world_created,
        "WorldForked": apply_world_forked,
        "WorldDeleted": apply_world_deleted,
        "NpcCreated": apply_npc_created,
    },
)
HANDLERS: dict[str, Any] = {}
