"""The memory kinds a world's NPCs never record (``WorldCreated.ablations``, migration 0107)."""

from __future__ import annotations

from collections.abc import Iterable

from services.memory.repository._rows import Conn

__all__ = ["AblationRepository"]


class AblationRepository:
    """Reads and writes ``memory_world_ablations``; a world without a row records every kind."""

    async def set(self, conn: Conn, tenant_id: str, world_id: str, kinds: Iterable[str]) -> None:
        await conn.execute(
            "INSERT INTO memory_world_ablations (tenant_id, world_id, kinds) VALUES (%s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id) DO UPDATE SET kinds = EXCLUDED.kinds",
            (tenant_id, world_id, sorted(set(kinds))),
        )

    async def delete_world(self, conn: Conn, tenant_id: str, world_id: str) -> None:
        await conn.execute(
            "DELETE FROM memory_world_ablations WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
        )
