"""Accesses retrievals noted and the memory service has not turned into MemoriesAccessed events yet."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from services.memory.domain import NpcRef
from services.memory.repository._rows import Conn

__all__ = ["AccessQueries", "NotedAccess"]

NO_CAUSE = uuid.UUID(int=0)


@dataclass(frozen=True)
class NotedAccess:
    """One memory a retrieval (``query``) returned for an NPC at world time ``accessed_at`` while ``cause``
    was handled (None: no handling)."""

    npc_id: str
    cause: uuid.UUID | None
    query: str
    memory_id: str
    accessed_at: datetime


class AccessQueries:
    async def note_accesses(
        self, conn: Conn, npc: NpcRef, query: str, memory_ids: Sequence[str], at: datetime,
        cause: uuid.UUID | None, *, held: bool = True,
    ) -> None:
        """Note that a retrieval returned these memories (a repeat of the same handling's retrieval, e.g.
        after a restart, changes nothing: the later time of the two is kept). ``held``: a stepped world's
        step waits for them (the world's own retrievals); player traffic's do not hold a step."""
        await conn.execute(
            "INSERT INTO memory_accesses_pending (tenant_id, world_id, npc_id, cause, query_key, query,"
            " memory_id, accessed_at, place, held) SELECT %(t)s, %(w)s, %(n)s, %(c)s, md5(%(q)s)::uuid,"
            " %(q)s, m.id, %(at)s, m.place, %(held)s"
            " FROM unnest(%(ids)s::uuid[]) WITH ORDINALITY AS m(id, place)"
            " ON CONFLICT (tenant_id, world_id, npc_id, cause, query_key, memory_id) DO UPDATE"
            " SET accessed_at = greatest(memory_accesses_pending.accessed_at, excluded.accessed_at)",
            {"t": npc.tenant_id, "w": npc.world_id, "n": npc.npc_id, "c": cause or NO_CAUSE, "q": query,
             "at": at, "ids": list(memory_ids), "held": held},
        )

    async def take_accesses(
        self, conn: Conn, tenant: str, world: str, *, until: datetime | None = None, unheld_only: bool = False
    ) -> list[NotedAccess]:
        """Remove and return the world's noted accesses (with ``until``: those at or before that world
        time; with ``unheld_only``: only those no step waits for), in a fixed order: NPC, cause, query, then
        the memories best first."""
        cur = await conn.execute(
            "DELETE FROM memory_accesses_pending WHERE tenant_id = %s AND world_id = %s"
            " AND (%s::timestamptz IS NULL OR accessed_at <= %s::timestamptz) AND NOT (%s AND held)"
            " RETURNING npc_id, cause, query, memory_id, accessed_at, place",
            (tenant, world, until, until, unheld_only),
        )
        rows = sorted(await cur.fetchall(), key=lambda r: (r[0], str(r[1]), r[2], r[5], str(r[3])))
        return [NotedAccess(r[0], None if r[1] == NO_CAUSE else r[1], r[2], str(r[3]), r[4]) for r in rows]

    async def causes_by_players(self, conn: Conn, causes: Sequence[uuid.UUID]) -> set[uuid.UUID]:
        """Which of these events are a player's line (a retrieval made for one queries with the player's
        words, which are stored only sealed: ``npcworld.shredding``)."""
        if not causes:
            return set()
        cur = await conn.execute(
            "SELECT event_id FROM events WHERE event_id = ANY(%s::uuid[]) AND type = 'PlayerSpoke'",
            (list(causes),),
        )
        return {r[0] for r in await cur.fetchall()}

    async def worlds_with_accesses(self, conn: Conn) -> list[tuple[str, str, bool]]:
        """The (tenant, world, stepped) of worlds with noted accesses no step waits for: every access of a
        world that does not step, player traffic's in one that does."""
        cur = await conn.execute(
            "SELECT p.tenant_id, p.world_id, coalesce(bool_or(c.stepped), false)"
            " FROM memory_accesses_pending p LEFT JOIN memory_clocks c"
            " ON c.tenant_id = p.tenant_id AND c.world_id = p.world_id"
            " WHERE NOT p.held OR NOT coalesce(c.stepped, false) GROUP BY 1, 2 ORDER BY 1, 2"
        )
        return [(r[0], r[1], bool(r[2])) for r in await cur.fetchall()]
