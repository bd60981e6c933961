"""The gateway's read models (``gw_clocks``, ``gw_trees``, ``gw_objects``, ``gw_npcs``, ``gw_known_places``,
``gw_plans``, ``gw_relationships``): the writes its projection's appliers make and the reads its routes make.

Writes that several events race for keep the newest (event ids are time-ordered), so a fold in store order
and the live fold agree, as in world_state's own model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from npcworld.contracts import WorldDefined

__all__ = ["VIEW_TABLES", "ViewRepository"]

VIEW_TABLES = (
    "gw_clocks", "gw_world_starts", "gw_trees", "gw_objects", "gw_npcs", "gw_known_places", "gw_plans",
    "gw_relationships",
)
_WORLD = "tenant_id = %(t)s AND world_id = %(w)s"


class ViewRepository:
    """Reads and writes the gateway's read models on the caller's connection."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def _run(self, sql: str, params: dict[str, Any]) -> None:
        await self.conn.execute(sql, params)

    # ----- world, clock, tree and objects

    async def add_world(self, t: str, w: str, start_time: datetime) -> None:
        await self._run("INSERT INTO gw_world_starts (tenant_id, world_id, start_time) VALUES (%(t)s, %(w)s,"
                        " %(s)s) ON CONFLICT DO NOTHING", {"t": t, "w": w, "s": start_time})

    async def start_time(self, t: str, w: str) -> datetime | None:
        cur = await self.conn.execute(f"SELECT start_time FROM gw_world_starts WHERE {_WORLD}",
                                      {"t": t, "w": w})
        row = await cur.fetchone()
        return row[0] if row else None

    async def delete_world(self, t: str, w: str) -> None:
        """A deleted world is served no more (and its id is never used again)."""
        for table in VIEW_TABLES:
            await self._run(f"DELETE FROM {table} WHERE {_WORLD}", {"t": t, "w": w})

    async def add_clock(self, t: str, w: str, start: datetime, step_seconds: float) -> None:
        """A paused clock at the world's start, unless it has one already."""
        await self._run("INSERT INTO gw_clocks (tenant_id, world_id, world_time, step_seconds)"
                        " VALUES (%(t)s, %(w)s, %(s)s, %(d)s) ON CONFLICT DO NOTHING",
                        {"t": t, "w": w, "s": start, "d": step_seconds})

    async def change_clock(
        self, t: str, w: str, *, paused: bool, speed: float | None, step_seconds: float,
        focus: Sequence[str] | None,
    ) -> None:
        """A clock change's settings; its step and world time are the ticks' alone."""
        await self._run(
            "UPDATE gw_clocks SET paused = %(p)s, speed = %(v)s, step_seconds = %(d)s, focus = %(f)s"
            f" WHERE {_WORLD}",
            {"p": paused, "v": speed, "d": step_seconds, "f": None if focus is None else list(focus),
             "t": t, "w": w},
        )

    async def tick(self, t: str, w: str, step: int, world_time: datetime) -> None:
        """A step, never going back."""
        await self._run("UPDATE gw_clocks SET world_time = CASE WHEN step < %(s)s THEN %(at)s ELSE world_time"
                        f" END, step = greatest(step, %(s)s) WHERE {_WORLD}",
                        {"s": step, "at": world_time, "t": t, "w": w})

    async def save_tree(self, t: str, w: str, definition: WorldDefined) -> None:
        """The tree, and its objects at their initial states (objects already known keep theirs)."""
        await self._run("INSERT INTO gw_trees (tenant_id, world_id, definition) VALUES (%(t)s, %(w)s, %(d)s)"
                        " ON CONFLICT (tenant_id, world_id) DO UPDATE SET definition = EXCLUDED.definition",
                        {"t": t, "w": w, "d": definition.model_dump_json()})
        rows = [(t, w, f"{w}:{s.name}:{a.name}:{o.name}", o.state)
                for s in definition.sectors for a in s.arenas for o in a.objects]
        async with self.conn.cursor() as cur:
            await cur.executemany("INSERT INTO gw_objects (tenant_id, world_id, path, state)"
                                  " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING", rows)

    async def set_object_state(self, t: str, w: str, path: str, state: str, by: UUID) -> None:
        await self._run("UPDATE gw_objects SET state = %(s)s, changed_by = %(by)s"
                        f" WHERE {_WORLD} AND path = %(p)s AND (changed_by IS NULL OR changed_by < %(by)s)",
                        {"s": state, "by": by, "p": path, "t": t, "w": w})

    # ----- NPCs: position, walk and action; places they know

    async def add_npc(self, t: str, w: str, npc: str, location: str | None) -> None:
        await self._run("INSERT INTO gw_npcs (tenant_id, world_id, npc_id, location)"
                        " VALUES (%(t)s, %(w)s, %(n)s, %(l)s) ON CONFLICT DO NOTHING",
                        {"t": t, "w": w, "n": npc, "l": location})

    async def retire_npc(self, t: str, w: str, npc: str) -> None:
        """A retired NPC has no position or action any more (what it knew and planned stays readable)."""
        await self._run(f"DELETE FROM gw_npcs WHERE {_WORLD} AND npc_id = %(n)s", {"t": t, "w": w, "n": npc})

    async def move(
        self, t: str, w: str, npc: str, path: str, tile: tuple[int, int] | None, by: UUID, *, walked: bool
    ) -> None:
        """A position, unless a newer move was written; a step walked takes the tile off the route's front."""
        await self._run(
            "UPDATE gw_npcs SET location = %(p)s, tile_x = %(x)s, tile_y = %(y)s, moved_by = %(by)s,"
            " route = CASE WHEN %(walked)s AND route -> 0 = %(tile)s::jsonb THEN route - 0 ELSE route END"
            f" WHERE {_WORLD} AND npc_id = %(n)s AND (moved_by IS NULL OR moved_by < %(by)s)",
            {"p": path, "x": tile[0] if tile else None, "y": tile[1] if tile else None, "by": by,
             "walked": walked, "tile": json.dumps(list(tile)) if tile else None, "t": t, "w": w, "n": npc},
        )

    async def start_action(self, t: str, w: str, npc: str, fields: dict[str, Any], by: UUID) -> None:
        """The action that took effect and its route, unless a newer one was written."""
        await self._run(
            "UPDATE gw_npcs SET action = %(action)s, emoji = %(emoji)s, action_end = %(end)s,"
            " target = %(target)s, route = %(route)s, location = coalesce(%(arrived)s, location),"
            f" action_by = %(by)s WHERE {_WORLD} AND npc_id = %(n)s"
            " AND (action_by IS NULL OR action_by < %(by)s)",
            {**fields, "route": json.dumps([list(x) for x in fields["route"]]), "by": by,
             "t": t, "w": w, "n": npc},
        )

    async def add_known_places(self, t: str, w: str, npc: str, paths: Sequence[str]) -> None:
        async with self.conn.cursor() as cur:
            await cur.executemany("INSERT INTO gw_known_places (tenant_id, world_id, npc_id, path)"
                                  " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                  [(t, w, npc, p) for p in paths])

    # ----- plans

    async def add_plan(self, t: str, w: str, npc: str) -> None:
        await self._run("INSERT INTO gw_plans (tenant_id, world_id, npc_id) VALUES (%(t)s, %(w)s, %(n)s)"
                        " ON CONFLICT DO NOTHING", {"t": t, "w": w, "n": npc})

    async def plan(self, t: str, w: str, npc: str) -> dict[str, Any] | None:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute("SELECT day, wakes, sleeps, outline, items, fallbacks, goals, current,"
                              " plan_by, current_by"
                              f" FROM gw_plans WHERE {_WORLD} AND npc_id = %(n)s", {"t": t, "w": w, "n": npc})
            return await cur.fetchone()

    async def save_plan(self, t: str, w: str, npc: str, plan: dict[str, Any]) -> None:
        """The plan columns and the newest events that changed the plan and the current action (a row is made
        when missing: planning's events may come before NpcCreated)."""
        jsonb = {k: Jsonb(plan[k]) for k in ("outline", "items", "fallbacks", "goals")}
        await self._run(
            "INSERT INTO gw_plans (tenant_id, world_id, npc_id, day, wakes, sleeps, outline, items,"
            " fallbacks, goals, current, plan_by, current_by) VALUES (%(t)s, %(w)s, %(n)s, %(day)s,"
            " %(wakes)s, %(sleeps)s, %(outline)s, %(items)s, %(fallbacks)s, %(goals)s, %(current)s,"
            " %(plan_by)s, %(current_by)s) ON CONFLICT (tenant_id, world_id, npc_id)"
            " DO UPDATE SET day = EXCLUDED.day, wakes = EXCLUDED.wakes, sleeps = EXCLUDED.sleeps,"
            " outline = EXCLUDED.outline, items = EXCLUDED.items, fallbacks = EXCLUDED.fallbacks,"
            " goals = EXCLUDED.goals, current = EXCLUDED.current, plan_by = EXCLUDED.plan_by,"
            " current_by = EXCLUDED.current_by",
            {"t": t, "w": w, "n": npc, "day": plan["day"], "wakes": plan["wakes"], "sleeps": plan["sleeps"],
             **jsonb, "current": None if plan["current"] is None else Jsonb(plan["current"]),
             "plan_by": plan["plan_by"], "current_by": plan["current_by"]},
        )

    # ----- relationships

    async def save_relationship(
        self, t: str, w: str, npc: str, other: str, rel: tuple[int, float, str], at: datetime
    ) -> None:
        familiarity, sentiment, summary = rel
        await self._run(
            "INSERT INTO gw_relationships (tenant_id, world_id, npc_id, other_id, familiarity, sentiment,"
            " summary, last_talked) VALUES (%(t)s, %(w)s, %(n)s, %(o)s, %(f)s, %(s)s, %(m)s, %(at)s)"
            " ON CONFLICT (tenant_id, world_id, npc_id, other_id) DO UPDATE"
            " SET familiarity = EXCLUDED.familiarity, sentiment = EXCLUDED.sentiment,"
            " summary = EXCLUDED.summary, last_talked = EXCLUDED.last_talked",
            {"t": t, "w": w, "n": npc, "o": other, "f": familiarity, "s": sentiment, "m": summary, "at": at},
        )

    async def forget_other(self, t: str, w: str, other: str) -> None:
        """Every NPC of the world forgets ``other`` (a forgotten player)."""
        await self._run(f"DELETE FROM gw_relationships WHERE {_WORLD} AND other_id = %(o)s",
                        {"t": t, "w": w, "o": other})

    async def relationships(self, t: str, w: str, npc: str) -> list[dict[str, Any]]:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute("SELECT other_id, familiarity, sentiment, summary, last_talked"
                              f" FROM gw_relationships WHERE {_WORLD} AND npc_id = %(n)s ORDER BY other_id",
                              {"t": t, "w": w, "n": npc})
            return await cur.fetchall()

    # ----- reads of the routes

    async def clock(self, t: str, w: str) -> dict[str, Any] | None:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute("SELECT world_time, step, step_seconds, speed, paused, focus FROM gw_clocks"
                              f" WHERE {_WORLD}", {"t": t, "w": w})
            return await cur.fetchone()

    async def world_time(self, t: str, w: str) -> datetime | None:
        cur = await self.conn.execute(f"SELECT world_time FROM gw_clocks WHERE {_WORLD}", {"t": t, "w": w})
        row = await cur.fetchone()
        return row[0] if row else None

    async def tree(self, t: str, w: str) -> WorldDefined | None:
        cur = await self.conn.execute(f"SELECT definition FROM gw_trees WHERE {_WORLD}", {"t": t, "w": w})
        row = await cur.fetchone()
        return WorldDefined.model_validate(row[0]) if row else None

    async def objects(self, t: str, w: str) -> list[tuple[str, str]]:
        cur = await self.conn.execute(f"SELECT path, state FROM gw_objects WHERE {_WORLD} ORDER BY path",
                                      {"t": t, "w": w})
        return [(r[0], r[1]) for r in await cur.fetchall()]

    async def has_object(self, t: str, w: str, path: str) -> bool:
        cur = await self.conn.execute(f"SELECT 1 FROM gw_objects WHERE {_WORLD} AND path = %(p)s",
                                      {"t": t, "w": w, "p": path})
        return await cur.fetchone() is not None

    async def npc(self, t: str, w: str, npc: str) -> dict[str, Any] | None:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute("SELECT location, tile_x, tile_y, target,"
                              " jsonb_array_length(route) AS steps_left, action, emoji, action_end"
                              f" FROM gw_npcs WHERE {_WORLD} AND npc_id = %(n)s",
                              {"t": t, "w": w, "n": npc})
            return await cur.fetchone()

    async def known_places(self, t: str, w: str, npc: str) -> list[str]:
        cur = await self.conn.execute(f"SELECT path FROM gw_known_places WHERE {_WORLD} AND npc_id = %(n)s"
                                      " ORDER BY path", {"t": t, "w": w, "n": npc})
        return [r[0] for r in await cur.fetchall()]

    async def readiness(self, t: str, w: str) -> tuple[bool, bool, int]:
        """Whether the world has a clock and a tree, and how many NPCs have a position row."""
        cur = await self.conn.execute(
            f"SELECT EXISTS (SELECT 1 FROM gw_clocks WHERE {_WORLD}),"
            f" EXISTS (SELECT 1 FROM gw_trees WHERE {_WORLD}), (SELECT count(*) FROM gw_npcs WHERE {_WORLD})",
            {"t": t, "w": w})
        row = await cur.fetchone()
        assert row is not None
        return bool(row[0]), bool(row[1]), int(row[2])
