"""Subscribing as the gateway does, without it: a WebhookRegistered (or WebhookDeleted) event of the world
and the signing secret kept apart from the log."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import EventPayload, WebhookDeleted, WebhookRegistered, WebhookSubscription
from npcworld.egress import new_secret, store_secret
from npcworld.eventstore import EventStore, UnitOfWork

__all__ = ["announce", "subscribe", "unsubscribe"]

T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)


async def announce(pool: AsyncConnectionPool, tenant: str, world: str, webhook_id: str,
                   change: EventPayload) -> int:
    """Append ``change`` to the subscription's stream; its store sequence number."""
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        event = uow.new_event(change, tenant_id=tenant, world_id=world, world_time=T0)
        [seq] = await uow.append(f"webhook-{webhook_id}", [event])
    return seq


async def subscribe(pool: AsyncConnectionPool, tenant: str, world: str, url: str,
                    event_types: tuple[str, ...] = ()) -> WebhookSubscription:
    """A new subscription of the world's events stored after it."""
    sub = WebhookSubscription(webhook_id=f"wh-{uuid.uuid4().hex}", url=url, event_types=event_types)
    async with pool.connection() as conn, conn.transaction():
        await store_secret(conn, tenant, sub.webhook_id, new_secret("whsec"))
    await announce(pool, tenant, world, sub.webhook_id, WebhookRegistered(subscription=sub))
    return sub


async def unsubscribe(pool: AsyncConnectionPool, tenant: str, world: str, sub: WebhookSubscription) -> None:
    await announce(pool, tenant, world, sub.webhook_id, WebhookDeleted(webhook_id=sub.webhook_id))
