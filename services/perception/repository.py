"""All SQL of the perception service."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from psycopg import AsyncConnection

from npcworld.contracts import Envelope, NpcCreated, WorldDefined
from services.perception.domain import Body

__all__ = ["TABLES", "PerceptionRepository"]

TABLES = ("pc_worlds", "pc_npcs", "pc_objects", "pc_seen", "pc_known_places")


def arena_of(path: str) -> str:
    return ":".join(path.split(":")[:3])


class PerceptionRepository:
    """Reads and writes the pc_* tables on the caller's connection; every row is one tenant's world's."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def save_world(self, event: Envelope, definition: WorldDefined) -> None:
        t, w = event.tenant_id, event.world_id
        await self.conn.execute(
            "INSERT INTO pc_worlds (world_id, tenant_id, definition, defined_by) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id) DO UPDATE SET definition = EXCLUDED.definition,"
            " defined_by = EXCLUDED.defined_by",
            (w, t, definition.model_dump_json(), event.event_id),
        )
        rows = [
            (t, w, f"{w}:{s.name}:{a.name}:{o.name}", o.state)
            for s in definition.sectors
            for a in s.arenas
            for o in a.objects
        ]
        async with self.conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO pc_objects (tenant_id, world_id, path, state) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (tenant_id, world_id, path) DO NOTHING",
                rows,
            )

    async def definition(self, tenant_id: str, world_id: str) -> tuple[UUID, WorldDefined] | None:
        cur = await self.conn.execute(
            "SELECT defined_by, definition FROM pc_worlds WHERE tenant_id = %s AND world_id = %s",
            (tenant_id, world_id),
        )
        row = await cur.fetchone()
        return (row[0], WorldDefined.model_validate(row[1])) if row else None

    async def add_npc(self, event: Envelope, npc: NpcCreated, tile: tuple[int, int] | None) -> None:
        await self.conn.execute(
            "INSERT INTO pc_npcs (world_id, npc_id, tenant_id, name, arena, tile_x, tile_y)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, world_id, npc_id) DO NOTHING",
            (
                event.world_id,
                npc.npc_id,
                event.tenant_id,
                npc.name,
                arena_of(npc.location) if npc.location else None,
                tile[0] if tile else None,
                tile[1] if tile else None,
            ),
        )

    async def rename(self, tenant_id: str, world_id: str, npc_id: str, name: str) -> None:
        await self.conn.execute(
            "UPDATE pc_npcs SET name = %s WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (name, tenant_id, world_id, npc_id),
        )

    async def remove_npc(self, tenant_id: str, world_id: str, npc_id: str) -> None:
        """A retired NPC neither perceives nor is perceived; what others saw of it stays theirs."""
        await self.conn.execute(
            "DELETE FROM pc_npcs WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (tenant_id, world_id, npc_id),
        )

    async def move(
        self,
        tenant_id: str,
        world_id: str,
        npc_id: str,
        path: str,
        tile: tuple[int, int] | None,
        moved_by: UUID,
    ) -> None:
        await self.conn.execute(
            "UPDATE pc_npcs SET arena = %s, tile_x = %s, tile_y = %s, moved_by = %s"
            " WHERE tenant_id = %s AND world_id = %s AND npc_id = %s AND (moved_by IS NULL OR moved_by < %s)",
            (
                arena_of(path),
                tile[0] if tile else None,
                tile[1] if tile else None,
                moved_by,
                tenant_id,
                world_id,
                npc_id,
                moved_by,
            ),
        )

    async def set_activity(self, tenant_id: str, world_id: str, npc_id: str, activity: str) -> None:
        await self.conn.execute(
            "UPDATE pc_npcs SET activity = %s WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (activity, tenant_id, world_id, npc_id),
        )

    async def set_object_state(
        self, tenant_id: str, world_id: str, path: str, state: str, changed_by: UUID
    ) -> None:
        await self.conn.execute(
            "INSERT INTO pc_objects (tenant_id, world_id, path, state, changed_by)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant_id, world_id, path) DO UPDATE"
            " SET state = EXCLUDED.state, changed_by = EXCLUDED.changed_by"
            " WHERE pc_objects.changed_by IS NULL OR pc_objects.changed_by < EXCLUDED.changed_by",
            (tenant_id, world_id, path, state, changed_by),
        )

    async def bodies(self, tenant_id: str, world_id: str) -> list[Body]:
        cur = await self.conn.execute(
            "SELECT npc_id, name, arena, tile_x, tile_y, activity FROM pc_npcs"
            " WHERE tenant_id = %s AND world_id = %s ORDER BY npc_id",
            (tenant_id, world_id),
        )
        return [
            Body(r[0], r[1], r[2], (r[3], r[4]) if r[3] is not None else None, r[5])
            for r in await cur.fetchall()
        ]

    async def objects(self, tenant_id: str, world_id: str) -> dict[str, str]:
        cur = await self.conn.execute(
            "SELECT path, state FROM pc_objects WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
        )
        return {r[0]: r[1] for r in await cur.fetchall()}

    async def seen(self, tenant_id: str, world_id: str) -> dict[str, dict[str, str]]:
        cur = await self.conn.execute(
            "SELECT npc_id, entity, description FROM pc_seen WHERE tenant_id = %s AND world_id = %s",
            (tenant_id, world_id),
        )
        out: dict[str, dict[str, str]] = {}
        for npc_id, entity, description in await cur.fetchall():
            out.setdefault(npc_id, {})[entity] = description
        return out

    async def remember_seen(self, tenant_id: str, world_id: str, rows: list[tuple[str, str, str]]) -> None:
        async with self.conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO pc_seen (tenant_id, world_id, npc_id, entity, description)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant_id, world_id, npc_id, entity)"
                " DO UPDATE SET description = EXCLUDED.description",
                [(tenant_id, world_id, *row) for row in rows],
            )

    async def known_places(
        self, tenant_id: str, world_id: str, npc_id: str | None = None
    ) -> dict[str, set[str]]:
        sql = "SELECT npc_id, path FROM pc_known_places WHERE tenant_id = %s AND world_id = %s"
        params = [tenant_id, world_id]
        if npc_id is not None:
            sql += " AND npc_id = %s"
            params.append(npc_id)
        cur = await self.conn.execute(sql, params)
        out: dict[str, set[str]] = {}
        for npc, path in await cur.fetchall():
            out.setdefault(npc, set()).add(path)
        return out

    async def add_known_places(
        self, tenant_id: str, world_id: str, npc_id: str, paths: tuple[str, ...]
    ) -> None:
        async with self.conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO pc_known_places (tenant_id, world_id, npc_id, path) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                [(tenant_id, world_id, npc_id, p) for p in paths],
            )
