"""Webhook subscriptions as the gateway registered them, and their delivery log as the API sees it.

The webhooks service learns of subscriptions from the events the routes append beside these rows (it folds
them into its own table); signing secrets are kept by ``npcworld.egress.secrets``, never here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import AsyncConnection

from npcworld.errors import NotFoundError
from npcworld.ids import new_id

__all__ = ["AttemptRecord", "DeliveryRecord", "WebhookRecord", "WebhookRepository"]

_HOOK = "webhook_id, world_id, url, event_types, description, active, created_at"
_DELIVERY = (
    "delivery_id, webhook_id, event_id, seq, event_type, status, attempts, next_attempt_at,"
    " last_status_code, last_error, created_at, delivered_at"
)


@dataclass(frozen=True)
class WebhookRecord:
    webhook_id: str
    world_id: str
    url: str
    event_types: tuple[str, ...]
    description: str
    active: bool
    created_at: datetime


@dataclass(frozen=True)
class DeliveryRecord:
    delivery_id: int
    webhook_id: str
    event_id: UUID
    seq: int
    event_type: str
    status: str
    attempts: int
    next_attempt_at: datetime
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


@dataclass(frozen=True)
class AttemptRecord:
    attempt: int
    status_code: int | None
    error: str | None
    duration_ms: float
    attempted_at: datetime


class WebhookRepository:
    """Every query is scoped by tenant and world: another tenant's hook reads as missing."""

    def __init__(self, conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> None:
        self.conn = conn
        self.scope = (tenant_id, world_id)

    async def create(self, url: str, event_types: tuple[str, ...], description: str) -> WebhookRecord:
        """A new subscription (the route appends its WebhookRegistered in the same transaction)."""
        cur = await self.conn.execute(
            "INSERT INTO gw_webhooks (webhook_id, tenant_id, world_id, url, event_types, description)"
            f" VALUES (%s, %s, %s, %s, %s, %s) RETURNING {_HOOK}",
            (new_id(), *self.scope, url, list(event_types), description),
        )
        row = await cur.fetchone()
        assert row is not None
        return _hook(row)

    async def world_time(self) -> datetime | None:
        """The latest world time among the world's events (None before any): when a change is stamped."""
        cur = await self.conn.execute(
            "SELECT max(world_time) FROM events WHERE tenant_id = %s AND world_id = %s", self.scope
        )
        row = await cur.fetchone()
        return None if row is None else row[0]

    async def page(self, after: str | None, limit: int) -> list[WebhookRecord]:
        cur = await self.conn.execute(
            f"SELECT {_HOOK} FROM gw_webhooks WHERE tenant_id = %s AND world_id = %s AND deleted_at IS NULL"
            " AND webhook_id > %s ORDER BY webhook_id LIMIT %s",
            (*self.scope, after or "", limit),
        )
        return [_hook(r) for r in await cur.fetchall()]

    async def get(self, webhook_id: str) -> WebhookRecord:
        cur = await self.conn.execute(
            f"SELECT {_HOOK} FROM gw_webhooks WHERE tenant_id = %s AND world_id = %s AND deleted_at IS NULL"
            " AND webhook_id = %s",
            (*self.scope, webhook_id),
        )
        row = await cur.fetchone()
        if row is None:
            raise NotFoundError(f"webhook {webhook_id!r} not found")
        return _hook(row)

    async def update(self, webhook_id: str, changes: dict[str, Any]) -> WebhookRecord:
        current = await self.get(webhook_id)
        url = changes.get("url", current.url)
        types = changes.get("event_types", list(current.event_types))
        active = changes.get("active", current.active)
        description = changes.get("description", current.description)
        await self.conn.execute(
            "UPDATE gw_webhooks SET url = %s, event_types = %s, active = %s, description = %s"
            " WHERE webhook_id = %s",
            (url, list(types), active, description, webhook_id),
        )
        return await self.get(webhook_id)

    async def delete(self, webhook_id: str) -> None:
        """Soft delete: the delivery log stays (the webhooks service fails its pending deliveries)."""
        await self.get(webhook_id)
        await self.conn.execute(
            "UPDATE gw_webhooks SET deleted_at = now(), active = false WHERE webhook_id = %s", (webhook_id,)
        )

    async def deliveries(
        self, webhook_id: str, status: str | None, after: int, limit: int
    ) -> list[DeliveryRecord]:
        await self.get(webhook_id)
        cur = await self.conn.execute(
            f"SELECT {_DELIVERY} FROM gw_deliveries WHERE webhook_id = %s AND delivery_id > %s"
            " AND (%s::text IS NULL OR status = %s) ORDER BY delivery_id LIMIT %s",
            (webhook_id, after, status, status, limit),
        )
        return [DeliveryRecord(*r) for r in await cur.fetchall()]

    async def delivery(self, webhook_id: str, delivery_id: int) -> tuple[DeliveryRecord, list[AttemptRecord]]:
        await self.get(webhook_id)
        cur = await self.conn.execute(
            f"SELECT {_DELIVERY} FROM gw_deliveries WHERE webhook_id = %s AND delivery_id = %s",
            (webhook_id, delivery_id),
        )
        row = await cur.fetchone()
        if row is None:
            raise NotFoundError(f"delivery {delivery_id} not found")
        cur = await self.conn.execute(
            "SELECT attempt, status_code, error, duration_ms, attempted_at FROM gw_delivery_attempts"
            " WHERE delivery_id = %s ORDER BY attempted_at, attempt",
            (delivery_id,),
        )
        return DeliveryRecord(*row), [AttemptRecord(*r) for r in await cur.fetchall()]

    async def redeliver(self, webhook_id: str, delivery_id: int) -> DeliveryRecord:
        """Queue a delivery again now, with a fresh attempt budget (its attempt log is kept); it goes out once
        the dispatcher has folded every event stored before this (a URL just changed is the one used)."""
        await self.delivery(webhook_id, delivery_id)
        await self.conn.execute(
            "UPDATE gw_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(),"
            " delivered_at = NULL, redrive_after_seq = (SELECT coalesce(max(seq), 0) FROM events)"
            " WHERE delivery_id = %s",
            (delivery_id,),
        )
        return (await self.delivery(webhook_id, delivery_id))[0]


def _hook(row: tuple[Any, ...]) -> WebhookRecord:
    return WebhookRecord(row[0], row[1], row[2], tuple(row[3]), row[4], row[5], row[6])
