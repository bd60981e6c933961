"""The ``player_keys`` and ``forgotten_players`` tables: per-player data keys, and the players forgotten.

Keys are never cached: once a key row is deleted no reader can open what it sealed.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from typing import Any

from psycopg import AsyncConnection, Connection

from npcworld.shredding.cipher import DataKey, new_key

__all__ = ["delete_key", "forgotten_among", "keys_by_id", "keys_by_id_sync", "keys_for", "player_known"]

_BY_ID = "SELECT key_id, tenant_id, key FROM player_keys WHERE key_id = ANY(%s)"
# FOR KEY SHARE: a forget running meanwhile waits for this transaction (or this waits for it, and then
# finds the key gone and the tombstone there), so nothing is sealed with a key that was just erased.
_EXISTING = ("SELECT player_id, key_id, key FROM player_keys WHERE tenant_id = %s AND player_id = ANY(%s)"
             " FOR KEY SHARE")
_INSERT = """
INSERT INTO player_keys (tenant_id, player_id, key_id, key)
SELECT %s, * FROM unnest(%s::text[], %s::uuid[], %s::bytea[])
ON CONFLICT (tenant_id, player_id) DO NOTHING
"""


async def forgotten_among(conn: AsyncConnection[Any], tenant_id: str, players: Collection[str]) -> set[str]:
    """Which of these players the tenant has forgotten."""
    cur = await conn.execute(
        "SELECT player_id FROM forgotten_players WHERE tenant_id = %s AND player_id = ANY(%s)",
        (tenant_id, list(players)),
    )
    return {row[0] for row in await cur.fetchall()}


async def _existing(conn: AsyncConnection[Any], tenant_id: str, players: list[str]) -> dict[str, DataKey]:
    cur = await conn.execute(_EXISTING, (tenant_id, players))
    return {p: DataKey(k, tenant_id, bytes(secret)) for p, k, secret in await cur.fetchall()}


async def keys_for(
    conn: AsyncConnection[Any], tenant_id: str, players: Collection[str]
) -> dict[str, DataKey | None]:
    """Each player's data key, created on first use; None for a forgotten player (no key is made again)."""
    wanted = sorted(set(players))
    found: dict[str, DataKey | None] = dict(await _existing(conn, tenant_id, wanted))
    missing = [p for p in wanted if p not in found]
    if not missing:
        return found
    gone = await forgotten_among(conn, tenant_id, missing)
    fresh = {p: new_key(tenant_id) for p in missing if p not in gone}
    if fresh:
        await conn.execute(_INSERT, (tenant_id, list(fresh), [k.key_id for k in fresh.values()],
                                     [k.secret for k in fresh.values()]))
        found.update(await _existing(conn, tenant_id, list(fresh)))
    return {**found, **dict.fromkeys(gone)}


async def keys_by_id(conn: AsyncConnection[Any], key_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, DataKey]:
    """The keys that still exist among ``key_ids``."""
    if not key_ids:
        return {}
    cur = await conn.execute(_BY_ID, (list(key_ids),))
    return {k: DataKey(k, t, bytes(secret)) for k, t, secret in await cur.fetchall()}


def keys_by_id_sync(conn: Connection[Any], key_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, DataKey]:
    """``keys_by_id`` on a blocking connection (the ``npcworld why`` reader)."""
    if not key_ids:
        return {}
    rows = conn.execute(_BY_ID, (list(key_ids),)).fetchall()
    return {k: DataKey(k, t, bytes(secret)) for k, t, secret in rows}


async def player_known(conn: AsyncConnection[Any], tenant_id: str, player_id: str) -> bool:
    """Whether the tenant has a key for the player (it has said something) or has forgotten it."""
    cur = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM player_keys WHERE tenant_id = %(t)s AND player_id = %(p)s)"
        " OR EXISTS (SELECT 1 FROM forgotten_players WHERE tenant_id = %(t)s AND player_id = %(p)s)",
        {"t": tenant_id, "p": player_id},
    )
    row = await cur.fetchone()
    return bool(row and row[0])


async def delete_key(conn: AsyncConnection[Any], tenant_id: str, player_id: str) -> bool:
    """Erase the player's key and leave a tombstone; whether the tenant had not forgotten the player yet."""
    await conn.execute(
        "DELETE FROM player_keys WHERE tenant_id = %s AND player_id = %s", (tenant_id, player_id)
    )
    cur = await conn.execute(
        "INSERT INTO forgotten_players (tenant_id, player_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
        (tenant_id, player_id),
    )
    return cur.rowcount == 1
