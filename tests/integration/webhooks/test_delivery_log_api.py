"""The webhooks service's internal API serves a subscription's delivery log to the gateway's client: only
with the service credential when one is set, only for the tenant, world and subscription named, and a
redelivery waits until the dispatcher has folded every event stored before it (and is not waited for
until then), while a retry's time is waited for."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import httpx
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import ObservationMade, WebhookChanged
from npcworld.delivery_log import HttpDeliveryLog
from npcworld.errors import NotFoundError
from npcworld.eventstore import EventStore, UnitOfWork
from services.webhooks.api import create_app
from services.webhooks.repository import DispatchRepository
from tests.integration.webhooks.subscribing import announce, subscribe

T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)
TOKEN = "s3rvice-token-for-tests"


async def _drain(pool: AsyncConnectionPool) -> None:
    while True:
        async with pool.connection() as conn, conn.transaction():
            if await DispatchRepository(conn).fan_out(1000) == 0:
                return


async def test_the_log_is_the_named_subscriptions_and_a_redelivery_waits_for_the_fold(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = f"t-{uuid.uuid4().hex[:6]}", f"w-{uuid.uuid4().hex[:6]}"
    await _drain(pool)
    hook = await subscribe(pool, tenant, world, "http://127.0.0.1:9/x")
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        event = uow.new_event(ObservationMade(description="a bell", source="studio"), tenant_id=tenant,
                              world_id=world, npc_id="marta", world_time=T0)
        await uow.append(f"perception-{world}-marta", [event])
    await _drain(pool)

    app = create_app(pool, token=TOKEN)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://webhooks") as anonymous:
        r = await anonymous.get("/internal/v1/deliveries", params={"tenant_id": tenant, "world_id": world,
                                                                   "webhook_id": hook.webhook_id})
        assert r.status_code == 401
    client = httpx.AsyncClient(transport=transport, base_url="http://webhooks",
                               headers={"Authorization": f"Bearer {TOKEN}"})
    log = HttpDeliveryLog("http://webhooks", client=client)
    try:
        mine = (tenant, world, hook.webhook_id)
        [delivery] = await log.deliveries(mine, None, 0, 10)
        assert delivery.event_id == event.event_id and delivery.status == "pending"
        assert await log.deliveries(("other", world, hook.webhook_id), None, 0, 10) == []
        with pytest.raises(NotFoundError):
            await log.delivery(("other", world, hook.webhook_id), delivery.delivery_id)
        with pytest.raises(NotFoundError):
            await log.redeliver((tenant, world, "wh-other"), delivery.delivery_id)

        async with pool.connection() as conn:  # sent once and failed, say
            await conn.execute(
                "UPDATE wh_deliveries SET status = 'failed', attempts = 8 WHERE delivery_id = %s",
                (delivery.delivery_id,),
            )
        moved = hook.model_copy(update={"url": "http://127.0.0.1:9/moved"})
        await announce(pool, tenant, world, hook.webhook_id, WebhookChanged(subscription=moved))
        again = await log.redeliver(mine, delivery.delivery_id)
        assert (again.status, again.attempts) == ("pending", 0)
        async with pool.connection() as conn:
            assert await DispatchRepository(conn).claim_due(10, 30.0) == []  # the change is not folded yet
            assert await DispatchRepository(conn).seconds_to_next_due() is None  # nor waited for
        await _drain(pool)
        async with pool.connection() as conn:
            assert await DispatchRepository(conn).seconds_to_next_due() == 0.0
            [claimed] = await DispatchRepository(conn).claim_due(10, 30.0)
            lease = await DispatchRepository(conn).seconds_to_next_due()  # due again when the lease lapses
            assert lease is not None and 20.0 < lease <= 30.0
        assert claimed.delivery_id == delivery.delivery_id and claimed.url == moved.url
        detail = await log.delivery(mine, delivery.delivery_id)
        assert detail.delivery.attempts == 1 and detail.attempts == ()
    finally:
        await log.aclose()
        await client.aclose()
