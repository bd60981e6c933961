"""What the memory service holds of a player it is told to forget (``PlayerForgotten``)."""

from __future__ import annotations

from collections import Counter

from services.memory.repository._rows import Conn, drop_unused_vectors

__all__ = ["PlayerMemories"]


class PlayerMemories:
    """Deletes a player's memories (its chats', subject ``player <id>``, and any it told, ``told_by``
    ``player:<id>``) and its chats held back by a step."""

    async def forget_player(self, conn: Conn, tenant_id: str, world_id: str, player_id: str) -> int:
        """Delete the world's memories of what the player said; returns how many went."""
        cur = await conn.execute(
            "DELETE FROM memories WHERE npc_key IN (SELECT npc_key FROM memory_npcs"
            " WHERE tenant_id = %s AND world_id = %s) AND (subject = %s OR told_by = %s)"
            " RETURNING npc_key, description",
            (tenant_id, world_id, f"player {player_id}", f"player:{player_id}"),
        )
        rows = await cur.fetchall()
        removed = Counter(int(row[0]) for row in rows)
        await drop_unused_vectors(conn, tenant_id, world_id, sorted({row[1] for row in rows}))
        for npc_key, count in sorted(removed.items()):
            await conn.execute(
                "UPDATE memory_npcs SET memory_count = memory_count - %s WHERE npc_key = %s", (count, npc_key)
            )
        await conn.execute(
            "DELETE FROM memory_held WHERE tenant_id = %s AND world_id = %s AND type = 'NpcReplied'"
            " AND envelope->'payload'->>'player_id' = %s",
            (tenant_id, world_id, player_id),
        )
        return sum(removed.values())
