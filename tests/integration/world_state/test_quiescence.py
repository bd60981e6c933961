"""A stepped clock waits until every live consumer has digested the last step, retry backoff included."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from launcher.embedded.rotation import consumers_not_parked
from npcworld.contracts import Envelope, ObservationMade
from npcworld.errors import TransientError
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.messaging import ConsumerLoop, Heartbeat, RetryPolicy, Routes, on
from npcworld.outbox import OutboxRelay
from services.world_state.quiescence import PipelineProbe
from tests.infra import BrokerForTests
from tests.integration.world_state.support import T0

pytestmark = pytest.mark.integration


async def _post(pool: AsyncConnectionPool, world: str) -> Envelope:
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        event = uow.new_event(
            ObservationMade(description="the stove is burning", source="studio"),
            tenant_id="t",
            world_id=world,
            world_time=T0,
            npc_id="ada",
        )
        await uow.append(f"perceptions-{world}-ada", [event])
    return event


async def test_clock_waits_for_a_consumer_in_retry_backoff(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    """The consumer holds no transaction while it backs off, yet it still owes the event: not idle."""
    name, world = f"slow-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:8]}"
    failures_left = 6

    async def flaky(event: Envelope[ObservationMade], uow: UnitOfWork, deps: Any) -> None:
        nonlocal failures_left
        if failures_left:
            failures_left -= 1
            raise TransientError("memory service answered 503")

    loop = ConsumerLoop(
        name,
        Routes(on(ObservationMade, flaky)),
        None,
        pool=pool,
        bootstrap=broker.bootstrap,
        policy=RetryPolicy(base_delay=0.2, max_delay=0.4),
    )
    stop = asyncio.Event()
    tasks = [
        asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
        asyncio.create_task(loop.run(stop)),
    ]
    probe = PipelineProbe(pool)
    try:
        await asyncio.wait_for(loop.started.wait(), 60)
        assert await probe.wait_idle(30)
        event = await _post(pool, world)

        assert not await probe.wait_idle(0.5)  # the handler is failing and backing off in between
        assert probe.last is not None and name in probe.last.behind
        assert "events owed by" in probe.describe() and name in probe.describe()

        assert await probe.wait_idle(60)  # the retries succeed: now everything is digested
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT 1 FROM processed_events WHERE consumer = %s AND event_id = %s", (name, event.event_id)
            )
            assert await cur.fetchone() is not None
        assert failures_left == 0
    finally:
        stop.set()
        await asyncio.gather(*tasks)


async def test_dead_consumers_are_not_waited_for_and_dead_letters_count_as_digested(
    pool: AsyncConnectionPool,
) -> None:
    live, gone = f"live-{uuid.uuid4().hex[:8]}", f"gone-{uuid.uuid4().hex[:8]}"
    probe = PipelineProbe(pool)
    assert await probe.wait_idle(5)
    await Heartbeat(pool, gone, ["ObservationMade"]).beat()
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE consumer_heartbeats SET seen_at = now() - interval '1 hour' WHERE consumer = %s", (gone,)
        )
    heartbeat = Heartbeat(pool, live, ["ObservationMade"])
    await heartbeat.beat()
    event = await _post(pool, "w")
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM outbox")  # as if the relay had published it

    state = await probe.snapshot()
    assert not state.idle and state.behind == (live,) and state.owed == 1

    async with pool.connection() as conn:
        await conn.execute(
            'INSERT INTO dead_letters'
            ' (consumer, topic, partition, "offset", event_id, event_type, reason, value) VALUES'
            " (%s, 'npcworld.perception.v1', 0, 0, %s, 'ObservationMade', 'poison', '')",
            (live, event.event_id),
        )
    assert (await probe.snapshot()).idle
    await heartbeat.stop()  # withdrawn: no longer waited for


async def test_a_service_with_two_instances_is_waited_for_until_its_last_instance_stops(
    pool: AsyncConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Instances beat on rows of their own: one stopping cleanly (or parking for a broker rotation) does not
    make the service look gone or parked while the other still consumes, and its work is counted once."""
    name = f"twice-{uuid.uuid4().hex[:8]}"
    probe = PipelineProbe(pool)
    assert await probe.wait_idle(5)
    monkeypatch.setenv("KAFKA_GROUP_INSTANCE_ID", "run")
    first = Heartbeat(pool, name, ["ObservationMade"])
    monkeypatch.setenv("KAFKA_GROUP_INSTANCE_ID", "run-2")
    second = Heartbeat(pool, name, ["ObservationMade"])
    await first.beat()
    await second.beat()
    await _post(pool, f"w-{uuid.uuid4().hex[:8]}")
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM outbox")  # as if the relay had published it

    state = await probe.snapshot()
    assert state.behind == (name,) and state.owed == 1  # once, not once per instance
    await first.park(asyncio.Event())
    assert name in await consumers_not_parked(pool, first.current)  # the other instance still consumes
    await first.stop()
    assert (await probe.snapshot()).behind == (name,)  # still owed: the other instance lives
    await second.stop()
    assert (await probe.snapshot()).idle


