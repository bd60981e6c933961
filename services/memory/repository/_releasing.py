"""Releasing a step's held writes in short transactions: the rows in their fixed order, a few at a time."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from npcworld.contracts import Envelope, envelope_from_dict
from services.memory.repository._rows import Conn, in_release_order

__all__ = ["HeldRelease"]

# The step's held writes: not accesses, and stored before the event that releases them (``before``; None:
# all). An event stored after the StepCompleted waits for the next step, however the consumer interleaved
# the topics, so each release applies the same set in every run.
_STEP_ROWS = """
h.tenant_id = %(t)s AND h.world_id = %(w)s AND h.type <> 'MemoriesAccessed'
AND NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = h.event_id
                AND e.seq >= (SELECT seq FROM events WHERE event_id = %(before)s))
"""
# World time, NPC, type, arrival; "C" compares text as Python does (by code point).
_ORDER = 'h.world_time, h.npc_id COLLATE "C", h.type COLLATE "C", h.id'


class HeldRelease:
    """Queries on ``memory_held`` for releasing a step; every method runs on the caller's connection."""

    async def peek(
        self, conn: Conn, tenant: str, world: str, *, before: uuid.UUID | None, limit: int
    ) -> list[tuple[int, Envelope]]:
        """The step's first ``limit`` held writes in release order, with their row ids; nothing changes."""
        cur = await conn.execute(
            f"SELECT h.id, h.envelope FROM memory_held h WHERE {_STEP_ROWS} ORDER BY {_ORDER} LIMIT %(n)s",
            {"t": tenant, "w": world, "before": before, "n": limit},
        )
        return [(int(r[0]), envelope_from_dict(r[1])) for r in await cur.fetchall()]

    async def take(self, conn: Conn, held_id: int) -> bool:
        """Remove one held row; False when it is gone already (another instance released it)."""
        cur = await conn.execute("DELETE FROM memory_held WHERE id = %s", (held_id,))
        return cur.rowcount == 1

    async def take_all(
        self, conn: Conn, tenant: str, world: str, *, before: uuid.UUID | None
    ) -> list[Envelope]:
        """Remove and return every held write of the step, in release order."""
        cur = await conn.execute(
            f"DELETE FROM memory_held h WHERE {_STEP_ROWS}"
            " RETURNING h.world_time, h.npc_id, h.type, h.id, h.envelope",
            {"t": tenant, "w": world, "before": before},
        )
        return in_release_order(await cur.fetchall())

    async def park(self, conn: Conn, tenant: str, world: str, event_ids: Sequence[uuid.UUID]) -> None:
        """Move these just-appended events' outbox rows to ``memory_unpublished`` (same transaction: no
        consumer ever sees them early)."""
        if event_ids:
            await conn.execute(
                "WITH moved AS (DELETE FROM outbox o USING events e"
                " WHERE o.seq = e.seq AND e.event_id = ANY(%s) RETURNING o.seq, o.topic, o.key)"
                " INSERT INTO memory_unpublished (seq, tenant_id, world_id, topic, key)"
                " SELECT seq, %s, %s, topic, key FROM moved",
                (list(event_ids), tenant, world),
            )

    async def publish_parked(self, conn: Conn, tenant: str, world: str) -> int:
        """Move the world's parked events to the outbox, all in one statement; returns how many."""
        cur = await conn.execute(
            "WITH moved AS (DELETE FROM memory_unpublished WHERE tenant_id = %s AND world_id = %s"
            " RETURNING seq, topic, key)"
            " INSERT INTO outbox (seq, topic, key) SELECT seq, topic, key FROM moved ORDER BY seq",
            (tenant, world),
        )
        return cur.rowcount

