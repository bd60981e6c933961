"""Simulation routes: templates, the world tree, object-state edits, studio definitions and positions,
the world clock, and an NPC's current state.

Reads come from the gateway's own read models (``gw_*``, folded from world_state's and perception's events:
services/gateway/handlers.py) and from the event store; every write is an event the services react to.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from psycopg import AsyncConnection

from npcworld.contracts import (
    ClockChanged,
    EventPayload,
    NpcMove,
    NpcsMoved,
    ObjectStateChanged,
    WorldDefined,
)
from npcworld.errors import NotFoundError, ValidationError
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.eventstore.history import Part, read_in_parts
from npcworld.fork import world_stream
from npcworld.templates import list_templates, load_template
from services.gateway.deps import Reader, Writer, live_world
from services.gateway.freshness import settled
from services.gateway.repository import ViewRepository
from services.gateway.routes._appending import fold_appended
from services.gateway.routes.simulation_schemas import (
    ClockIn,
    ClockOut,
    DefinitionIn,
    NpcStateOut,
    ObjectOut,
    ObjectStateIn,
    PositionsIn,
    TemplateOut,
    TreeOut,
)
from services.gateway.schemas import Accepted

__all__ = ["router"]

router = APIRouter(tags=["simulation"])


async def _views(
    request: Request, conn: AsyncConnection[Any], tenant_id: str, world_id: str
) -> ViewRepository:
    """The read models, once they hold what the world has stored (services/gateway/freshness.py)."""
    await settled(request, conn, tenant_id, world_id)
    return ViewRepository(conn)


async def _append(
    request: Request,
    key: Any,
    world_id: str,
    stream: str,
    payload: EventPayload,
    when: datetime,
    npc_id: str | None = None,
) -> str:
    async with request.app.state.pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        event = uow.new_event(
            payload, tenant_id=key.tenant_id, world_id=world_id, world_time=when, npc_id=npc_id
        )
        await uow.append(stream, [event])
        await fold_appended(uow)
    return str(event.event_id)


async def _clock(views: ViewRepository, tenant_id: str, world_id: str) -> ClockOut | None:
    row = await views.clock(tenant_id, world_id)
    if row is None:
        return None
    speed = row["speed"]
    mode: Literal["realtime", "fast", "stepped"] = (
        "stepped" if speed is None else ("realtime" if speed == 1 else "fast")
    )
    return ClockOut(**row, mode=mode)


async def _now(views: ViewRepository, tenant_id: str, world_id: str, start: datetime | None) -> datetime:
    world_time = await views.world_time(tenant_id, world_id)
    if world_time is not None:
        return world_time
    if start is None:
        raise NotFoundError(f"world {world_id!r} has no clock yet")
    return start


@router.get("/v1/templates", response_model=list[TemplateOut])
async def templates(key: Reader) -> list[TemplateOut]:
    out = []
    for name in list_templates():
        t = load_template(name)
        out.append(
            TemplateOut(
                name=name,
                title=t.name,
                description=t.description,
                npc_count=len(t.npcs),
                start_time=t.start_time,
                step_seconds=t.step_seconds,
            )
        )
    return out


@router.post("/v1/worlds/{world_id}/definition", status_code=202)
async def define_world(world_id: str, body: DefinitionIn, key: Writer, request: Request) -> Accepted:
    """A studio's world tree (no tile map): its engine then posts positions and perceptions."""
    async with request.app.state.pool.connection() as conn:
        state = await live_world(conn, key.tenant_id, world_id)
    definition = WorldDefined(sectors=tuple(body.sectors), source="studio")
    assert state.start_time is not None
    return Accepted(
        event_id=await _append(request, key, world_id, world_stream(world_id), definition, state.start_time)
    )


