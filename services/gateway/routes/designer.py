"""Designers' edits: change an NPC's persona, retire an NPC, correct or forget one of its memories.

Each edit is an event, so replay and forks honour it. NPC edits go on the world stream (the gateway decides
them against the folded world); memory edits are applied by the memory service, which owns the memories
(it re-embeds a corrected text), so those answer 202 and show in the memory list a moment later.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from psycopg import AsyncConnection
from pydantic import BaseModel, ConfigDict, Field, field_validator

from npcworld.contracts import EventPayload, MemoryCorrected, MemoryForgotten
from npcworld.errors import NotFoundError
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.fork import world_stream
from services.gateway.deps import Writer, live_world
from services.gateway.domain import WorldState, decide_change_persona, decide_retire
from services.gateway.fields import Text, not_blank
from services.gateway.routes._appending import append_at_end, fold_appended
from services.gateway.routes.worlds import npc_out
from services.gateway.schemas import Accepted, NpcOut

__all__ = ["router"]

router = APIRouter()
NPC_PATH = "/v1/worlds/{world_id}/npcs/{npc_id}"
MEMORY_PATH = f"{NPC_PATH}/memories/{{memory_id}}"


class NpcPatch(BaseModel):
    """The persona fields to change; fields left out keep their value (``null`` clears age or occupation)."""

    model_config = ConfigDict(extra="forbid")

    name: Text | None = Field(default=None, min_length=1, max_length=200)
    age: int | None = Field(default=None, ge=0, le=1000)
    traits: list[Text] | None = Field(default=None, max_length=20)
    occupation: str | None = Field(default=None, max_length=200)

    @field_validator("name", "traits")
    @classmethod
    def _not_null(cls, value: object) -> object:
        if value is None:
            raise ValueError("may be left out but not null")
        return value


class MemoryPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1, max_length=4000, description="the memory's corrected text")
    _check_description = field_validator("description")(not_blank)


async def _append_world(conn: AsyncConnection[Any], tenant_id: str, npc: tuple[str, str], state: WorldState,
                        events: list[EventPayload]) -> None:
    """Append the NPC's events (``npc``: world and NPC id) where the folded world stream ended."""
    world_id, npc_id = npc
    uow = UnitOfWork(conn, EventStore())
    when = await _latest_time(conn, tenant_id, world_id) or state.start_time
    envelopes = [uow.new_event(p, tenant_id=tenant_id, world_id=world_id, world_time=when, npc_id=npc_id)
                 for p in events]
    await uow.append(world_stream(world_id), envelopes, expected_version=state.version)
    await fold_appended(uow)


async def _latest_time(conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> datetime | None:
    cur = await conn.execute(
        "SELECT max(world_time) FROM events"
        " WHERE in_world(tenant_id, world_id, %s, %s)", (tenant_id, world_id)
    )
    row = await cur.fetchone()
    return row[0] if row else None


@router.patch(NPC_PATH, response_model=NpcOut, tags=["npcs"])
async def change_persona(world_id: str, npc_id: str, body: NpcPatch, key: Writer, request: Request) -> NpcOut:
    """Edit the NPC's persona (``NpcPersonaChanged``): its prompts and the name others see follow it."""
    async with request.app.state.pool.connection() as conn, conn.transaction():
        state = await live_world(conn, key.tenant_id, world_id)
        events = decide_change_persona(state, world_id, npc_id, body.model_dump(exclude_unset=True))
        if events:
            await _append_world(conn, key.tenant_id, (world_id, npc_id), state, events)
        state = await live_world(conn, key.tenant_id, world_id)
    return npc_out(state.npcs[npc_id], state)


@router.delete(NPC_PATH, status_code=204, tags=["npcs"])
async def retire_npc(
    world_id: str, npc_id: str, key: Writer, request: Request,
    reason: Annotated[str, Query(max_length=500, description="why, for the event log")] = "",
) -> Response:
    """Retire the NPC (``NpcRetired``): it stops perceiving, planning, acting and talking, and others stop
    seeing it; its events, memories and relationships stay readable."""
    async with request.app.state.pool.connection() as conn, conn.transaction():
        state = await live_world(conn, key.tenant_id, world_id)
        events = decide_retire(state, world_id, npc_id, reason)
        if events:
            await _append_world(conn, key.tenant_id, (world_id, npc_id), state, events)
    return Response(status_code=204)


async def _check_memory(conn: AsyncConnection[Any], tenant_id: str, world_id: str, npc_id: str,
                        memory_id: uuid.UUID) -> None:
    """404 unless the NPC has (had) the memory and it was not forgotten; the event store says so."""
    await live_world(conn, tenant_id, world_id)
    cur = await conn.execute(
        "SELECT bool_or(type = 'MemoryRecorded'), bool_or(type = 'MemoryForgotten') FROM"
        " world_events(%s, %s) AS events WHERE npc_id = %s"
        " AND type IN ('MemoryRecorded', 'MemoryForgotten') AND payload->>'memory_id' = %s",
        (tenant_id, world_id, npc_id, str(memory_id)),
    )
    row = await cur.fetchone()
    if row is None or not row[0] or row[1]:
        raise NotFoundError(f"no memory {str(memory_id)!r} of NPC {npc_id!r} in world {world_id!r}")


async def _edit_memory(request: Request, tenant_id: str, world_id: str, npc_id: str,
                       edit: MemoryCorrected | MemoryForgotten) -> Accepted:
    async with request.app.state.pool.connection() as conn, conn.transaction():
        await _check_memory(conn, tenant_id, world_id, npc_id, uuid.UUID(edit.memory_id))
        uow = UnitOfWork(conn, EventStore())
        when = await _latest_time(conn, tenant_id, world_id)
        assert when is not None  # the memory's own event has a time
        event = uow.new_event(edit, tenant_id=tenant_id, world_id=world_id, npc_id=npc_id, world_time=when)
        await append_at_end(uow, f"memory-edits-{world_id}-{npc_id}", event)
    return Accepted(event_id=str(event.event_id))


@router.patch(MEMORY_PATH, status_code=202, response_model=Accepted, tags=["memories"])
async def correct_memory(
    world_id: str, npc_id: str, memory_id: uuid.UUID, body: MemoryPatch, key: Writer, request: Request
) -> Accepted:
    """Correct a memory's text (``MemoryCorrected``); the memory service re-embeds it, so retrieval finds
    it by its new text. Kind, importance and times stay."""
    edit = MemoryCorrected(memory_id=str(memory_id), description=body.description)
    return await _edit_memory(request, key.tenant_id, world_id, npc_id, edit)


@router.delete(MEMORY_PATH, status_code=202, response_model=Accepted, tags=["memories"])
async def forget_memory(
    world_id: str, npc_id: str, memory_id: uuid.UUID, key: Writer, request: Request
) -> Accepted:
    """Remove a memory (``MemoryForgotten``): it leaves retrieval and the memory list."""
    edit = MemoryForgotten(memory_id=str(memory_id))
    return await _edit_memory(request, key.tenant_id, world_id, npc_id, edit)
