"""Dependencies every route module shares: scoped API-key aliases and the live-world lookup (with a cache of
folded worlds for the routes every client calls)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Annotated, Any

from psycopg import AsyncConnection

from npcworld.errors import NotFoundError
from services.gateway.auth import require
from services.gateway.domain import WorldState
from services.gateway.repository import ApiKey, GatewayRepository

__all__ = ["Admin", "Chatter", "Player", "Reader", "Voice", "WorldCache", "Writer", "live_world"]

# The scopes each route needs (services/gateway/domain/grants.py says what each one implies).
Reader = Annotated[ApiKey, require("read")]
Chatter = Annotated[ApiKey, require("chat")]
Player = Annotated[ApiKey, require("play")]
Writer = Annotated[ApiKey, require("write")]
Voice = Annotated[ApiKey, require("voice")]
Admin = Annotated[ApiKey, require("admin")]


class WorldCache:
    """Folded world states of one gateway process, each valid while its world stream ends where it did.

    Folding the world stream parses every event of it, the template's whole world tree included (about
    5 ms of CPU for the 25-NPC town), on every perception and chat; checking the stream's last version
    and event id is one index lookup. The event id guards against a stream rebuilt to the same version.
    """

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._states: OrderedDict[tuple[str, str], tuple[tuple[int, str] | None, WorldState]] = OrderedDict()

    async def load(self, conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> WorldState:
        repo = GatewayRepository(conn)
        end = await repo.world_stream_end(tenant_id, world_id)
        cached = self._states.get((tenant_id, world_id))
        if cached is not None and cached[0] == end:
            self._states.move_to_end((tenant_id, world_id))
            return cached[1]
        # Read after the lookup: a fold that saw newer events is stored under the older end and simply
        # folded again on the next call, so a cached state is never older than its key says.
        state = await repo.load_world(tenant_id, world_id)
        self._states[(tenant_id, world_id)] = (end, state)
        if len(self._states) > self.size:
            self._states.popitem(last=False)
        return state


async def live_world(
    conn: AsyncConnection[Any], tenant_id: str, world_id: str, cache: WorldCache | None = None
) -> WorldState:
    """The tenant's world, or NotFoundError (another tenant's world is as unknown as a missing one)."""
    if cache is not None:
        state = await cache.load(conn, tenant_id, world_id)
    else:
        state = await GatewayRepository(conn).load_world(tenant_id, world_id)
    if not state.exists or state.deleted:
        raise NotFoundError(f"world {world_id!r} not found")
    return state
