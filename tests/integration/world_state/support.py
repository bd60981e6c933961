"""World-state and perception integration helpers: small tiled worlds, the running pipeline, stepping."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import (
    ClockChanged,
    Envelope,
    EventPayload,
    NpcCreated,
    SectorDef,
    TileMap,
    WorldCreated,
    WorldDefined,
)
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.messaging import ConsumerLoop, RetryPolicy
from npcworld.outbox import OutboxRelay
from services.perception import handlers as perception
from services.perception.layouts import LayoutCache
from services.world_state import handlers as world_state
from services.world_state.quiescence import PipelineProbe
from services.world_state.ticker import Ticker
from services.world_state.trees import TreeCache
from services.world_state.validator_client import ValidatorClient
from tests.polling import eventually

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)


def walled_map(width: int, height: int, walls: list[tuple[int, int]]) -> TileMap:
    blocked = set(walls)
    rows = tuple("".join("#" if (x, y) in blocked else "." for x in range(width)) for y in range(height))
    return TileMap(width=width, height=height, rows=rows)


@dataclass
class Pipeline:
    """The relay, world_state and perception consumers (private groups) and a ticker, on one database."""

    pool: AsyncConnectionPool
    tenant_id: str
    world_id: str
    world_state_name: str
    perception_name: str
    ticker: Ticker

    async def append(
        self, stream: str, payloads: list[EventPayload], npc_id: str | None = None
    ) -> list[Envelope]:
        async with self.pool.connection() as conn, conn.transaction():
            uow = UnitOfWork(conn, EventStore())
            events = [
                uow.new_event(
                    p,
                    tenant_id=self.tenant_id,
                    world_id=self.world_id,
                    world_time=T0,
                    npc_id=npc_id if npc_id is not None else getattr(p, "npc_id", None),
                )
                for p in payloads
            ]
            await uow.append(stream, events)
        return events

    async def processed(self, consumer: str, event_id: uuid.UUID) -> bool:
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT 1 FROM processed_events WHERE consumer = %s AND event_id = %s", (consumer, event_id)
            )
            return await cur.fetchone() is not None

    async def digested(self, events: list[Envelope]) -> None:
        """Wait until both consumers have processed every given event."""
        handled = {
            self.world_state_name: {*world_state.ROUTES, *world_state.PROJECTION.appliers},
            self.perception_name: {*perception.ROUTES, *perception.PROJECTION.appliers},
        }

        async def done() -> bool:
            return all(
                [
                    await self.processed(c, e.event_id)
                    for e in events
                    for c, types in handled.items()
                    if e.type in types
                ]
            )

        await eventually(done, bool, timeout=60)

    async def events(self, *types: str, after: int = 0) -> list[Envelope]:
        async with self.pool.connection() as conn:
            stored = await EventStore().read_all(
                conn, after, 10000, EventFilter(world_id=self.world_id, types=types)
            )
        return [s.envelope for s in stored]

    async def last_seq(self) -> int:
        async with self.pool.connection() as conn:
            return await EventStore().last_seq(conn)

    async def step(self) -> Envelope:
        """Advance the clock one step and wait until perception and world_state digested it."""
        assert await self.ticker.tick((self.tenant_id, self.world_id), 0.0)
        ticks = await self.events("WorldTicked")
        await self.digested([ticks[-1]])
        return ticks[-1]

    async def create(self, definition: WorldDefined, npcs: list[NpcCreated]) -> None:
        """A world with its tree, NPCs and a running stepped clock, fully digested."""
        events = await self.append(
            f"world-{self.world_id}", [WorldCreated(name="test world", start_time=T0), definition, *npcs]
        )
        clock = await self.append(
            f"clock-ops-{self.world_id}", [ClockChanged(paused=False, speed=None, step_seconds=10)]
        )
        await self.digested(events + clock)
        await eventually(self._placed(len(npcs)), bool, timeout=60)

    def _placed(self, count: int) -> Any:
        async def probe() -> bool:
            async with self.pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT count(*) FROM pc_npcs WHERE world_id = %s"
                    " AND (tile_x IS NOT NULL OR arena IS NOT NULL)",
                    (self.world_id,),
                )
                row = await cur.fetchone()
            return bool(row and row[0] >= count)

        return probe


def sectors(
    *specs: tuple[str, str, tuple[int, int, int, int] | None, list[tuple[str, tuple[int, int] | None]]],
) -> tuple[SectorDef, ...]:
    """``(sector, arena, area, [(object, tile)])`` rows → sector definitions (one arena each row)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for sector, arena, area, objects in specs:
        grouped.setdefault(sector, []).append(
            {"name": arena, "area": area, "objects": [{"name": n, "tile": t} for n, t in objects]}
        )
    return tuple(SectorDef.model_validate({"name": s, "arenas": a}) for s, a in grouped.items())


@asynccontextmanager
async def running_pipeline(
    pool: AsyncConnectionPool, bootstrap: str, validators: ValidatorClient | None = None
) -> AsyncIterator[Pipeline]:
    """``validators``: world_state calls worlds' validators with it (before its transactions, as deployed)."""
    suffix = uuid.uuid4().hex[:8]
    ws_name, pc_name = f"world_state-{suffix}", f"perception-{suffix}"
    trees = TreeCache()
    ws_projection = replace(world_state.PROJECTION, consumer=ws_name)
    policy = RetryPolicy(handler_attempts=2, base_delay=0.01, max_delay=0.1)
    loops: list[ConsumerLoop[Any]] = [
        ConsumerLoop(
            ws_name,
            world_state.ROUTES,
            world_state.WorldStateDeps(trees, validators),
            pool=pool,
            bootstrap=bootstrap,
            projection=ws_projection,
            policy=policy,
        ),
        ConsumerLoop(
            pc_name,
            perception.ROUTES,
            perception.PerceptionDeps(LayoutCache()),
            pool=pool,
            bootstrap=bootstrap,
            policy=policy,
            projection=replace(perception.PROJECTION, consumer=pc_name),
        ),
    ]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(OutboxRelay(pool, bootstrap).run(stop))]
    tasks += [asyncio.create_task(loop.run(stop)) for loop in loops]
    ticker = Ticker(pool, trees, PipelineProbe(pool), projection=ws_projection)
    try:
        await asyncio.wait_for(asyncio.gather(*(loop.started.wait() for loop in loops)), 60)
        yield Pipeline(pool, f"tenant-{suffix}", f"world-{suffix}", ws_name, pc_name, ticker)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
