"""The world clock driver: one ticker per world_state process advances every running world's clock.

Each tick is one transaction: lock the clock row (SKIP LOCKED, so several world_state replicas never tick
the same world twice), walk NPCs one tile along their routes, apply object states of arrivals, append
``NpcsMoved`` / ``ObjectStateChanged`` / ``WorldTicked`` and fold them into the read model (NPC rows, object
states, the clock) through the projection's appliers, claimed for the world_state consumer (``projection``,
whose name must be that consumer's). A restart resumes from the saved clock. Stepped clocks first wait
until the pipeline has digested the previous step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, EventPayload, NpcsMoved, StepCompleted
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.messaging.reconnect import DEPENDENCY_ERRORS, Backoff
from npcworld.projection import Projection
from npcworld.telemetry import instruments
from services.world_state.domain import is_due, next_tick, step_npcs
from services.world_state.handlers import PROJECTION, ROUTES
from services.world_state.quiescence import PipelineProbe, WorldKey
from services.world_state.repository import WorldRepository
from services.world_state.trees import TreeCache

__all__ = ["Ticker", "clock_stream"]

logger = logging.getLogger(__name__)


def clock_stream(world_id: str) -> str:
    return f"clock-{world_id}"


class Ticker:
    """Advances due clocks until stopped."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        trees: TreeCache,
        probe: PipelineProbe,
        *,
        poll_seconds: float = 0.01,
        stepped_max_wait: float = 600.0,
        projection: Projection = PROJECTION,
    ) -> None:
        self.pool = pool
        self.projection = projection
        self.reactions = frozenset(ROUTES)
        self.trees = trees
        self.probe = probe
        self.poll_seconds = poll_seconds
        self.stepped_max_wait = stepped_max_wait

    async def run(self, stop: asyncio.Event) -> None:
        """Tick until ``stop`` is set. A lost Postgres is waited out with backoff: each tick is one
        transaction, so one cut short rolls back and the clock resumes from what was committed."""
        logger.info("world clock ticker started")
        backoff = Backoff("world clock ticker")
        while not stop.is_set():
            try:
                ticked = await self.run_once()
            except DEPENDENCY_ERRORS as exc:
                await backoff.failed(exc, stop)
                continue
            backoff.succeeded()
            if not ticked:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.poll_seconds)

    async def run_once(self) -> int:
        """Tick every due world once; stepped worlds wait for the pipeline first. Returns worlds ticked."""
        async with self.pool.connection() as conn:
            repo = WorldRepository(conn)
            worlds = [(w, await repo.clock(*w)) for w in await repo.running_clocks()]
        instruments().clocks_running = sum(
            1 for _, c in worlds if c is not None and (c.until is None or c.world_time < c.until)
        )
        stepped = [w for w, c in worlds if c is not None and c.speed is None]
        if stepped:
            await self._wait_for_pipeline(stepped)
            if await self._complete_steps(stepped):
                await self._wait_for_pipeline(stepped)
        count = 0
        for world, _ in worlds:
            count += await self.tick(world, time.time())
        return count

    async def _complete_steps(self, stepped: list[WorldKey]) -> int:
        """Append StepCompleted for each stepped world whose last step left held work; returns how many.

        The memory service holds a stepped world's writes until then (services/memory/holding.py)."""
        count = 0
        for tenant_id, world_id in stepped:
            async with self.pool.connection() as conn, conn.transaction():
                repo = WorldRepository(conn)
                clock = await repo.clock(tenant_id, world_id, lock=True)
                if clock is None or not await repo.has_held_work(tenant_id, world_id):
                    continue
                uow = UnitOfWork(conn, EventStore())
                done = uow.new_event(StepCompleted(step=clock.step), tenant_id=clock.tenant_id,
                                     world_id=world_id, world_time=clock.world_time)
                await uow.append(clock_stream(world_id), [done])
                count += 1
        return count

    async def _wait_for_pipeline(self, stepped: list[WorldKey]) -> None:
        """Wait until the previous step of these worlds is digested (``PipelineProbe``), saying every 30 s who
        is behind; at the cap, go on."""
        waited, names = 0.0, [w for _, w in stepped]
        while waited < self.stepped_max_wait:
            chunk = min(30.0, self.stepped_max_wait - waited)
            if await self.probe.wait_idle(chunk, stepped):
                return
            waited += chunk
            logger.warning("stepped clock of %s waiting %.0fs for the pipeline: %s",
                           names, waited, self.probe.describe())
        logger.error("pipeline still busy after %.0fs; stepping %s anyway (cognition will lag): %s",
                     self.stepped_max_wait, names, self.probe.describe())

    async def tick(self, world: WorldKey, wall_now: float) -> bool:
        """One step of one (tenant, world) if its clock is running and due; False otherwise."""
        tenant_id, world_id = world
        async with self.pool.connection() as conn, conn.transaction():
            repo = WorldRepository(conn)
            clock = await repo.clock(tenant_id, world_id, lock=True)
            if clock is None or not is_due(clock, wall_now):
                return False
            tree = await self.trees.get(repo, tenant_id, world_id)
            npcs = await repo.npc_states(tenant_id, world_id, lock=True) if tree is not None else []
            if clock.focus is not None and tree is None:  # a studio world: where its engine put them
                npcs = await repo.npc_states(tenant_id, world_id)
            advanced, ticked = next_tick(clock, wall_now, {n.npc_id: n.path for n in npcs})
            uow = UnitOfWork(conn, EventStore())

            def event(payload: EventPayload, npc_id: str | None = None) -> Envelope:
                return uow.new_event(
                    payload,
                    tenant_id=clock.tenant_id,
                    world_id=world_id,
                    world_time=advanced.world_time,
                    npc_id=npc_id,
                )

            events: list[Envelope] = []
            if tree is not None:
                result = step_npcs(tree, npcs, advanced.world_time)
                events += [event(NpcsMoved(moves=tuple(result.moves)))] if result.moves else []
                events += [event(change, npc_id) for npc_id, change in result.object_changes]
            events.append(event(ticked))
            await uow.append(clock_stream(world_id), events)
            # The step's state is the fold of its events (npcworld.projection), like every reaction's.
            await self.projection.apply_appended(conn, events, reactions=self.reactions)
        instruments().world_steps.add(1, {"mode": "stepped" if clock.speed is None else "realtime"})
        return True