async def test_a_pending_reflection_run_keeps_the_pipeline_busy(pool: AsyncConnectionPool) -> None:
    probe = PipelineProbe(pool)
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO reflection_npcs (tenant_id, world_id, npc_id, pending_run, pending_since)"
            " VALUES ('t', 'w', 'ada', 1, now())"
        )
    state = await probe.snapshot()
    assert not state.idle and state.held_for_jobs == 1
    async with pool.connection() as conn:
        await conn.execute("UPDATE reflection_npcs SET pending_run = NULL WHERE npc_id = 'ada'")
    assert (await probe.snapshot()).idle


async def _react(pool: AsyncConnectionPool, cause: Envelope) -> Envelope:
    """A reaction to ``cause``, stored as a handler would (same correlation)."""
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore(), cause=cause)
        event = uow.new_event(ObservationMade(description="smoke rises", source="studio"), tenant_id="t",
                              world_id=cause.world_id, world_time=T0, npc_id="ada")
        await uow.append(f"perceptions-{cause.world_id}-ada", [event])
    return event


async def _claim(pool: AsyncConnectionPool, consumer: str, *events: Envelope) -> None:
    async with pool.connection() as conn:
        for event in events:
            await conn.execute("INSERT INTO processed_events (consumer, event_id) VALUES (%s, %s)",
                               (consumer, event.event_id))


async def test_a_wait_covers_its_worlds_and_what_was_stored_before_it_and_caused_by_that(
    pool: AsyncConnectionPool,
) -> None:
    """Traffic that starts after the wait began, or in another world, never holds a stepped clock back."""
    name, mine, other = f"c-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:8]}"
    heartbeat = Heartbeat(pool, name, ["ObservationMade"])
    await heartbeat.beat()
    try:
        step = await _post(pool, mine)
        busy_next_door = await _post(pool, other)  # never processed
        probe = PipelineProbe(pool)
        begun = await probe.snapshot([("t", mine)])  # the wait begins: its bound is fixed here
        assert not begun.idle and begun.owed == 1
        later = await _post(pool, mine)  # a player's request after the wait began: a chain of its own
        await _claim(pool, name, step)
        reaction = await _react(pool, step)  # ...but the step's own cascade is waited for
        state = await probe.snapshot([("t", mine)], bound=begun.max_seq)
        assert not state.idle and state.owed == 1
        await _claim(pool, name, reaction)
        async with pool.connection() as conn:
            await conn.execute("DELETE FROM outbox")  # as if the relay had published them
        assert (await probe.snapshot([("t", mine)], bound=begun.max_seq)).idle
        assert not (await probe.snapshot(None)).idle  # everywhere: the other world and the later one are owed
        await _claim(pool, name, later, busy_next_door)
    finally:
        await heartbeat.stop()
