"""The relay reports the oldest unpublished event's age (gauge npcworld.outbox.oldest_unpublished_age)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, ObservationMade
from npcworld.eventstore import EventStore
from npcworld.outbox import OutboxRelay
from npcworld.telemetry import instruments
from tests.infra import BrokerForTests
from tests.polling import eventually

pytestmark = pytest.mark.integration


async def _append_one(pool: AsyncConnectionPool) -> Envelope:
    event = Envelope.new(ObservationMade(description="the lantern flickers", subject="lantern"),
                         tenant_id=f"t-{uuid.uuid4().hex[:8]}", world_id=f"w-{uuid.uuid4().hex[:8]}",
                         world_time=datetime(2023, 2, 13, 8, tzinfo=UTC), npc_id="ada")
    async with pool.connection() as conn, conn.transaction():
        await EventStore().append(conn, f"perception:{event.event_id}", [event])
    return event


async def _outbox_size(pool: AsyncConnectionPool) -> int:
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT count(*) FROM outbox")).fetchone()
    return int(row[0]) if row else 0


async def test_the_relay_reports_how_long_the_oldest_event_has_waited_to_be_published(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    relay = OutboxRelay(pool, broker.bootstrap, age_every=0.05)
    await _append_one(pool)  # no relay running yet: the event waits
    await asyncio.sleep(0.05)
    assert await relay.measure_age() >= 0.05
    assert instruments().outbox_oldest_age == relay.oldest_unpublished_age

    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    try:
        await asyncio.wait_for(relay.ready.wait(), 60)
        await eventually(lambda: _outbox_size(pool), lambda n: n == 0)

        async def age() -> float:
            return relay.oldest_unpublished_age

        await eventually(age, lambda seconds: seconds == 0)
    finally:
        stop.set()
        await task
