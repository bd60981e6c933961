"""End to end on the real broker: observations in the event store reach the memory service's consumer."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import NpcCreated, NpcReplied, ObservationMade
from npcworld.embeddings import PrefetchingEmbedder
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.messaging import ConsumerLoop, RetryPolicy
from npcworld.outbox import OutboxRelay
from services.memory.batching import MemoryConsumerLoop
from services.memory.deps import MemoryDeps
from services.memory.domain import memory_stream_id
from services.memory.handlers import ROUTES
from tests.infra import BrokerForTests
from tests.integration.memory.support import T0, envelope, new_npc
from tests.polling import eventually
from tests.unit.memory.fakes import FakeImportanceRater, HashingEmbedder

pytestmark = pytest.mark.integration


async def test_observation_events_become_memories_once_and_repeats_are_suppressed(
    pool: AsyncConnectionPool, deps: MemoryDeps, broker: BrokerForTests
) -> None:
    npc = new_npc()
    texts = ["the stove is idle", "the stove is idle", "Isabella is planning a party", "the stove is burning"]
    stop = asyncio.Event()
    loop = ConsumerLoop(
        f"memory-{uuid.uuid4().hex[:8]}",
        ROUTES,
        deps,
        pool=pool,
        bootstrap=broker.bootstrap,
        policy=RetryPolicy(handler_attempts=2, base_delay=0.01, max_delay=0.1),
    )
    tasks = [
        asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
        asyncio.create_task(loop.run(stop)),
    ]
    try:
        async with pool.connection() as conn, conn.transaction():
            uow = UnitOfWork(conn, EventStore())
            for minutes, text in enumerate(texts):
                observed = ObservationMade(
                    description=text, subject="stove" if "stove" in text else "Isabella"
                )
                await uow.append(
                    f"perception:{npc.npc_id}", [envelope(observed, npc, T0 + timedelta(minutes=minutes))]
                )

        async def recorded() -> list[str]:
            async with pool.connection() as conn:
                events = await EventStore().read_stream(conn, npc.tenant_id, memory_stream_id(npc))
            return [e.envelope.payload.description for e in events]  # type: ignore[attr-defined]

        got = await eventually(recorded, lambda rows: len(rows) >= 3, timeout=60)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    assert got == ["the stove is idle", "Isabella is planning a party", "the stove is burning"]


@contextlib.asynccontextmanager
async def batching_memory_consumer(
    pool: AsyncConnectionPool, bootstrap: str
) -> AsyncIterator[HashingEmbedder]:
    """The relay and a MemoryConsumerLoop on a counting embedder, started; yields the embedder."""
    inner = HashingEmbedder(16)
    deps = MemoryDeps(embedder=PrefetchingEmbedder(inner), rater=FakeImportanceRater())
    stop = asyncio.Event()
    loop = MemoryConsumerLoop(f"memory-{uuid.uuid4().hex[:8]}", ROUTES, deps, pool=pool,
                              bootstrap=bootstrap)
    tasks = [asyncio.create_task(OutboxRelay(pool, bootstrap).run(stop)), asyncio.create_task(loop.run(stop))]
    try:
        await asyncio.wait_for(loop.started.wait(), 60)
        yield inner
    finally:
        stop.set()
        await asyncio.gather(*tasks)


async def test_the_memory_consumer_embeds_a_polls_observations_in_one_model_call(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    npc = new_npc()
    texts = [f"Klaus is reading page {i} of his book" for i in range(30)]
    async with batching_memory_consumer(pool, broker.bootstrap) as inner:
        async with pool.connection() as conn, conn.transaction():
            seen = [envelope(ObservationMade(description=t), npc, T0 + timedelta(minutes=i))
                    for i, t in enumerate(texts)]
            await UnitOfWork(conn, EventStore()).append(f"perception:{npc.npc_id}", seen)

        async def stored() -> int:
            async with pool.connection() as conn:
                cur = await conn.execute("SELECT count(*) FROM memories AS m JOIN memory_npcs AS n"
                                         " USING (npc_key) WHERE n.npc_id = %s", (npc.npc_id,))
                row = await cur.fetchone()
            return int(row[0]) if row else 0

        await eventually(stored, lambda n: n == len(texts), timeout=60)
    # Other tests' events share the topics, so a poll may hold more; never one model call per event.
    assert inner.calls < len(texts) // 3


async def test_a_polls_chat_replies_are_embedded_at_once_and_quote_the_npcs_name(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    npc = new_npc()

    async def texts() -> list[str]:
        async with pool.connection() as conn:
            cur = await conn.execute("SELECT m.description FROM memories AS m JOIN memory_npcs AS n"
                                     " USING (npc_key) WHERE n.npc_id = %s", (npc.npc_id,))
            return [r[0] for r in await cur.fetchall()]

    async with batching_memory_consumer(pool, broker.bootstrap) as inner:
        created = NpcCreated(npc_id=npc.npc_id, name="Isabella", seed="Isabella runs the cafe")
        async with pool.connection() as conn, conn.transaction():
            await UnitOfWork(conn, EventStore()).append(f"npc:{npc.npc_id}", [envelope(created, npc, T0)])
        await eventually(texts, lambda t: len(t) == 1, timeout=60)
        before = inner.calls
        replies = [
            envelope(NpcReplied(player_id="p1", text=f"Hello there {i}", in_reply_to=f"r{i}",
                                provider="offline", heard=f"Hi Isabella {i}"), npc, T0 + timedelta(minutes=i))
            for i in range(15)
        ]
        async with pool.connection() as conn, conn.transaction():
            await UnitOfWork(conn, EventStore()).append(f"chat:{npc.npc_id}", replies)
        stored = await eventually(texts, lambda t: len(t) == 31, timeout=60)
    assert 'Isabella replied to a player (p1): "Hello there 0"' in stored
    assert 'A player (p1) said to Isabella: "Hi Isabella 0"' in stored
    assert inner.calls - before < 5, "a poll's replies are embedded together, before its transaction"
