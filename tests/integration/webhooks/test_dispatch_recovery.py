"""The dispatcher never passes a sequence number that commits late, and a delivery claimed by a process
that died is sent again once its lease lapses (deliveries are rows, so a crash loses nothing)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import ObservationMade
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from services.gateway.repository import EventReader
from services.webhooks.consumer import serve
from services.webhooks.repository import DispatchRepository
from services.webhooks.settings import Settings
from tests.e2e.receiver import Receiver
from tests.infra import BrokerForTests
from tests.integration.webhooks.subscribing import subscribe, unsubscribe
from tests.polling import eventually

T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    server = Receiver(fail_first=0).start()
    yield server
    server.stop()


async def _append(uow: UnitOfWork, tenant: str, world: str, text: str, npc: str = "marta") -> str:
    event = uow.new_event(
        ObservationMade(description=text, source="studio"),
        tenant_id=tenant,
        world_id=world,
        npc_id=npc,
        world_time=T0,
    )
    await uow.append(f"perception-{world}-{npc}", [event])
    return str(event.event_id)


async def _drain(pool: AsyncConnectionPool) -> int:
    passed = 0
    while True:
        async with pool.connection() as conn, conn.transaction():
            step = await DispatchRepository(conn).fan_out(1000)
        passed += step
        if step == 0:
            return passed


async def test_a_sequence_number_committed_late_is_neither_skipped_by_fan_out_nor_by_stream_reads(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = f"t-{uuid.uuid4().hex[:6]}", f"w-{uuid.uuid4().hex[:6]}"
    hook = await subscribe(pool, tenant, world, "http://127.0.0.1:9/x")
    await _drain(pool)
    async with pool.connection() as slow, pool.connection() as fast:
        early = await _append(UnitOfWork(slow, EventStore()), tenant, world, "takes seq n, commits last")
        async with fast.transaction():
            late = await _append(
                UnitOfWork(fast, EventStore()), tenant, world, "takes seq n+1, commits first", npc="tobias"
            )
        assert await _drain(pool) == 0  # n+1 is committed but n may still come: wait
        async with pool.connection() as conn:
            where = EventFilter(tenant_id=tenant, world_id=world, types=("ObservationMade",))
            assert await EventReader(conn).settled_after(where, 0, 100) == []
        await slow.commit()
    assert await _drain(pool) == 2
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_id::text FROM wh_deliveries WHERE world_id = %s ORDER BY seq", (world,)
        )
        assert [r[0] for r in await cur.fetchall()] == [early, late]
        streamed = await EventReader(conn).settled_after(
            EventFilter(tenant_id=tenant, world_id=world, types=("ObservationMade",)), 0, 100
        )
    assert [str(s.envelope.event_id) for s in streamed] == [early, late]
    await unsubscribe(pool, tenant, world, hook)  # nothing of this test left for the next one to send
    await _drain(pool)


async def test_a_delivery_claimed_by_a_dispatcher_that_died_is_sent_after_its_lease_lapses(
    pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests, receiver: Receiver
) -> None:
    tenant, world = f"t-{uuid.uuid4().hex[:6]}", f"w-{uuid.uuid4().hex[:6]}"
    await subscribe(pool, tenant, world, f"{receiver.url}/ok", ("ObservationMade",))
    async with pool.connection() as conn, conn.transaction():
        event_id = await _append(UnitOfWork(conn, EventStore()), tenant, world, "the mill caught fire")
    await _drain(pool)
    async with pool.connection() as conn:
        [claimed] = await DispatchRepository(conn).claim_due(10, lease_seconds=0.5)
        assert await DispatchRepository(conn).claim_due(10, lease_seconds=0.5) == []  # leased
    # ... and the process that claimed it dies here, before sending or recording anything.

    stop = asyncio.Event()
    settings = Settings(
        database_url=database_url, kafka_bootstrap_servers=broker.bootstrap, webhook_poll_seconds=0.05
    )
    task = asyncio.create_task(serve(settings, stop))
    try:
        acked = await eventually(lambda: _acked(receiver), lambda got: len(got) == 1, timeout=30)
    finally:
        stop.set()
        await task
    assert acked[0].json["event_id"] == event_id
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT status, attempts FROM wh_deliveries WHERE delivery_id = %s", (claimed.delivery_id,)
        )
        assert await cur.fetchone() == ("delivered", 2)


async def _acked(receiver: Receiver) -> list:  # type: ignore[type-arg]
    return receiver.acked()
