"""The webhooks service's subscriptions (``wh_subscriptions``): a fold of the gateway's webhook events.

The dispatcher folds each ``WebhookRegistered`` / ``WebhookChanged`` / ``WebhookDeleted`` as its fan-out
passes it in store order, so a registration or change applies to exactly the events stored after it, and
``npcworld.projection.rebuild(pool, PROJECTION)`` rebuilds the same rows from the events it has claimed.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import Envelope, WebhookChanged, WebhookDeleted, WebhookRegistered
from npcworld.projection import Appliers, Projection, applier

__all__ = ["CONSUMER", "PROJECTION"]

CONSUMER = "webhooks"


async def _registered(event: Envelope[WebhookRegistered], conn: AsyncConnection[Any]) -> None:
    # A fork's copy registers nothing: a forked world starts without subscriptions (the original's secret
    # and receiver are the original world's).
    payload = event.payload
    if event.forked_from is not None:
        return
    sub = payload.subscription
    # From the event's own place in the store (fixed once stored, so a rebuild finds the same number).
    await conn.execute(
        "INSERT INTO wh_subscriptions (webhook_id, tenant_id, world_id, url, event_types, active, from_seq)"
        " VALUES (%s, %s, %s, %s, %s, %s, coalesce(%s, (SELECT seq FROM events WHERE event_id = %s)))"
        " ON CONFLICT (webhook_id) DO NOTHING",
        (sub.webhook_id, event.tenant_id, event.world_id, sub.url, list(sub.event_types), sub.active,
         payload.after_seq, event.event_id),
    )


async def _changed(event: Envelope[WebhookChanged], conn: AsyncConnection[Any]) -> None:
    payload = event.payload
    if event.forked_from is not None:
        return
    sub = payload.subscription
    await conn.execute(
        "UPDATE wh_subscriptions SET url = %s, event_types = %s, active = %s"
        " WHERE webhook_id = %s AND tenant_id = %s",
        (sub.url, list(sub.event_types), sub.active, sub.webhook_id, event.tenant_id),
    )


async def _deleted(event: Envelope[WebhookDeleted], conn: AsyncConnection[Any]) -> None:
    payload = event.payload
    if event.forked_from is not None:
        return
    await conn.execute(
        "DELETE FROM wh_subscriptions WHERE webhook_id = %s AND tenant_id = %s",
        (payload.webhook_id, event.tenant_id),
    )


PROJECTION = Projection(
    consumer=CONSUMER,
    tables=("wh_subscriptions",),
    appliers=Appliers(
        applier(WebhookRegistered, _registered),
        applier(WebhookChanged, _changed),
        applier(WebhookDeleted, _deleted),
    ),
    inherited=Appliers(),  # a fork starts without subscriptions
)
