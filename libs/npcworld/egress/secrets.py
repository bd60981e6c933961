"""Signing secrets of outgoing calls (a world's validator), kept apart from the event log: the API that
registers the receiver stores one and shows it once; the service that makes the calls reads it to sign."""

from __future__ import annotations

import secrets
from typing import Any

from psycopg import AsyncConnection

__all__ = ["find_secret", "new_secret", "store_secret"]


def new_secret(prefix: str) -> str:
    """A fresh random secret, ``<prefix>_`` then 43 URL-safe characters (256 bits)."""
    return f"{prefix}_{secrets.token_urlsafe(32)}"


async def store_secret(conn: AsyncConnection[Any], tenant_id: str, owner_id: str, secret: str) -> None:
    """Keep ``secret`` for the receiver ``owner_id`` of ``tenant_id`` (in the caller's transaction)."""
    await conn.execute(
        "INSERT INTO egress_secrets (owner_id, tenant_id, secret) VALUES (%s, %s, %s)",
        (owner_id, tenant_id, secret),
    )


async def find_secret(conn: AsyncConnection[Any], tenant_id: str, owner_id: str) -> str | None:
    """The secret of ``owner_id``, or None when the tenant has none by that id."""
    cur = await conn.execute(
        "SELECT secret FROM egress_secrets WHERE tenant_id = %s AND owner_id = %s", (tenant_id, owner_id)
    )
    row = await cur.fetchone()
    return str(row[0]) if row else None
