"""Held work of stepped worlds: which worlds step, and the events waiting for their step's end."""

from __future__ import annotations

from collections.abc import Sequence

from npcworld.contracts import Envelope
from npcworld.stepping import SteppedWorlds
from services.memory.repository._rows import Conn, in_release_order

__all__ = ["HoldingQueries"]

_WORLD = "tenant_id = %(t)s AND world_id = %(w)s"
_STEPPED = SteppedWorlds("memory_clocks")


class HoldingQueries:
    async def set_stepped(self, conn: Conn, tenant: str, world: str, stepped: bool) -> None:
        await _STEPPED.set(conn, tenant, world, stepped)

    async def is_stepped(self, conn: Conn, tenant: str, world: str) -> bool:
        return await _STEPPED.get(conn, tenant, world)

    async def stepped_worlds(self, conn: Conn, worlds: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of these (tenant, world) pairs step."""
        if not worlds:
            return set()
        cur = await conn.execute(
            "SELECT tenant_id, world_id FROM memory_clocks WHERE stepped"
            " AND (tenant_id, world_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            ([t for t, _ in worlds], [w for _, w in worlds]),
        )
        return {(r[0], r[1]) for r in await cur.fetchall()}

    async def hold(self, conn: Conn, event: Envelope) -> None:
        await conn.execute(
            "INSERT INTO memory_held (event_id, tenant_id, world_id, world_time, npc_id, type, envelope)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb) ON CONFLICT (event_id) DO NOTHING",
            (
                event.event_id,
                event.tenant_id,
                event.world_id,
                event.world_time,
                event.npc_id or "",
                event.type,
                event.to_json().decode(),
            ),
        )

    async def take_held(self, conn: Conn, tenant: str, world: str, *, accesses: bool) -> list[Envelope]:
        """Remove and return the world's held MemoriesAccessed events (``accesses``) or the other held
        events, in a fixed order: world time, NPC, type, arrival."""
        cur = await conn.execute(
            f"DELETE FROM memory_held WHERE {_WORLD} AND (type = 'MemoriesAccessed') = %(a)s"
            " RETURNING world_time, npc_id, type, id, envelope",
            {"t": tenant, "w": world, "a": accesses},
        )
        return in_release_order(await cur.fetchall())

    async def drop_held_accesses(self, conn: Conn) -> None:
        """Forget every held last access (a replay holds them again from their claimed events)."""
        await conn.execute("DELETE FROM memory_held WHERE type = 'MemoriesAccessed'")