@router.get("/v1/worlds/{world_id}/tree", response_model=TreeOut)
async def world_tree(
    world_id: str,
    key: Reader,
    request: Request,
    tiles: Annotated[bool, Query(description="include the tile map rows")] = False,
) -> TreeOut:
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        views = await _views(request, conn, key.tenant_id, world_id)
        definition = await views.tree(key.tenant_id, world_id)
        if definition is None:
            raise NotFoundError(f"world {world_id!r} has no world tree yet")
        objects = [ObjectOut(path=p, state=s) for p, s in await views.objects(key.tenant_id, world_id)]
    rows = list(definition.tile_map.rows) if tiles and definition.tile_map else None
    return TreeOut(
        world_id=world_id,
        source=definition.source,
        template=definition.template,
        tiled=definition.tile_map is not None,
        sectors=[s.model_dump() for s in definition.sectors],
        objects=objects,
        tile_rows=rows,
    )


@router.post("/v1/worlds/{world_id}/object-states", status_code=202)
async def edit_object_state(
    world_id: str, body: ObjectStateIn, key: Writer, request: Request
) -> Accepted:
    """A user edit ("the stove is burning"); NPCs in range perceive it on the next step."""
    async with request.app.state.pool.connection() as conn:
        state = await live_world(conn, key.tenant_id, world_id)
        views = await _views(request, conn, key.tenant_id, world_id)
        if not await views.has_object(key.tenant_id, world_id, body.object_path):
            raise ValidationError(f"no object {body.object_path!r} in this world", field="object_path")
        when = await _now(views, key.tenant_id, world_id, state.start_time)
    change = ObjectStateChanged(object_path=body.object_path, state=body.state, source="user")
    return Accepted(event_id=await _append(request, key, world_id, f"objects-{world_id}", change, when))


@router.post("/v1/worlds/{world_id}/positions", status_code=202)
async def post_positions(world_id: str, body: PositionsIn, key: Writer, request: Request) -> Accepted:
    """Positions from a studio's engine (worlds without a tile map are moved only this way)."""
    async with request.app.state.pool.connection() as conn:
        state = await live_world(conn, key.tenant_id, world_id)
        views = await _views(request, conn, key.tenant_id, world_id)
        places = await _places(views, key.tenant_id, world_id)
        when = await _now(views, key.tenant_id, world_id, state.start_time)
    if places is None:
        raise ValidationError("define the world tree first (POST .../definition)", field="moves")
    for i, move in enumerate(body.moves):
        if move.npc_id not in state.npcs or move.npc_id in state.retired:
            raise ValidationError(f"no active NPC {move.npc_id!r} in this world", field=f"moves.{i}.npc_id")
        if move.path not in places:
            raise ValidationError(f"no place {move.path!r} in this world", field=f"moves.{i}.path")
    moved = NpcsMoved(source="studio", moves=tuple(NpcMove(npc_id=m.npc_id, path=m.path) for m in body.moves))
    return Accepted(event_id=await _append(request, key, world_id, f"positions-{world_id}", moved, when))


async def _places(views: ViewRepository, tenant_id: str, world_id: str) -> set[str] | None:
    """Every arena and object path of the world's tree; None before it has one."""
    definition = await views.tree(tenant_id, world_id)
    if definition is None:
        return None
    return {
        f"{world_id}:{s.name}:{a.name}" + suffix
        for s in definition.sectors
        for a in s.arenas
        for suffix in ["", *(f":{o.name}" for o in a.objects)]
    }


@router.get("/v1/worlds/{world_id}/clock", response_model=ClockOut)
async def get_clock(world_id: str, key: Reader, request: Request) -> ClockOut:
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        clock = await _clock(await _views(request, conn, key.tenant_id, world_id), key.tenant_id, world_id)
    if clock is None:
        raise NotFoundError(f"world {world_id!r} has no clock yet: it is being set up "
                            "(GET /v1/worlds/{id} shows its readiness)")
    return clock


