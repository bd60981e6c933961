"""Stored responses of POSTs sent with an ``Idempotency-Key``, per tenant, until they expire."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from services.gateway.holder import HOLDER_LOCK_CLASS

__all__ = ["Claimed", "IdempotencyRecord", "IdempotencyStore"]


@dataclass(frozen=True)
class IdempotencyRecord:
    """What the first request with this key sent and (once finished) got back."""

    method: str
    path: str
    body_hash: bytes
    status_code: int | None
    headers: dict[str, str]
    body: bytes | None


@dataclass(frozen=True)
class Claimed:
    """The key is this request's to run; ``since``: when it was first claimed (kept by a takeover)."""

    since: datetime


class IdempotencyStore:
    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def claim(
        self, tenant_id: str, key: str, request: tuple[str, str, bytes], ttl_seconds: float, holder: str
    ) -> Claimed | IdempotencyRecord:
        """Claim the key for a new request for ``holder`` (``RequestHolder.name``); returns the earlier
        record instead when one is live.

        An expired record is replaced. A claim of the same request still in progress whose holder is gone
        (its lock free: the process was killed mid-request) is taken over, keeping the time it was first
        made (the request's events get the same ids again). A concurrent claim of the same key waits on
        the row lock and then sees the first one's record.
        """
        method, path, body_hash = request
        cur = await self.conn.execute(
            "INSERT INTO gw_idempotency AS g (tenant_id, key, method, path, body_hash, expires_at, holder)"
            " VALUES (%(t)s, %(k)s, %(m)s, %(p)s, %(h)s, now() + make_interval(secs => %(ttl)s), %(holder)s)"
            " ON CONFLICT (tenant_id, key) DO UPDATE SET method = excluded.method, path = excluded.path,"
            " body_hash = excluded.body_hash, status_code = NULL, headers = '{}', body = NULL,"
            " created_at = CASE WHEN g.expires_at < now() THEN now() ELSE g.created_at END,"
            " expires_at = excluded.expires_at, holder = excluded.holder"
            " WHERE g.expires_at < now()"
            " OR (g.status_code IS NULL AND (g.method, g.path, g.body_hash) = (%(m)s, %(p)s, %(h)s)"
            "     AND (g.holder IS NULL OR pg_try_advisory_xact_lock(%(class)s, hashtext(g.holder))))"
            " RETURNING created_at",
            {"t": tenant_id, "k": key, "m": method, "p": path, "h": body_hash, "ttl": ttl_seconds,
             "holder": holder, "class": HOLDER_LOCK_CLASS},
        )
        if (claimed := await cur.fetchone()) is not None:
            return Claimed(claimed[0])
        cur = await self.conn.execute(
            "SELECT method, path, body_hash, status_code, headers, body FROM gw_idempotency"
            " WHERE tenant_id = %s AND key = %s",
            (tenant_id, key),
        )
        row = await cur.fetchone()
        assert row is not None
        return IdempotencyRecord(
            row[0], row[1], bytes(row[2]), row[3], row[4], bytes(row[5]) if row[5] is not None else None
        )

    async def complete(
        self, tenant_id: str, key: str, status_code: int, headers: dict[str, str], body: bytes
    ) -> None:
        await self.conn.execute(
            "UPDATE gw_idempotency SET status_code = %s, headers = %s, body = %s"
            " WHERE tenant_id = %s AND key = %s",
            (status_code, json.dumps(headers), body, tenant_id, key),
        )

    async def release(self, tenant_id: str, key: str) -> None:
        """Give up a claim whose request failed on our side, so a retry of it runs again. The claim stays,
        held by nobody, with the time it was made: the retry makes the same events (``claim``), so what the
        failed run stored before it failed is not stored twice."""
        await self.conn.execute(
            "UPDATE gw_idempotency SET holder = NULL"
            " WHERE tenant_id = %s AND key = %s AND status_code IS NULL",
            (tenant_id, key),
        )

    async def purge_expired(self, limit: int = 1000) -> int:
        cur = await self.conn.execute(
            "DELETE FROM gw_idempotency WHERE ctid IN (SELECT ctid FROM gw_idempotency"
            " WHERE expires_at < now() LIMIT %s)",
            (limit,),
        )
        return cur.rowcount
