"""Reading designer canon (``CanonSet``) from the event store: the facts of a world and of one NPC that the
services put into prompts and check what NPCs hear against (docs/studio-controls.md)."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

__all__ = ["canon_of", "canons_of"]

# The latest set of each scope (the world's, each NPC's); events_type_idx serves it.
_LATEST = (
    "SELECT DISTINCT ON (coalesce(npc_id, '')) npc_id, payload"
    " FROM world_events(%s, %s) AS events WHERE type = 'CanonSet'"
    " AND (npc_id IS NULL OR npc_id = ANY(%s)) ORDER BY coalesce(npc_id, ''), seq DESC"
)


async def canon_of(
    conn: AsyncConnection[Any], tenant_id: str, world_id: str, npc_id: str | None = None
) -> tuple[str, ...]:
    """The world's canon, then ``npc_id``'s own (each the latest set of its scope); empty when none.

    Read from the event log, so a fork sees its source's canon up to the fork point and replay needs no
    read model. A set stored after an event was handled applies to what is handled after it.
    """
    return (await canons_of(conn, tenant_id, world_id, [npc_id] if npc_id else []))[npc_id or ""]


async def canons_of(
    conn: AsyncConnection[Any], tenant_id: str, world_id: str, npc_ids: list[str]
) -> dict[str, tuple[str, ...]]:
    """``canon_of`` for each of ``npc_ids`` (and ``""``: the world's alone), in one query."""
    cur = await conn.execute(_LATEST, (tenant_id, world_id, npc_ids))
    scopes = {npc or "": tuple(payload.get("facts", ())) for npc, payload in await cur.fetchall()}
    world = scopes.get("", ())
    return {"": world} | {n: tuple(dict.fromkeys([*world, *scopes.get(n, ())])) for n in npc_ids}
