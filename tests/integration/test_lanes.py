"""Player traffic never holds a world back: a consumer with a backlog of posted perceptions handles the
world's next event before working the backlog off, and a stepped clock's wait leaves player traffic out."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, ObservationMade
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.messaging import ConsumerLoop, Routes, on
from npcworld.outbox import OutboxRelay
from services.world_state.quiescence import PipelineProbe
from tests.infra import BrokerForTests
from tests.integration.world_state.support import T0

pytestmark = pytest.mark.integration

BACKLOG = 30
HANDLE_S = 0.1  # each posted perception keeps the consumer this long


async def _store(pool: AsyncConnectionPool, world: str, sources: list[str]) -> list[Envelope]:
    """One ObservationMade per source, all for one NPC (one partition), in one transaction."""
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        events = [
            uow.new_event(ObservationMade(description=f"sight {i}", source=source), tenant_id="t",
                          world_id=world, world_time=T0, npc_id="ada")
            for i, source in enumerate(sources)
        ]
        await uow.append(f"perceptions-{world}-ada", events)
    return events


async def test_the_worlds_event_overtakes_a_backlog_of_posted_perceptions(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    name, world = f"lanes-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:8]}"
    handled: list[str] = []

    async def handle(event: Envelope[ObservationMade], uow: UnitOfWork, deps: Any) -> None:
        if event.world_id != world:
            return  # another test's, still in the topic this new consumer reads from the start
        if event.payload.source == "studio":
            await asyncio.sleep(HANDLE_S)
        handled.append(event.payload.source)

    loop = ConsumerLoop(name, Routes(on(ObservationMade, handle)), None, pool=pool,
                        bootstrap=broker.bootstrap)
    stop = asyncio.Event()
    tasks = [asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
             asyncio.create_task(loop.run(stop))]
    try:
        await asyncio.wait_for(loop.started.wait(), 60)
        # Posted perceptions first, then (behind them in the same partition) the world's own observation.
        *posted, seen = await _store(pool, world, ["studio"] * BACKLOG + ["perception"])
        clock_wait = PipelineProbe(pool, players=False)
        assert await clock_wait.wait_idle(BACKLOG * HANDLE_S)  # does not wait for the whole backlog
        assert handled.count("perception") == 1
        assert handled.count("studio") < BACKLOG // 2  # most of the backlog was still waiting
        assert not (await PipelineProbe(pool).snapshot([("t", world)])).idle  # ...and owed

        assert await PipelineProbe(pool).wait_idle(60)  # then worked off: each handled once
        assert handled.count("studio") == BACKLOG and handled.count("perception") == 1
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM processed_events WHERE consumer = %s AND event_id = ANY(%s::uuid[])",
                (name, [e.event_id for e in [*posted, seen]]),
            )
            assert (await cur.fetchone()) == (BACKLOG + 1,)
    finally:
        stop.set()
        await asyncio.gather(*tasks)


async def test_with_ingest_beside_the_worlds_event_is_handled_while_an_ingest_batch_still_waits(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    """Planning's case: an ingest batch waits on another service (here: until released); the world's next
    event does not wait for it, and both are claimed once."""
    name, world = f"lanes-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:8]}"
    handled: list[str] = []
    waiting, release = asyncio.Event(), asyncio.Event()

    async def handle(event: Envelope[ObservationMade], uow: UnitOfWork, deps: Any) -> None:
        if event.world_id != world:
            return
        if event.payload.source == "studio":
            waiting.set()
            await release.wait()
        handled.append(event.payload.source)

    loop = ConsumerLoop(name, Routes(on(ObservationMade, handle)), None, pool=pool,
                        bootstrap=broker.bootstrap,
                        beside=("ingest",))
    stop = asyncio.Event()
    tasks = [asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
             asyncio.create_task(loop.run(stop))]
    try:
        await asyncio.wait_for(loop.started.wait(), 60)
        (posted,) = await _store(pool, world, ["studio"])
        await asyncio.wait_for(waiting.wait(), 30)
        (seen,) = await _store(pool, world, ["perception"])
        async with asyncio.timeout(30):
            while "perception" not in handled:
                await asyncio.sleep(0.05)
        assert handled == ["perception"]  # the ingest batch is still waiting
        release.set()
        assert await PipelineProbe(pool).wait_idle(30)
        assert sorted(handled) == ["perception", "studio"]
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM processed_events WHERE consumer = %s AND event_id = ANY(%s::uuid[])",
                (name, [posted.event_id, seen.event_id]),
            )
            assert (await cur.fetchone()) == (2,)
    finally:
        release.set()
        stop.set()
        await asyncio.gather(*tasks)
