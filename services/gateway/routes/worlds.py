"""Worlds, NPCs, perceptions, the paged event log and forks."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from npcworld.contracts import NpcCreated, ObservationMade, WorldCreated
from npcworld.errors import ConcurrencyError, ConflictError, ValidationError
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.fork import fork_world, world_id_taken, world_stream
from npcworld.ids import new_id
from npcworld.templates import template_exists
from services.gateway.auth import require_world
from services.gateway.deps import Player, Reader, Writer, live_world
from services.gateway.domain import WorldState, decide_add_npc, decide_delete, require_active
from services.gateway.fields import ZonedDatetime
from services.gateway.freshness import settled
from services.gateway.pagination import CursorParam, LimitParam, Page, decode_cursor, next_cursor
from services.gateway.repository import EventReader, GatewayRepository, ViewRepository
from services.gateway.routes._appending import append_at_end, fold_appended
from services.gateway.schemas import (
    Accepted,
    EventOut,
    ForkIn,
    NpcIn,
    NpcOut,
    PerceptionIn,
    WorldIn,
    WorldOut,
    WorldReadiness,
)

__all__ = ["npc_out", "router"]

router = APIRouter()


def npc_out(npc: NpcCreated, state: WorldState) -> NpcOut:
    """An NPC as the world stream says it is now (persona edits included)."""
    fields = npc.model_dump(exclude={"seed", "known_places"})
    return NpcOut(**fields | {"traits": list(npc.traits), "retired": npc.npc_id in state.retired})


def _out(world_id: str, state: WorldState) -> WorldOut:
    return WorldOut(
        world_id=world_id,
        name=state.name,
        template=state.template,
        start_time=state.start_time,
        forked_from=state.forked_from,
        npc_count=state.active_npcs,
    )


@router.post("/v1/worlds", status_code=201, response_model=WorldOut, tags=["worlds"])
async def create_world(body: WorldIn, key: Writer, request: Request) -> WorldOut:
    world_id = body.world_id or new_id()
    require_world(key, world_id)
    async with request.app.state.pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        if body.template is not None and not template_exists(body.template):
            raise ValidationError(f"unknown template {body.template!r}", field="template")
        created = WorldCreated(name=body.name, start_time=body.start_time, template=body.template)
        event = uow.new_event(created, tenant_id=key.tenant_id, world_id=world_id, world_time=body.start_time)
        try:
            await uow.append(world_stream(world_id), [event], expected_version=0)
        except ConcurrencyError:
            raise ConflictError(world_id_taken(world_id), field="world_id") from None
        await fold_appended(uow)
        state = await GatewayRepository(conn).load_world(key.tenant_id, world_id)
    return _out(world_id, state)


@router.get("/v1/worlds", response_model=Page[WorldOut], tags=["worlds"])
async def list_worlds(
    key: Reader, request: Request, cursor: CursorParam = None, limit: LimitParam = 100
) -> Page[WorldOut]:
    after = decode_cursor("worlds", cursor, 0)
    async with request.app.state.pool.connection() as conn:
        repo = GatewayRepository(conn)
        ids = await repo.list_world_ids(key.tenant_id, after, limit, only=key.worlds)
        items = [_out(w, await repo.load_world(key.tenant_id, w)) for _, w in ids]
    return Page[WorldOut](
        items=items, next_cursor=next_cursor("worlds", ids, limit, ids[-1][0] if ids else 0)
    )


@router.get("/v1/worlds/{world_id}", response_model=WorldOut, tags=["worlds"])
async def get_world(world_id: str, key: Reader, request: Request) -> WorldOut:
    """The world, with its set-up progress (``readiness``): creating NPCs and posting the tree are taken in
    asynchronously, and ``readiness.ready`` says when the world answers every simulation route."""
    async with request.app.state.pool.connection() as conn:
        state = await live_world(conn, key.tenant_id, world_id)
        await settled(request, conn, key.tenant_id, world_id)
        clock, tree, known = await ViewRepository(conn).readiness(key.tenant_id, world_id)
    out = _out(world_id, state)
    out.readiness = WorldReadiness(ready=clock and known >= out.npc_count, clock=clock, tree=tree,
                                   npcs_known=known)
    return out


@router.delete("/v1/worlds/{world_id}", status_code=204, tags=["worlds"])
async def delete_world(world_id: str, key: Writer, request: Request) -> Response:
    async with request.app.state.pool.connection() as conn, conn.transaction():
        state = await GatewayRepository(conn).load_world(key.tenant_id, world_id)
        uow = UnitOfWork(conn, EventStore())
        events = [
            uow.new_event(p, tenant_id=key.tenant_id, world_id=world_id, world_time=state.start_time)
            for p in decide_delete(state, world_id)
        ]
        await uow.append(world_stream(world_id), events, expected_version=state.version)
        await fold_appended(uow)
    return Response(status_code=204)


@router.post("/v1/worlds/{world_id}/npcs", status_code=201, response_model=NpcOut, tags=["npcs"])
async def create_npc(world_id: str, body: NpcIn, key: Writer, request: Request) -> NpcOut:
    npc = NpcCreated(**body.model_dump(exclude={"traits"}), traits=tuple(body.traits))
    async with request.app.state.pool.connection() as conn, conn.transaction():
        state = await GatewayRepository(conn).load_world(key.tenant_id, world_id)
        uow = UnitOfWork(conn, EventStore())
        events = [
            uow.new_event(
                p, tenant_id=key.tenant_id, world_id=world_id, world_time=state.start_time, npc_id=body.npc_id
            )
            for p in decide_add_npc(state, world_id, npc)
        ]
        await uow.append(world_stream(world_id), events, expected_version=state.version)
        await fold_appended(uow)
    return NpcOut(**body.model_dump(exclude={"seed"}))


@router.get("/v1/worlds/{world_id}/npcs", response_model=Page[NpcOut], tags=["npcs"])
async def list_npcs(
    world_id: str, key: Reader, request: Request, cursor: CursorParam = None, limit: LimitParam = 100
) -> Page[NpcOut]:
    after = decode_cursor("npcs", cursor, "")
    async with request.app.state.pool.connection() as conn:
        state = await live_world(conn, key.tenant_id, world_id)
    npcs = sorted((n for n in state.npcs.values() if n.npc_id > after), key=lambda n: n.npc_id)[:limit]
    items = [npc_out(n, state) for n in npcs]
    return Page[NpcOut](
        items=items, next_cursor=next_cursor("npcs", items, limit, npcs[-1].npc_id if npcs else "")
    )


@router.post("/v1/worlds/{world_id}/npcs/{npc_id}/perceptions", status_code=202, tags=["npcs"])
async def post_perception(
    world_id: str, npc_id: str, body: PerceptionIn, key: Player, request: Request
) -> Accepted:
    async with request.app.state.pool.connection() as conn, conn.transaction():
        state = await live_world(conn, key.tenant_id, world_id, request.app.state.worlds)
        require_active(state, world_id, npc_id)
        uow = UnitOfWork(conn, EventStore())
        observation = ObservationMade(**body.model_dump(exclude={"world_time"}), source="studio")
        event = uow.new_event(
            observation, tenant_id=key.tenant_id, world_id=world_id, npc_id=npc_id, world_time=body.world_time
        )
        await append_at_end(uow, f"perception-{world_id}-{npc_id}", event)
    return Accepted(event_id=str(event.event_id))


@router.get("/v1/worlds/{world_id}/events", response_model=Page[EventOut], tags=["events"])
async def list_events(
    world_id: str,
    key: Reader,
    request: Request,
    cursor: CursorParam = None,
    limit: LimitParam = 100,
    type: Annotated[list[str] | None, Query(description="Only these event types")] = None,
    npc_id: Annotated[str | None, Query(max_length=100)] = None,
    until: Annotated[
        ZonedDatetime | None, Query(description="Only events at or before this world time")
    ] = None,
) -> Page[EventOut]:
    """The world's events in store order (each item's ``seq`` is also the SSE event id)."""
    after = decode_cursor("events", cursor, 0)
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        where = EventFilter(
            tenant_id=key.tenant_id,
            world_id=world_id,
            npc_id=npc_id,
            types=tuple(type or ()),
            until_world_time=until,
        )
        stored = await EventReader(conn).settled_after(where, after, limit)
    items = [
        EventOut(seq=s.seq, stream_id=s.stream_id, event=s.envelope.model_dump(mode="json")) for s in stored
    ]
    return Page[EventOut](
        items=items, next_cursor=next_cursor("events", items, limit, items[-1].seq if items else 0)
    )


@router.post("/v1/worlds/{world_id}/fork", status_code=201, response_model=WorldOut, tags=["worlds"])
async def fork(world_id: str, body: ForkIn, key: Writer, request: Request) -> WorldOut:
    target = body.new_world_id or new_id()
    require_world(key, target)
    async with request.app.state.pool.connection() as conn, conn.transaction():
        await live_world(conn, key.tenant_id, world_id)
        await fork_world(
            conn, tenant_id=key.tenant_id, source_world_id=world_id, at=body.at, new_world_id=target
        )
        state = await GatewayRepository(conn).load_world(key.tenant_id, target)
    return _out(target, state)
