"""All SQL of the gateway: tenants, API keys and reads of world streams."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import EventPayload
from npcworld.eventstore import EventStore
from npcworld.fork import world_stream
from npcworld.ids import new_id
from services.gateway.domain import WorldState, fold

__all__ = ["ApiKey", "GatewayRepository", "hash_key"]

SCOPES = ("read", "write", "admin")


@dataclass(frozen=True)
class ApiKey:
    """An authenticated caller."""

    key_id: str
    tenant_id: str
    scopes: frozenset[str]


def hash_key(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class GatewayRepository:
    """Reads and writes on the caller's connection."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn
        self.store = EventStore()

    async def create_tenant(self, name: str, scopes: tuple[str, ...] = SCOPES) -> tuple[str, str]:
        """A new tenant with one key; returns (tenant_id, secret). The secret is shown once."""
        tenant_id, key_id = new_id(), new_id()
        secret = f"npcw_{secrets.token_urlsafe(32)}"
        await self.conn.execute("INSERT INTO gw_tenants (tenant_id, name) VALUES (%s, %s)", (tenant_id, name))
        await self.conn.execute(
            "INSERT INTO gw_api_keys (key_id, tenant_id, key_hash, scopes) VALUES (%s, %s, %s, %s)",
            (key_id, tenant_id, hash_key(secret), list(scopes)),
        )
        return tenant_id, secret

    async def find_key(self, secret: str) -> ApiKey | None:
        cur = await self.conn.execute(
            "SELECT key_id, tenant_id, scopes FROM gw_api_keys WHERE key_hash = %s AND revoked_at IS NULL",
            (hash_key(secret),),
        )
        row = await cur.fetchone()
        return ApiKey(row[0], row[1], frozenset(row[2])) if row else None

    async def load_world(self, tenant_id: str, world_id: str) -> WorldState:
        """Fold the world stream; another tenant's world reads as absent."""
        events = await self.store.read_stream(self.conn, world_stream(world_id))
        payloads: list[EventPayload] = [e.envelope.payload for e in events if e.envelope.tenant_id == tenant_id]
        return fold(payloads)

    async def list_world_ids(self, tenant_id: str) -> list[str]:
        cur = await self.conn.execute(
            "SELECT world_id FROM events WHERE tenant_id = %s AND type = 'WorldCreated'"
            " AND world_id NOT IN (SELECT world_id FROM events WHERE tenant_id = %s AND type = 'WorldDeleted')"
            " ORDER BY seq",
            (tenant_id, tenant_id),
        )
        return [r[0] for r in await cur.fetchall()]
