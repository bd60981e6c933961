"""All SQL of the reflection service: one accumulator row per NPC."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from services.reflection.domain import Accumulator

__all__ = ["NpcKey", "ReflectionRepository"]

Conn = AsyncConnection[Any]


@dataclass(frozen=True)
class NpcKey:
    """Which NPC an accumulator belongs to."""

    tenant_id: str
    world_id: str
    npc_id: str


class ReflectionRepository:
    """Stateless; every method runs on the caller's connection (inside its transaction)."""

    async def lock(self, conn: Conn, npc: NpcKey) -> tuple[Accumulator, datetime | None]:
        """The NPC's accumulator (created empty if new), locked until the transaction ends, and when its
        pending run was last enqueued."""
        await conn.execute(
            "INSERT INTO reflection_npcs (tenant_id, world_id, npc_id) VALUES (%s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (npc.tenant_id, npc.world_id, npc.npc_id),
        )
        cur = await conn.execute(
            "SELECT importance_sum, last_run, pending_run, pending_since FROM reflection_npcs"
            " WHERE tenant_id = %s AND world_id = %s AND npc_id = %s FOR UPDATE",
            (npc.tenant_id, npc.world_id, npc.npc_id),
        )
        row = await cur.fetchone()
        assert row is not None
        return Accumulator(row[0], row[1], row[2]), row[3]

    async def save(
        self, conn: Conn, npc: NpcKey, acc: Accumulator, *, pending_since: datetime | None
    ) -> None:
        """Store the accumulator; ``pending_since`` is when the pending run was (last) enqueued."""
        await conn.execute(
            "UPDATE reflection_npcs SET importance_sum = %s, last_run = %s, pending_run = %s,"
            " pending_since = %s, updated_at = now() WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (acc.importance_sum, acc.last_run, acc.pending_run, pending_since,
             npc.tenant_id, npc.world_id, npc.npc_id),
        )

    async def get(self, conn: Conn, npc: NpcKey) -> Accumulator | None:
        """The NPC's accumulator without locking it (None when the NPC has none yet)."""
        cur = await conn.execute(
            "SELECT importance_sum, last_run, pending_run FROM reflection_npcs"
            " WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (npc.tenant_id, npc.world_id, npc.npc_id),
        )
        row = await cur.fetchone()
        return None if row is None else Accumulator(row[0], row[1], row[2])

    async def set_name(self, conn: Conn, npc: NpcKey, name: str) -> None:
        """Remember the NPC's name (the prompts speak of the NPC by name)."""
        await conn.execute(
            "INSERT INTO reflection_npcs (tenant_id, world_id, npc_id, name) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id, npc_id) DO UPDATE SET name = EXCLUDED.name",
            (npc.tenant_id, npc.world_id, npc.npc_id, name),
        )

    async def name(self, conn: Conn, npc: NpcKey) -> str | None:
        """The NPC's name, if its NpcCreated event was seen."""
        cur = await conn.execute(
            "SELECT name FROM reflection_npcs WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (npc.tenant_id, npc.world_id, npc.npc_id),
        )
        row = await cur.fetchone()
        return None if row is None else row[0]

    async def delete_world(self, conn: Conn, tenant_id: str, world_id: str) -> None:
        """Forget every accumulator of a deleted world."""
        await conn.execute(
            "DELETE FROM reflection_npcs WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
        )
