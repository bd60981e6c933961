"""Dependencies every route module shares: scoped API-key aliases and the live-world lookup."""

from __future__ import annotations

from typing import Annotated, Any

from psycopg import AsyncConnection

from npcworld.errors import NotFoundError
from services.gateway.auth import require
from services.gateway.domain import WorldState
from services.gateway.repository import ApiKey, GatewayRepository

__all__ = ["Admin", "Reader", "Writer", "live_world"]

Reader = Annotated[ApiKey, require("read")]
Writer = Annotated[ApiKey, require("write")]
Admin = Annotated[ApiKey, require("admin")]


async def live_world(conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> WorldState:
    """The tenant's world, or NotFoundError (another tenant's world is as unknown as a missing one)."""
    state = await GatewayRepository(conn).load_world(tenant_id, world_id)
    if not state.exists or state.deleted:
        raise NotFoundError(f"world {world_id!r} not found")
    return state
