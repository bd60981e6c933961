"""Reads of world streams for the gateway (the world aggregate and the tenant's world list)."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import EventPayload
from npcworld.eventstore import EventStore
from npcworld.eventstore.store import STREAM_IS
from npcworld.fork import world_stream
from services.gateway.domain import WorldState, fold
from services.gateway.repository._keys import SCOPES, ApiKey, KeyRepository

__all__ = ["GatewayRepository"]


class GatewayRepository:
    """Reads and writes on the caller's connection."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn
        self.store = EventStore()

    async def create_tenant(self, name: str, scopes: tuple[str, ...] = SCOPES) -> tuple[str, str]:
        """A new tenant with one key; returns (tenant_id, secret). The secret is shown once."""
        keys = KeyRepository(self.conn)
        tenant = await keys.create_tenant(name)
        _, secret = await keys.create_key(tenant.tenant_id, f"{name} bootstrap", scopes)
        return tenant.tenant_id, secret

    async def find_key(self, secret: str) -> ApiKey | None:
        return await KeyRepository(self.conn).find_key(secret)

    async def load_world(self, tenant_id: str, world_id: str) -> WorldState:
        """Fold the tenant's world stream (world ids are the tenant's own: another tenant's world of the
        same id is another stream)."""
        events = await self.store.read_stream(self.conn, tenant_id, world_stream(world_id), world_id=world_id)
        payloads: list[EventPayload] = [e.envelope.payload for e in events]
        return fold(payloads)

    async def world_stream_end(self, tenant_id: str, world_id: str) -> tuple[int, str] | None:
        """The world stream's last (version, event_id), or None while it is empty: one index lookup."""
        cur = await self.conn.execute(
            f"SELECT version, event_id::text FROM events WHERE {STREAM_IS} ORDER BY version DESC LIMIT 1",
            (tenant_id, world_stream(world_id)),
        )
        row = await cur.fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    async def list_world_ids(
        self, tenant_id: str, after_seq: int = 0, limit: int = 1000, only: frozenset[str] | None = None
    ) -> list[tuple[int, str]]:
        """Live worlds of the tenant as (creation seq, world_id), in creation order after ``after_seq``
        (``only``: just these worlds, for a key limited to them). A fork that inherits its history was
        created by its WorldForked."""
        cur = await self.conn.execute(
            "SELECT c.seq, c.world_id FROM events c WHERE c.tenant_id = %s"
            " AND (c.type = 'WorldCreated' OR c.type = 'WorldForked' AND c.forked_from IS NULL"
            " AND c.payload ? 'inherited_until_seq')"
            " AND c.seq > %s AND (%s::text[] IS NULL OR c.world_id = ANY(%s::text[]))"
            " AND NOT EXISTS (SELECT 1 FROM events d WHERE d.tenant_id = c.tenant_id"
            " AND d.world_id = c.world_id AND d.type = 'WorldDeleted') ORDER BY c.seq LIMIT %s",
            (tenant_id, after_seq, *([sorted(only)] * 2 if only is not None else [None, None]), limit),
        )
        return [(r[0], r[1]) for r in await cur.fetchall()]
