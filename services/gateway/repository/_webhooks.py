"""Webhook subscriptions as the gateway registered them.

The webhooks service learns of subscriptions from the events the routes append beside these rows (it folds
them into its own table) and keeps the delivery log, which the routes read over its internal API; signing
secrets are kept by ``npcworld.egress.secrets``, never here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from npcworld.errors import NotFoundError
from npcworld.ids import new_id

__all__ = ["WebhookRecord", "WebhookRepository"]

_HOOK = "webhook_id, world_id, url, event_types, description, active, created_at"


@dataclass(frozen=True)
class WebhookRecord:
    webhook_id: str
    world_id: str
    url: str
    event_types: tuple[str, ...]
    description: str
    active: bool
    created_at: datetime


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
            "SELECT max(world_time) FROM events WHERE in_world(tenant_id, world_id, %s, %s)", self.scope
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


def _hook(row: tuple[Any, ...]) -> WebhookRecord:
    return WebhookRecord(row[0], row[1], row[2], tuple(row[3]), row[4], row[5], row[6])