@router.post("/v1/worlds/{world_id}/clock", status_code=202)
async def set_clock(world_id: str, body: ClockIn, key: Writer, request: Request) -> Accepted:
    """Pause, resume or re-pace the clock: real time, N times faster (``speed``), or stepped (as digested)."""
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        views = await _views(request, conn, key.tenant_id, world_id)
        clock = await _clock(views, key.tenant_id, world_id)
        places = await _places(views, key.tenant_id, world_id) if body.focus else set()
    if clock is None:
        raise NotFoundError(f"world {world_id!r} has no clock yet: it is being set up "
                            "(GET /v1/worlds/{id} shows its readiness)")
    for i, path in enumerate(body.focus or ()):
        if path != world_id and not any(p == path or p.startswith(path + ":") for p in places or ()):
            raise ValidationError(f"no place {path!r} in this world", field=f"focus.{i}")
    mode = body.mode or (clock.mode if body.speed is None else "fast")
    if mode == "fast" and (body.speed or clock.speed) is None:
        raise ValidationError("fast mode needs a speed", field="speed")
    speed = {"realtime": 1.0, "stepped": None}.get(mode, body.speed or clock.speed)
    focus = body.focus if "focus" in body.model_fields_set else clock.focus
    change = ClockChanged(
        paused=clock.paused if body.paused is None else body.paused,
        speed=speed,
        step_seconds=body.step_seconds or clock.step_seconds,
        until=body.until,
        focus=None if focus is None else tuple(dict.fromkeys(focus)),
    )
    return Accepted(
        event_id=await _append(request, key, world_id, f"clock-ops-{world_id}", change, clock.world_time)
    )


@router.get("/v1/worlds/{world_id}/npcs/{npc_id}/state", response_model=NpcStateOut)
async def npc_state(world_id: str, npc_id: str, key: Reader, request: Request) -> NpcStateOut:
    """Where the NPC is, where it walks, what it does, its latest decided action and day plan."""
    async with request.app.state.pool.connection() as conn:
        state = await live_world(conn, key.tenant_id, world_id)
        if npc_id not in state.npcs:
            raise NotFoundError(f"NPC {npc_id!r} not found in world {world_id!r}")
        views = await _views(request, conn, key.tenant_id, world_id)
        row = await views.npc(key.tenant_id, world_id, npc_id) or {}
        known = await views.known_places(key.tenant_id, world_id, npc_id)
        latest = {
            t: await _latest(conn, key.tenant_id, world_id, npc_id, t)
            for t in ("ActionDecided", "DayPlanned")
        }
    tx, ty, left = row.get("tile_x"), row.get("tile_y"), row.get("steps_left") or 0
    return NpcStateOut(
        npc_id=npc_id,
        location=row.get("location"),
        tile=(int(tx), int(ty)) if tx is not None and ty is not None else None,
        walking_to=row.get("target") if left else None,
        steps_left=left,
        action=row.get("action"),
        emoji=row.get("emoji") or "",
        action_end=row.get("action_end"),
        latest_action=latest["ActionDecided"],
        plan=latest["DayPlanned"],
        known_places=known,
    )


async def _latest(
    conn: AsyncConnection[Any], tenant: str, world: str, npc: str, event_type: str
) -> dict[str, Any] | None:
    async def newest(part: Part, _: int) -> list[int]:
        source, params = part.source()
        cur = await conn.execute(f"SELECT seq FROM {source} AND npc_id = %s AND type = %s"
                                 " ORDER BY seq DESC LIMIT 1", [*params, npc, event_type])
        return [row[0] for row in await cur.fetchall()]

    seqs = await read_in_parts(conn, tenant, world, newest, 1, newest_first=True)
    if not seqs:
        return None
    stored = await EventStore().read_all(
        conn, seqs[0] - 1, 1, EventFilter(tenant_id=tenant, world_id=world, types=(event_type,))
    )
    return stored[0].envelope.model_dump(mode="json") if stored else None
