"""The studio-facing REST API (FastAPI): worlds, NPCs, perceptions, the event log and forks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import FastAPI, Query, Request, Response

from npcworld.contracts import NpcCreated, ObservationMade, WorldCreated
from npcworld.db import apply_migrations, open_pool
from npcworld.errors import NotFoundError
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.fork import fork_world, world_stream
from npcworld.ids import new_id
from npcworld.settings import resolve_endpoints
from services.gateway.deps import Reader, Writer, live_world
from services.gateway.domain import WorldState, decide_add_npc, decide_delete
from services.gateway.problems import install_http_problem_handler, install_problem_handlers
from services.gateway.repository import GatewayRepository
from services.gateway.routes import routers
from services.gateway.schemas import (
    EventOut,
    EventPage,
    ForkIn,
    NpcIn,
    NpcOut,
    PerceptionIn,
    WorldIn,
    WorldOut,
)
from services.gateway.settings import Settings

__all__ = ["create_app"]

def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; the database pool opens at start-up, never at import."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        cfg = settings or Settings()
        url = resolve_endpoints(cfg).database_url
        apply_migrations(url)
        app.state.pool = await open_pool(url, max_size=8, name="gateway")
        app.state.settings = cfg
        yield
        await app.state.pool.close()

    app = FastAPI(title="npcworld", version="1", lifespan=lifespan,
                  description="Persistent, debuggable NPC worlds. Authenticate with `Authorization: Bearer <key>`.")
    install_problem_handlers(app)
    install_http_problem_handler(app)
    _routes(app)
    for router in routers():
        app.include_router(router)
    return app


def _out(world_id: str, state: WorldState) -> WorldOut:
    return WorldOut(world_id=world_id, name=state.name, template=state.template, start_time=state.start_time,
                    forked_from=state.forked_from, npc_count=len(state.npcs))


def _routes(app: FastAPI) -> None:
    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"])
    async def readyz(request: Request) -> dict[str, str]:
        async with request.app.state.pool.connection() as conn:
            await conn.execute("SELECT 1")
        return {"status": "ready"}

    @app.post("/v1/worlds", status_code=201, response_model=WorldOut, tags=["worlds"])
    async def create_world(body: WorldIn, key: Writer, request: Request) -> WorldOut:
        world_id = body.world_id or new_id()
        async with request.app.state.pool.connection() as conn, conn.transaction():
            uow = UnitOfWork(conn, EventStore())
            event = uow.new_event(WorldCreated(name=body.name, start_time=body.start_time),
                                  tenant_id=key.tenant_id, world_id=world_id, world_time=body.start_time)
            await uow.append(world_stream(world_id), [event], expected_version=0)
            state = await GatewayRepository(conn).load_world(key.tenant_id, world_id)
        return _out(world_id, state)

    @app.get("/v1/worlds", response_model=list[WorldOut], tags=["worlds"])
    async def list_worlds(key: Reader, request: Request) -> list[WorldOut]:
        async with request.app.state.pool.connection() as conn:
            repo = GatewayRepository(conn)
            ids = await repo.list_world_ids(key.tenant_id)
            return [_out(w, await repo.load_world(key.tenant_id, w)) for w in ids]

    @app.get("/v1/worlds/{world_id}", response_model=WorldOut, tags=["worlds"])
    async def get_world(world_id: str, key: Reader, request: Request) -> WorldOut:
        async with request.app.state.pool.connection() as conn:
            return _out(world_id, await live_world(conn, key.tenant_id, world_id))

    @app.delete("/v1/worlds/{world_id}", status_code=204, tags=["worlds"])
    async def delete_world(world_id: str, key: Writer, request: Request) -> Response:
        async with request.app.state.pool.connection() as conn, conn.transaction():
            state = await GatewayRepository(conn).load_world(key.tenant_id, world_id)
            uow = UnitOfWork(conn, EventStore())
            events = [uow.new_event(p, tenant_id=key.tenant_id, world_id=world_id, world_time=state.start_time)
                      for p in decide_delete(state, world_id)]
            await uow.append(world_stream(world_id), events, expected_version=state.version)
        return Response(status_code=204)

    @app.post("/v1/worlds/{world_id}/npcs", status_code=201, response_model=NpcOut, tags=["npcs"])
    async def create_npc(world_id: str, body: NpcIn, key: Writer, request: Request) -> NpcOut:
        npc = NpcCreated(**body.model_dump(exclude={"traits"}), traits=tuple(body.traits))
        async with request.app.state.pool.connection() as conn, conn.transaction():
            state = await GatewayRepository(conn).load_world(key.tenant_id, world_id)
            uow = UnitOfWork(conn, EventStore())
            events = [uow.new_event(p, tenant_id=key.tenant_id, world_id=world_id, world_time=state.start_time,
                                    npc_id=body.npc_id) for p in decide_add_npc(state, world_id, npc)]
            await uow.append(world_stream(world_id), events, expected_version=state.version)
        return NpcOut(**body.model_dump(exclude={"seed"}))

    @app.get("/v1/worlds/{world_id}/npcs", response_model=list[NpcOut], tags=["npcs"])
    async def list_npcs(world_id: str, key: Reader, request: Request) -> list[NpcOut]:
        async with request.app.state.pool.connection() as conn:
            state = await live_world(conn, key.tenant_id, world_id)
        return [NpcOut(**n.model_dump(exclude={"seed"}) | {"traits": list(n.traits)}) for n in state.npcs.values()]

    @app.post("/v1/worlds/{world_id}/npcs/{npc_id}/perceptions", status_code=202, tags=["npcs"])
    async def post_perception(world_id: str, npc_id: str, body: PerceptionIn, key: Writer,
                              request: Request) -> dict[str, str]:
        async with request.app.state.pool.connection() as conn, conn.transaction():
            state = await live_world(conn, key.tenant_id, world_id)
            if npc_id not in state.npcs:
                raise NotFoundError(f"NPC {npc_id!r} not found in world {world_id!r}")
            uow = UnitOfWork(conn, EventStore())
            observation = ObservationMade(**body.model_dump(exclude={"world_time"}), source="studio")
            event = uow.new_event(observation, tenant_id=key.tenant_id, world_id=world_id, npc_id=npc_id,
                                  world_time=body.world_time)
            await uow.append(f"perception-{world_id}-{npc_id}", [event])
        return {"event_id": str(event.event_id)}

    @app.get("/v1/worlds/{world_id}/events", response_model=EventPage, tags=["events"])
    async def list_events(
        world_id: str, key: Reader, request: Request,
        after: Annotated[int, Query(ge=0, description="Return events after this sequence number")] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        type: Annotated[list[str] | None, Query(description="Only these event types")] = None,
        npc_id: Annotated[str | None, Query(max_length=100)] = None,
    ) -> EventPage:
        async with request.app.state.pool.connection() as conn:
            await live_world(conn, key.tenant_id, world_id)
            where = EventFilter(tenant_id=key.tenant_id, world_id=world_id, npc_id=npc_id, types=tuple(type or ()))
            stored = await EventStore().read_all(conn, after, limit, where)
        items = [EventOut(seq=s.seq, stream_id=s.stream_id, event=s.envelope.model_dump(mode="json"))
                 for s in stored]
        return EventPage(items=items, next_after=stored[-1].seq if len(stored) == limit else None)

    @app.post("/v1/worlds/{world_id}/fork", status_code=201, response_model=WorldOut, tags=["worlds"])
    async def fork(world_id: str, body: ForkIn, key: Writer, request: Request) -> WorldOut:
        target = body.new_world_id or new_id()
        async with request.app.state.pool.connection() as conn, conn.transaction():
            await live_world(conn, key.tenant_id, world_id)
            await fork_world(conn, tenant_id=key.tenant_id, source_world_id=world_id, at=body.at,
                             new_world_id=target)
            state = await GatewayRepository(conn).load_world(key.tenant_id, target)
        return _out(target, state)
