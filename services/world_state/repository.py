"""All SQL of the world_state service."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from npcworld.contracts import (
    ActionRule,
    ActionStarted,
    Envelope,
    NpcCreated,
    NpcPersonaChanged,
    ObjectStateChange,
    WorldCreated,
    WorldDefined,
    WorldForked,
)
from services.world_state.domain import ClockState, NpcState, NpcView, WorldView

__all__ = ["TABLES", "WorldRepository"]

TABLES = (
    "ws_worlds", "ws_npcs", "ws_definitions", "ws_objects", "ws_clocks", "ws_rules", "ws_validators",
)

_NPC_STATE = (
    "SELECT npc_id, location, tile_x, tile_y, route, target, action, emoji, action_end, pending_state,"
    " held_object FROM ws_npcs WHERE tenant_id = %s AND world_id = %s ORDER BY npc_id"
)
_CLOCK = (
    "SELECT tenant_id, world_id, world_time, step, step_seconds, speed, paused, last_tick_wall, until, focus"
    " FROM ws_clocks WHERE tenant_id = %s AND world_id = %s"
)


def _npc_state(row: dict[str, Any]) -> NpcState:
    tile = (row["tile_x"], row["tile_y"]) if row["tile_x"] is not None else None
    pending = ObjectStateChange.model_validate(row["pending_state"]) if row["pending_state"] else None
    return NpcState(
        npc_id=row["npc_id"],
        path=row["location"],
        tile=tile,
        route=tuple((x, y) for x, y in row["route"]),
        target=row["target"],
        action=row["action"],
        emoji=row["emoji"],
        action_end=row["action_end"],
        pending_state=pending,
        held_object=row["held_object"],
    )


class WorldRepository:
    """Reads and writes the ws_* tables on the caller's connection."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def add_world(self, event: Envelope, payload: WorldCreated) -> None:
        await self.conn.execute(
            "INSERT INTO ws_worlds (tenant_id, world_id, name, template, start_time, created_seq_event)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, world_id) DO NOTHING",
            (
                event.tenant_id,
                event.world_id,
                payload.name,
                payload.template,
                payload.start_time,
                event.event_id,
            ),
        )

    async def mark_forked(self, tenant_id: str, world_id: str, payload: WorldForked) -> None:
        await self.conn.execute(
            "UPDATE ws_worlds SET forked_from = %s WHERE tenant_id = %s AND world_id = %s",
            (payload.source_world_id, tenant_id, world_id),
        )

    async def mark_deleted(self, tenant_id: str, world_id: str) -> None:
        for table, column in (("ws_worlds", "deleted"), ("ws_clocks", "paused")):
            await self.conn.execute(
                f"UPDATE {table} SET {column} = true WHERE tenant_id = %s AND world_id = %s",
                (tenant_id, world_id),
            )

    async def add_npc(self, event: Envelope, p: NpcCreated, tile: tuple[int, int] | None) -> None:
        await self.conn.execute(
            "INSERT INTO ws_npcs (tenant_id, world_id, npc_id, name, age, traits, occupation, location,"
            " tile_x, tile_y) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id, npc_id) DO NOTHING",
            (
                event.tenant_id,
                event.world_id,
                p.npc_id,
                p.name,
                p.age,
                list(p.traits),
                p.occupation,
                p.location,
                tile[0] if tile else None,
                tile[1] if tile else None,
            ),
        )

    async def change_persona(self, tenant_id: str, world_id: str, p: NpcPersonaChanged) -> None:
        await self.conn.execute(
            "UPDATE ws_npcs SET name = %s, age = %s, traits = %s, occupation = %s"
            " WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (p.name, p.age, list(p.traits), p.occupation, tenant_id, world_id, p.npc_id),
        )

    async def retire_npc(self, tenant_id: str, world_id: str, npc_id: str) -> None:
        """A retired NPC leaves the simulation: no position, no action, nothing it holds."""
        await self.conn.execute(
            "DELETE FROM ws_npcs WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (tenant_id, world_id, npc_id),
        )

    async def save_definition(self, event: Envelope, definition: WorldDefined, start_time: datetime) -> None:
        """The tree, its objects' initial states, and a paused clock at the world's start time."""
        await self.conn.execute(
            "INSERT INTO ws_definitions (world_id, tenant_id, definition, defined_by) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id) DO UPDATE"
            " SET definition = EXCLUDED.definition, defined_by = EXCLUDED.defined_by",
            (event.world_id, event.tenant_id, definition.model_dump_json(), event.event_id),
        )
        rows = [
            (event.world_id, f"{event.world_id}:{s.name}:{a.name}:{o.name}", event.tenant_id, o.state)
            for s in definition.sectors
            for a in s.arenas
            for o in a.objects
        ]
        async with self.conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO ws_objects (world_id, path, tenant_id, state) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (tenant_id, world_id, path) DO NOTHING",
                rows,
            )
        await self.add_clock(event.tenant_id, event.world_id, start_time, definition.step_seconds)

    async def save_rules(self, tenant_id: str, world_id: str, rules: Sequence[ActionRule]) -> None:
        """The world's rules over decided actions, replacing the previous set."""
        await self.conn.execute(
            "INSERT INTO ws_rules (tenant_id, world_id, rules) VALUES (%s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id) DO UPDATE SET rules = EXCLUDED.rules",
            (tenant_id, world_id, Jsonb([r.model_dump(mode="json") for r in rules])),
        )

    async def rules(self, tenant_id: str, world_id: str) -> list[ActionRule]:
        cur = await self.conn.execute(
            "SELECT rules FROM ws_rules WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
        )
        row = await cur.fetchone()
        return [ActionRule.model_validate(r) for r in row[0]] if row else []

    async def add_clock(
        self, tenant_id: str, world_id: str, start_time: datetime, step_seconds: float
    ) -> None:
        """A paused clock at the world's start time, unless it has one already."""
        await self.conn.execute(
            "INSERT INTO ws_clocks (world_id, tenant_id, world_time, step_seconds) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (tenant_id, world_id) DO NOTHING",
            (world_id, tenant_id, start_time, step_seconds),
        )

    async def definition(self, tenant_id: str, world_id: str) -> tuple[UUID, WorldDefined] | None:
        cur = await self.conn.execute(
            "SELECT defined_by, definition FROM ws_definitions WHERE tenant_id = %s AND world_id = %s",
            (tenant_id, world_id),
        )
        row = await cur.fetchone()
        return (row[0], WorldDefined.model_validate(row[1])) if row else None

    async def start_time(self, tenant_id: str, world_id: str) -> datetime | None:
        cur = await self.conn.execute(
            "SELECT start_time FROM ws_worlds WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
        )
        row = await cur.fetchone()
        return row[0] if row else None

    async def npc_states(self, tenant_id: str, world_id: str, *, lock: bool = False) -> list[NpcState]:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(_NPC_STATE + (" FOR UPDATE" if lock else ""), (tenant_id, world_id))
            return [_npc_state(row) for row in await cur.fetchall()]

    async def start_action(
        self, tenant_id: str, world_id: str, npc_id: str, started: ActionStarted, by: UUID
    ) -> None:
        """The NPC's current action and route, unless a newer action was written already."""
        await self.conn.execute(
            "UPDATE ws_npcs SET action = %(action)s, emoji = %(emoji)s, action_end = %(end)s,"
            " pending_state = %(pending)s, target = %(target)s, route = %(route)s,"
            " location = coalesce(%(arrived)s, location), action_by = %(by)s"
            " WHERE tenant_id = %(t)s AND world_id = %(w)s AND npc_id = %(n)s"
            " AND (action_by IS NULL OR action_by < %(by)s)",
            {
                "action": started.description,
                "emoji": started.emoji,
                "end": started.ends_at,
                "pending": started.object_state.model_dump_json() if started.object_state else None,
                "target": started.target,
                "route": json.dumps([list(t) for t in started.route]),
                "arrived": started.arrived_at,
                "by": by,
                "t": tenant_id,
                "w": world_id,
                "n": npc_id,
            },
        )

    async def apply_move(
        self,
        tenant_id: str,
        world_id: str,
        npc_id: str,
        path: str,
        tile: tuple[int, int] | None,
        moved_by: UUID,
        *,
        walked: bool = False,
    ) -> None:
        """A position from an event, unless a newer move was already written (replays never go back); a step
        world-state ``walked`` also takes the tile off the front of the route."""
        await self.conn.execute(
            "UPDATE ws_npcs SET location = %(path)s, tile_x = %(x)s, tile_y = %(y)s, moved_by = %(by)s,"
            " route = CASE WHEN %(walked)s AND route -> 0 = %(tile)s::jsonb THEN route - 0 ELSE route END"
            " WHERE tenant_id = %(t)s AND world_id = %(w)s AND npc_id = %(n)s"
            " AND (moved_by IS NULL OR moved_by < %(by)s)",
            {
                "path": path,
                "x": tile[0] if tile else None,
                "y": tile[1] if tile else None,
                "tile": json.dumps(list(tile)) if tile else None,
                "walked": walked,
                "by": moved_by,
                "t": tenant_id,
                "w": world_id,
                "n": npc_id,
            },
        )

    async def hold_object(self, tenant_id: str, world_id: str, npc_id: str, path: str) -> None:
        """The NPC's action took hold of the object: its pending state is applied."""
        await self.conn.execute(
            "UPDATE ws_npcs SET pending_state = NULL, held_object = %s"
            " WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (path, tenant_id, world_id, npc_id),
        )

    async def release_object(self, tenant_id: str, world_id: str, npc_id: str, path: str) -> None:
        """The NPC's action ended and let go of the object."""
        await self.conn.execute(
            "UPDATE ws_npcs SET held_object = NULL"
            " WHERE tenant_id = %s AND world_id = %s AND npc_id = %s AND held_object = %s",
            (tenant_id, world_id, npc_id, path),
        )

    async def set_object_state(
        self, tenant_id: str, world_id: str, path: str, state: str, source: str, changed_by: UUID
    ) -> None:
        await self.conn.execute(
            "UPDATE ws_objects SET state = %s, source = %s, changed_by = %s WHERE tenant_id = %s"
            " AND world_id = %s AND path = %s AND (changed_by IS NULL OR changed_by < %s)",
            (state, source, changed_by, tenant_id, world_id, path, changed_by),
        )

    async def objects(self, tenant_id: str, world_id: str) -> dict[str, str]:
        cur = await self.conn.execute(
            "SELECT path, state FROM ws_objects WHERE tenant_id = %s AND world_id = %s ORDER BY path",
            (tenant_id, world_id),
        )
        return {row[0]: row[1] for row in await cur.fetchall()}

    async def clock(self, tenant_id: str, world_id: str, *, lock: bool = False) -> ClockState | None:
        sql = _CLOCK + (" FOR UPDATE SKIP LOCKED" if lock else "")
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(sql, (tenant_id, world_id))
            row = await cur.fetchone()
        if row is None:
            return None
        focus = row.pop("focus")
        return ClockState(**row, focus=None if focus is None else tuple(focus))

    async def save_clock(self, clock: ClockState) -> None:
        """A clock change's settings (pause, pace, step length, stop time). Its step and world time are the
        ticks' alone (``apply_tick``): a change folded from a clock read before a tick committed must not
        take the tick back. The last tick's wall time only ever moves forward (folds commute)."""
        await self.conn.execute(
            "UPDATE ws_clocks SET step_seconds = %s, speed = %s, paused = %s,"
            " last_tick_wall = greatest(last_tick_wall, %s), until = %s, focus = %s"
            " WHERE tenant_id = %s AND world_id = %s",
            (
                clock.step_seconds,
                clock.speed,
                clock.paused,
                clock.last_tick_wall,
                clock.until,
                None if clock.focus is None else list(clock.focus),
                clock.tenant_id,
                clock.world_id,
            ),
        )

    async def apply_tick(
        self, tenant_id: str, world_id: str, step: int, world_time: datetime, wall: float
    ) -> None:
        """A step (never going back) and the wall time it was taken at, which paces real-time clocks."""
        await self.conn.execute(
            "UPDATE ws_clocks SET step = greatest(step, %(s)s),"
            " world_time = CASE WHEN step < %(s)s THEN %(t)s ELSE world_time END,"
            " last_tick_wall = greatest(last_tick_wall, %(wall)s) WHERE tenant_id = %(tenant)s"
            " AND world_id = %(w)s",
            {"s": step, "t": world_time, "wall": wall, "tenant": tenant_id, "w": world_id},
        )

    async def has_held_work(self, tenant_id: str, world_id: str) -> bool:
        """Does a service hold work of this world for the end of its step (``held_work``, the shared core's
        record, which the memory service's held writes keep)?"""
        cur = await self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM held_work"
            " WHERE tenant_id = %s AND world_id = %s AND until = 'step')",
            (tenant_id, world_id),
        )
        row = await cur.fetchone()
        return bool(row and row[0])

    async def running_clocks(self) -> list[tuple[str, str]]:
        """(tenant_id, world_id) of every running clock."""
        cur = await self.conn.execute(
            "SELECT tenant_id, world_id FROM ws_clocks WHERE NOT paused ORDER BY tenant_id, world_id"
        )
        return [(row[0], row[1]) for row in await cur.fetchall()]

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
