"""All SQL of the planning service: planner state per NPC, due NPCs per world, the world's roster."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

from npcworld.canon import canons_of
from services.planning.domain import NpcKey, PlannerState
from services.planning.snapshot import dump_state, load_state

__all__ = ["TABLES", "PlanningRepository"]

TABLES = ("planning_npcs",)
# due_at of an NPC whose persona has not arrived yet: no tick plans for it.
_NEVER = datetime(9999, 1, 1, tzinfo=UTC)


_DUE = (
    "SELECT npc_id, state, due_at FROM planning_npcs"
    " WHERE tenant_id = %(t)s AND world_id = %(w)s AND NOT retired AND (due_at IS NULL OR due_at <= %(now)s"
    "  OR ((%(everyone)s OR npc_id = ANY(%(detail)s)) AND (state -> 'current' ->> 'coarse') = 'true'))"
    " ORDER BY due_at NULLS FIRST, npc_id LIMIT %(limit)s"
)


def _due_params(
    tenant_id: str, world_id: str, now: datetime, limit: int, detail: Collection[str] | None
) -> dict[str, Any]:
    """``detail``: the NPCs in full detail (None: every NPC)."""
    return {"t": tenant_id, "w": world_id, "now": now, "limit": limit, "everyone": detail is None,
            "detail": sorted(detail or ())}


class PlanningRepository:
    """Reads and writes ``planning_npcs`` on the caller's connection (inside its transaction)."""

    async def get(self, conn: AsyncConnection[Any], key: NpcKey) -> PlannerState | None:
        """The NPC's state, locked until the transaction ends (perceptions and ticks arrive on different
        partitions, so two consumers may touch one NPC). The lock is an advisory one: a row lock would take
        a transaction id, and the relay publishes nothing newer than an open writer while the model thinks."""
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (_lock_name(key),))
        cur = await conn.execute(
            "SELECT state FROM planning_npcs WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (key.tenant_id, key.world_id, key.npc_id),
        )
        row = await cur.fetchone()
        return (await _with_canon(conn, [load_state(key, row[0])]))[0] if row else None

    async def peek(self, conn: AsyncConnection[Any], key: NpcKey) -> PlannerState | None:
        """The NPC's state as committed, without a lock (to prepare work that ``get`` then checks)."""
        cur = await conn.execute(
            "SELECT state FROM planning_npcs WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (key.tenant_id, key.world_id, key.npc_id),
        )
        row = await cur.fetchone()
        return (await _with_canon(conn, [load_state(key, row[0])]))[0] if row else None

    async def save(self, conn: AsyncConnection[Any], state: PlannerState) -> None:
        """Insert or replace the NPC's state; ``due_at`` follows the current action's end."""
        key = state.key
        due = (state.current.item.end if state.current else None) if state.ready else _NEVER
        await conn.execute(
            "INSERT INTO planning_npcs (tenant_id, world_id, npc_id, name, state, due_at)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, world_id, npc_id) DO UPDATE"
            " SET name = EXCLUDED.name, state = EXCLUDED.state, due_at = EXCLUDED.due_at, updated_at = now()",
            (key.tenant_id, key.world_id, key.npc_id, state.persona.name, Jsonb(dump_state(state)), due),
        )

    async def due(
        self, conn: AsyncConnection[Any], tenant_id: str, world_id: str, now: datetime, *, limit: int,
        detail: Collection[str] | None = None,
    ) -> list[PlannerState]:
        """NPCs of the world whose current action has ended by ``now`` (or who have none), and NPCs in full
        detail (``detail``; None: all of them) still on a coarse action; locked like ``get``. NPCs another
        transaction holds are skipped and come up on a later tick."""
        cur = await conn.execute(
            f"SELECT npc_id, state FROM ({_DUE}) AS due"
            " WHERE pg_try_advisory_xact_lock("
            "   hashtextextended('planning:' || %(t)s || ':' || %(w)s || ':' || npc_id, 0))"
            " ORDER BY due_at NULLS FIRST, npc_id",
            _due_params(tenant_id, world_id, now, limit, detail),
        )
        rows = await cur.fetchall()
        return await _with_canon(conn, [load_state(NpcKey(tenant_id, world_id, npc), s) for npc, s in rows])

    async def peek_due(
        self, conn: AsyncConnection[Any], tenant_id: str, world_id: str, now: datetime, *, limit: int,
        detail: Collection[str] | None = None,
    ) -> list[PlannerState]:
        """What ``due`` would return, as committed and without locks (to prepare work ``due`` then checks)."""
        cur = await conn.execute(_DUE, _due_params(tenant_id, world_id, now, limit, detail))
        rows = await cur.fetchall()
        return await _with_canon(conn, [load_state(NpcKey(tenant_id, world_id, n), s) for n, s, _ in rows])

    async def roster(
        self, conn: AsyncConnection[Any], tenant_id: str, world_id: str
    ) -> list[tuple[str, str]]:
        """(npc_id, name) of every NPC planning knows in the world, retired ones left out."""
        cur = await conn.execute(
            "SELECT npc_id, name FROM planning_npcs WHERE tenant_id = %s AND world_id = %s AND NOT retired"
            " ORDER BY npc_id",
            (tenant_id, world_id),
        )
        return [(npc, name) for npc, name in await cur.fetchall()]

    async def retire(self, conn: AsyncConnection[Any], key: NpcKey) -> None:
        """The NPC gets no next action from now on (its state stays, for the plan views)."""
        await conn.execute(
            "UPDATE planning_npcs SET retired = true WHERE tenant_id = %s AND world_id = %s AND npc_id = %s",
            (key.tenant_id, key.world_id, key.npc_id),
        )

    async def delete_world(self, conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> None:
        """Forget every NPC of a deleted world."""
        await conn.execute(
            "DELETE FROM planning_npcs WHERE tenant_id = %s AND world_id = %s", (tenant_id, world_id)
        )


async def _with_canon(conn: AsyncConnection[Any], states: list[PlannerState]) -> list[PlannerState]:
    """The states with the canon their NPCs hold true now (read from the log, not stored with them)."""
    if not states:
        return states
    key = states[0].key
    canons = await canons_of(conn, key.tenant_id, key.world_id, [s.key.npc_id for s in states])
    return [replace(s, canon=canons[s.key.npc_id]) for s in states]


def _lock_name(key: NpcKey) -> str:
    """The advisory lock of one NPC's planning state (``due`` builds the same name in SQL)."""
    return f"planning:{key.tenant_id}:{key.world_id}:{key.npc_id}"
