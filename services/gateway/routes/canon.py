"""Canon routes: facts a designer locks for a world or for one NPC (``CanonSet``).

NPCs treat canon as true: dialogue puts it into its prompts, and memory remembers a line that contradicts
it as the speaker's claim (docs/studio-controls.md, "Designer canon"). ``PUT`` replaces a scope's facts;
``GET`` reads the latest set back from the event store.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from psycopg import AsyncConnection
from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts import CanonSet
from npcworld.errors import NotFoundError
from npcworld.eventstore import EventStore, UnitOfWork
from services.gateway.deps import Reader, Writer, live_world
from services.gateway.repository import ViewRepository
from services.gateway.routes._appending import append_at_end
from services.gateway.schemas import Accepted

__all__ = ["router"]

router = APIRouter(tags=["canon"])
WORLD = "/v1/worlds/{world_id}/canon"
NPC = "/v1/worlds/{world_id}/npcs/{npc_id}/canon"


class CanonBody(BaseModel):
    """Facts held true, each one short sentence ("The mayor is Tobias Wren")."""

    model_config = ConfigDict(extra="forbid")

    facts: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(default_factory=list,
                                                                             max_length=50)


@router.put(WORLD, status_code=202)
async def set_world_canon(world_id: str, body: CanonBody, key: Writer, request: Request) -> Accepted:
    """Replace the world's canon (an empty list removes it); every NPC of the world holds it true."""
    return await _set(request, key.tenant_id, world_id, None, body)


@router.get(WORLD, response_model=CanonBody)
async def get_world_canon(world_id: str, key: Reader, request: Request) -> CanonBody:
    return await _get(request, key.tenant_id, world_id, None)


@router.put(NPC, status_code=202)
async def set_npc_canon(
    world_id: str, npc_id: str, body: CanonBody, key: Writer, request: Request
) -> Accepted:
    """Replace what this NPC holds true besides the world's canon (an empty list removes it)."""
    return await _set(request, key.tenant_id, world_id, npc_id, body)


@router.get(NPC, response_model=CanonBody)
async def get_npc_canon(world_id: str, npc_id: str, key: Reader, request: Request) -> CanonBody:
    return await _get(request, key.tenant_id, world_id, npc_id)


async def _known(conn: AsyncConnection[Any], tenant_id: str, world_id: str, npc_id: str | None) -> Any:
    state = await live_world(conn, tenant_id, world_id)
    if npc_id is not None and npc_id not in state.npcs:
        raise NotFoundError(f"NPC {npc_id!r} not found in world {world_id!r}")
    return state


async def _set(
    request: Request, tenant_id: str, world_id: str, npc_id: str | None, body: CanonBody
) -> Accepted:
    async with request.app.state.pool.connection() as conn, conn.transaction():
        state = await _known(conn, tenant_id, world_id, npc_id)
        now = await ViewRepository(conn).world_time(tenant_id, world_id)
        uow = UnitOfWork(conn, EventStore())
        event = uow.new_event(CanonSet(npc_id=npc_id, facts=tuple(dict.fromkeys(body.facts))),
                              tenant_id=tenant_id, world_id=world_id, npc_id=npc_id,
                              world_time=now or state.start_time)
        await append_at_end(uow, f"canon-{world_id}", event)
    return Accepted(event_id=str(event.event_id))


async def _get(request: Request, tenant_id: str, world_id: str, npc_id: str | None) -> CanonBody:
    async with request.app.state.pool.connection() as conn:
        await _known(conn, tenant_id, world_id, npc_id)
        cur = await conn.execute(
            "SELECT payload FROM world_events(%s, %s) AS events WHERE type = 'CanonSet'"
            " AND npc_id IS NOT DISTINCT FROM %s ORDER BY seq DESC LIMIT 1",
            (tenant_id, world_id, npc_id),
        )
        row = await cur.fetchone()
    return CanonBody(facts=list(CanonSet.model_validate(row[0]).facts) if row else [])
