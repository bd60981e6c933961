"""All SQL of the world_state service."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from npcworld.contracts import Envelope, NpcCreated, WorldCreated, WorldForked
from services.world_state.domain import NpcView, WorldView

__all__ = ["TABLES", "WorldRepository"]

TABLES = ("ws_worlds", "ws_npcs")


class WorldRepository:
    """Reads and writes the ws_* tables on the caller's connection."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def add_world(self, event: Envelope, payload: WorldCreated) -> None:
        await self.conn.execute(
            "INSERT INTO ws_worlds (tenant_id, world_id, name, template, start_time, created_seq_event)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (world_id) DO NOTHING",
            (event.tenant_id, event.world_id, payload.name, payload.template, payload.start_time, event.event_id),
        )

    async def mark_forked(self, world_id: str, payload: WorldForked) -> None:
        await self.conn.execute(
            "UPDATE ws_worlds SET forked_from = %s WHERE world_id = %s", (payload.source_world_id, world_id)
        )

    async def mark_deleted(self, world_id: str) -> None:
        await self.conn.execute("UPDATE ws_worlds SET deleted = true WHERE world_id = %s", (world_id,))

    async def add_npc(self, event: Envelope, p: NpcCreated) -> None:
        await self.conn.execute(
            "INSERT INTO ws_npcs (tenant_id, world_id, npc_id, name, age, traits, occupation, location)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (world_id, npc_id) DO NOTHING",
            (event.tenant_id, event.world_id, p.npc_id, p.name, p.age, list(p.traits), p.occupation, p.location),
        )

    async def get_world(self, tenant_id: str, world_id: str) -> WorldView | None:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                "SELECT tenant_id, world_id, name, template, start_time, forked_from FROM ws_worlds"
                " WHERE tenant_id = %s AND world_id = %s AND NOT deleted",
                (tenant_id, world_id),
            )
            row = await cur.fetchone()
        return WorldView(**row) if row else None

    async def list_worlds(self, tenant_id: str) -> list[WorldView]:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                "SELECT tenant_id, world_id, name, template, start_time, forked_from FROM ws_worlds"
                " WHERE tenant_id = %s AND NOT deleted ORDER BY world_id",
                (tenant_id,),
            )
            return [WorldView(**row) for row in await cur.fetchall()]

    async def list_npcs(self, tenant_id: str, world_id: str) -> list[NpcView]:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                "SELECT world_id, npc_id, name, age, traits, occupation, location FROM ws_npcs"
                " WHERE tenant_id = %s AND world_id = %s ORDER BY npc_id",
                (tenant_id, world_id),
            )
            return [NpcView(**{**row, "traits": tuple(row["traits"])}) for row in await cur.fetchall()]
