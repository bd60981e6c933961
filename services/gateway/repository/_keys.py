"""Tenants and their API keys; keys are stored as SHA-256 hashes and shown in clear only once."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from npcworld.errors import NotFoundError
from npcworld.ids import new_id
from services.gateway.domain.grants import SCOPES, Grant

__all__ = ["SCOPES", "ApiKey", "KeyRecord", "KeyRepository", "TenantRecord", "hash_key"]

_KEY_COLUMNS = ("key_id, tenant_id, name, scopes, rate_per_second, burst, created_at, revoked_at, worlds,"
                " expires_at, player_id")
# A key authenticates while it is neither revoked nor expired.
_LIVE = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())"


@dataclass(frozen=True)
class ApiKey:
    """An authenticated caller, with its own rate limit when one was set on the key."""

    key_id: str
    tenant_id: str
    scopes: frozenset[str]
    rate_per_second: float | None = None
    burst: int | None = None
    worlds: frozenset[str] | None = None  # None: every world of the tenant
    player_id: str | None = None  # set on a player session token: it speaks only as this player

    @property
    def grant(self) -> Grant:
        return Grant(self.scopes, self.worlds, self.player_id)


@dataclass(frozen=True)
class TenantRecord:
    tenant_id: str
    name: str
    created_at: datetime


@dataclass(frozen=True)
class KeyRecord:
    """A key as listed to its tenant's admins (never the secret or its hash)."""

    key_id: str
    tenant_id: str
    name: str
    scopes: tuple[str, ...]
    rate_per_second: float | None
    burst: int | None
    created_at: datetime
    revoked_at: datetime | None
    worlds: tuple[str, ...] | None = None
    expires_at: datetime | None = None
    player_id: str | None = None


def hash_key(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def _record(row: tuple[Any, ...]) -> KeyRecord:
    worlds = tuple(row[8]) if row[8] is not None else None
    return KeyRecord(row[0], row[1], row[2], tuple(row[3]), row[4], row[5], row[6], row[7], worlds, row[9],
                     row[10])


class KeyRepository:
    """Tenant and key rows, on the caller's connection."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def create_tenant(self, name: str) -> TenantRecord:
        cur = await self.conn.execute(
            "INSERT INTO gw_tenants (tenant_id, name) VALUES (%s, %s) RETURNING tenant_id, name, created_at",
            (new_id(), name),
        )
        row = await cur.fetchone()
        assert row is not None
        return TenantRecord(row[0], row[1], row[2])

    async def get_tenant(self, tenant_id: str) -> TenantRecord:
        cur = await self.conn.execute(
            "SELECT tenant_id, name, created_at FROM gw_tenants WHERE tenant_id = %s", (tenant_id,)
        )
        row = await cur.fetchone()
        if row is None:
            raise NotFoundError(f"tenant {tenant_id!r} not found")
        return TenantRecord(row[0], row[1], row[2])

    async def create_key(
        self,
        tenant_id: str,
        name: str,
        scopes: tuple[str, ...],
        *,
        rate_per_second: float | None = None,
        burst: int | None = None,
        worlds: tuple[str, ...] | None = None,
        expires_at: datetime | None = None,
        player_id: str | None = None,
    ) -> tuple[KeyRecord, str]:
        """A new key for the tenant; returns the record and the secret (the only time it exists in clear).

        ``worlds`` limits it to those worlds; ``expires_at`` ends it; ``player_id`` makes it a player session
        (which needs one world and an expiry)."""
        unknown = set(scopes) - set(SCOPES)
        assert not unknown, f"unknown scopes {sorted(unknown)}"
        secret = f"{'npcs' if player_id else 'npcw'}_{secrets.token_urlsafe(32)}"
        cur = await self.conn.execute(
            "INSERT INTO gw_api_keys (key_id, tenant_id, key_hash, scopes, name, rate_per_second, burst,"
            " worlds, expires_at, player_id)"
            f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_KEY_COLUMNS}",
            (new_id(), tenant_id, hash_key(secret), list(scopes), name, rate_per_second, burst,
             list(worlds) if worlds is not None else None, expires_at, player_id),
        )
        row = await cur.fetchone()
        assert row is not None
        return _record(row), secret

    async def list_keys(self, tenant_id: str, after: str | None, limit: int) -> list[KeyRecord]:
        cur = await self.conn.execute(
            f"SELECT {_KEY_COLUMNS} FROM gw_api_keys WHERE tenant_id = %s AND key_id > %s"
            " AND player_id IS NULL ORDER BY key_id LIMIT %s",  # player sessions are not the admins' keys
            (tenant_id, after or "", limit),
        )
        return [_record(r) for r in await cur.fetchall()]

    async def get_key(self, tenant_id: str, key_id: str) -> KeyRecord:
        cur = await self.conn.execute(
            f"SELECT {_KEY_COLUMNS} FROM gw_api_keys WHERE tenant_id = %s AND key_id = %s",
            (tenant_id, key_id),
        )
        row = await cur.fetchone()
        if row is None:
            raise NotFoundError(f"API key {key_id!r} not found")
        return _record(row)

    async def revoke_key(self, tenant_id: str, key_id: str) -> KeyRecord:
        """Revoke (idempotently); the key stops authenticating at once."""
        await self.conn.execute(
            "UPDATE gw_api_keys SET revoked_at = coalesce(revoked_at, now())"
            " WHERE tenant_id = %s AND key_id = %s",
            (tenant_id, key_id),
        )
        return await self.get_key(tenant_id, key_id)

    async def purge_expired_sessions(self, limit: int = 1000) -> int:
        """Delete player session tokens that have expired (they no longer authenticate; nothing lists them
        once gone). API keys that expired are kept, so their admins still see them."""
        cur = await self.conn.execute(
            "DELETE FROM gw_api_keys WHERE ctid IN (SELECT ctid FROM gw_api_keys"
            " WHERE player_id IS NOT NULL AND expires_at < now() LIMIT %s)",
            (limit,),
        )
        return cur.rowcount

    async def find_key(self, secret: str) -> ApiKey | None:
        cur = await self.conn.execute(
            "SELECT key_id, tenant_id, scopes, rate_per_second, burst, worlds, player_id FROM gw_api_keys"
            f" WHERE key_hash = %s AND {_LIVE}",
            (hash_key(secret),),
        )
        row = await cur.fetchone()
        if row is None:
            return None
        worlds = frozenset(row[5]) if row[5] is not None else None
        return ApiKey(row[0], row[1], frozenset(row[2]), row[3], row[4], worlds, row[6])
