"""The whole path on the real broker: observations → memory service → reflection consumer → Celery worker on
Redis → ReflectionCompleted → reflection memories in the memory service and the accumulator reset."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

from celery.contrib.testing.worker import start_worker
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, ObservationMade
from npcworld.errors import NotFoundError
from npcworld.eventstore import EventFilter, EventStore
from npcworld.memory_client import MemoryView
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.messaging import ConsumerLoop, RetryPolicy
from npcworld.outbox import OutboxRelay
from services.memory.domain import NpcRef
from services.reflection.celery_app import CeleryJobQueue, create_celery
from services.reflection.deps import ConsumerDeps
from services.reflection.handlers import ROUTES
from services.reflection.settings import ReflectionSettings
from services.reflection.tasks import register_tasks
from tests.infra import BrokerForTests
from tests.integration.memory.support import new_npc
from tests.integration.reflection.support import DAY, REDIS_URL, T0, accumulator, recording_runtime
from tests.polling import eventually


async def test_observations_become_one_reflection_stored_as_reflection_memories(
    pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests, memory_url: str,
    reader: HttpMemoryReader,
) -> None:
    # The offline importance of this day sums to less than 150; a lower threshold keeps the test short.
    queue = f"reflection-{uuid.uuid4().hex[:10]}"
    settings = ReflectionSettings(reflection_threshold=40, reflection_queue=queue,
                                  reflection_worker_pool="solo")
    app = create_celery(settings, REDIS_URL)
    runtime = recording_runtime(database_url, memory_url)
    register_tasks(app, runtime, retries=0)
    deps = ConsumerDeps(queue=CeleryJobQueue(app, settings.reflection_queue), settings=settings)
    loop = ConsumerLoop(f"reflection-{uuid.uuid4().hex[:8]}", ROUTES, deps, pool=pool,
                        bootstrap=broker.bootstrap, policy=RetryPolicy(base_delay=0.01, max_delay=0.1))
    stop = asyncio.Event()
    relay = OutboxRelay(pool, broker.bootstrap)
    tasks = [asyncio.create_task(relay.run(stop)), asyncio.create_task(loop.run(stop))]
    npc = new_npc()
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING",
                          shutdown_timeout=30):
            await eventually(lambda: _started(loop), bool, timeout=60)
            await _observe(pool, npc.tenant_id, npc.world_id, npc.npc_id)
            reflections = await eventually(lambda: _reflections(reader, npc), bool, timeout=90)
            await eventually(lambda: accumulator(pool, npc), lambda acc: acc[2] is None, timeout=60)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        await asyncio.to_thread(runtime.close)

    async with pool.connection() as conn:
        events = await EventStore().read_all(conn, where=EventFilter(
            tenant_id=npc.tenant_id, types=("ReflectionTriggered", "ReflectionCompleted")))
    types = [e.envelope.type for e in events]
    assert types.count("ReflectionCompleted") == 1 and types[0] == "ReflectionTriggered"
    observations = {m.memory_id for m in await reader.recent(npc.tenant_id, npc.world_id, npc.npc_id,
                                                              kinds=("observation",))}
    assert all(r.evidence and set(r.evidence) <= observations and r.depth == 1 for r in reflections)
    assert (await accumulator(pool, npc))[1] == 1


async def _reflections(reader: HttpMemoryReader, npc: NpcRef) -> list[MemoryView]:
    try:
        return await reader.recent(npc.tenant_id, npc.world_id, npc.npc_id, kinds=("reflection",))
    except NotFoundError:  # the memory service has not seen the NPC yet
        return []


async def _started(loop: ConsumerLoop[ConsumerDeps]) -> bool:
    return loop.started.is_set()


async def _observe(pool: AsyncConnectionPool, tenant_id: str, world_id: str, npc_id: str) -> None:
    events = [Envelope.new(ObservationMade(description=text), tenant_id=tenant_id, world_id=world_id,
                           world_time=T0 + timedelta(minutes=i), npc_id=npc_id) for i, text in enumerate(DAY)]
    async with pool.connection() as conn, conn.transaction():
        await EventStore().append(conn, f"perception:{tenant_id}:{world_id}:{npc_id}", events)
