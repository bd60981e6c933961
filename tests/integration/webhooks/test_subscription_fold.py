"""The dispatcher's subscriptions are a fold of the gateway's webhook events: a registration or change
applies to exactly the events stored after it, a deletion fails what is pending, a fork's copy registers
nothing, and a rebuild from the claimed events gives the same rows."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import ObservationMade, WebhookChanged, WebhookRegistered, WebhookSubscription
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.projection import differences
from services.webhooks.repository import DispatchRepository
from services.webhooks.subscriptions import PROJECTION
from tests.integration.webhooks.subscribing import announce, subscribe, unsubscribe

T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)


async def _perceive(pool: AsyncConnectionPool, tenant: str, world: str, text: str) -> str:
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        event = uow.new_event(ObservationMade(description=text, source="studio"), tenant_id=tenant,
                              world_id=world, npc_id="marta", world_time=T0)
        await uow.append(f"perception-{world}-marta", [event])
    return str(event.event_id)


async def _drain(pool: AsyncConnectionPool) -> None:
    while True:
        async with pool.connection() as conn, conn.transaction():
            if await DispatchRepository(conn).fan_out(1000) == 0:
                return


async def _deliveries(pool: AsyncConnectionPool, webhook_id: str) -> list[tuple[str, str]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_id::text, status FROM wh_deliveries WHERE webhook_id = %s ORDER BY seq",
            (webhook_id,),
        )
        return [(r[0], r[1]) for r in await cur.fetchall()]


async def _subscribed(pool: AsyncConnectionPool, webhook_id: str) -> bool:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT 1 FROM wh_subscriptions WHERE webhook_id = %s", (webhook_id,))
        return await cur.fetchone() is not None


async def test_registrations_and_changes_apply_from_where_they_stand_in_the_store(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = f"t-{uuid.uuid4().hex[:6]}", f"w-{uuid.uuid4().hex[:6]}"
    await _drain(pool)
    before = await _perceive(pool, tenant, world, "before the subscription")
    hook = await subscribe(pool, tenant, world, "http://127.0.0.1:9/x", ("ObservationMade",))
    first = await _perceive(pool, tenant, world, "after it")
    paused = hook.model_copy(update={"active": False})
    await announce(pool, tenant, world, hook.webhook_id, WebhookChanged(subscription=paused))
    await _perceive(pool, tenant, world, "while paused")
    await announce(pool, tenant, world, hook.webhook_id, WebhookChanged(subscription=hook))
    second = await _perceive(pool, tenant, world, "active again")
    await _drain(pool)  # all of it in one fan-out: each change still applies from its own place on

    assert before not in dict(await _deliveries(pool, hook.webhook_id))
    assert await _deliveries(pool, hook.webhook_id) == [(first, "pending"), (second, "pending")]
    assert await differences(pool, PROJECTION) == []  # a rebuild gives the live rows

    await unsubscribe(pool, tenant, world, hook)
    await _perceive(pool, tenant, world, "after the deletion")
    await _drain(pool)
    assert await _deliveries(pool, hook.webhook_id) == [(first, "failed"), (second, "failed")]
    assert not await _subscribed(pool, hook.webhook_id)
    assert await differences(pool, PROJECTION) == []


async def test_a_forks_copy_of_a_registration_subscribes_nothing(pool: AsyncConnectionPool) -> None:
    tenant, world = f"t-{uuid.uuid4().hex[:6]}", f"w-{uuid.uuid4().hex[:6]}"
    sub = WebhookSubscription(webhook_id=f"wh-{uuid.uuid4().hex}", url="http://127.0.0.1:9/x")
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        copy = uow.new_event(WebhookRegistered(subscription=sub), tenant_id=tenant, world_id=world,
                             world_time=T0).model_copy(update={"forked_from": uuid.uuid4()})
        await uow.append(f"webhook-{sub.webhook_id}", [copy])
    await _perceive(pool, tenant, world, "in the fork")
    await _drain(pool)
    assert await _deliveries(pool, sub.webhook_id) == []
    assert not await _subscribed(pool, sub.webhook_id)
