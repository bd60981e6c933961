"""Settled reads of a world's events in store order, for the event log and the SSE stream.

A sequence number is taken before its transaction commits, so a reader that simply asks for
``seq > last`` can see seq 7 before seq 6 commits and skip 6 for ever. A row is *settled* when
the transaction that wrote it (its xmin, a subtransaction id taken at insert) is older than every
transaction still running; only the settled prefix is returned, so a resumed stream has no gaps.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from psycopg import AsyncConnection

from npcworld.eventstore import EventFilter, EventStore, StoredEvent

__all__ = ["EventReader"]

# age() compares xids circularly against one reference; frozen rows have the largest age.
_SETTLED = "age(xmin) > age(pg_snapshot_xmin(pg_current_snapshot())::xid)"


class EventReader:
    """Reads a tenant's world events after a sequence number, never past an unsettled row."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn
        self.store = EventStore()

    async def settled_after(self, where: EventFilter, after_seq: int, limit: int) -> list[StoredEvent]:
        """At most ``limit`` events matching ``where`` after ``after_seq``, up to the first unsettled one. A
        fork's inherited events come first and are all settled (they were committed before the fork)."""
        inherited = await self.store.read_all(self.conn, after_seq, limit,
                                              replace(where, history="inherited"))
        if len(inherited) >= limit:
            return inherited
        after_seq = inherited[-1].seq if inherited else after_seq
        limit -= len(inherited)
        clauses, params = (
            ["in_world(tenant_id, world_id, %s, %s)", "seq > %s"],
            [where.tenant_id, where.world_id, after_seq],
        )
        if where.npc_id is not None:
            clauses.append("npc_id = %s")
            params.append(where.npc_id)
        if where.types:
            clauses.append("type = ANY(%s)")
            params.append(list(where.types))  # type: ignore[arg-type]
        if where.until_world_time is not None:
            clauses.append("world_time <= %s")
            params.append(where.until_world_time)  # type: ignore[arg-type]
        cur = await self.conn.execute(
            f"SELECT seq, {_SETTLED} FROM events WHERE {' AND '.join(clauses)} ORDER BY seq LIMIT %s",
            [*params, limit],
            prepare=False if where.types else None,  # as EventStore.read_all: the type index is partial
        )
        settled = 0
        for _, ok in await cur.fetchall():
            if not ok:
                break
            settled += 1
        if settled == 0:
            return inherited
        own = await self.store.read_all(self.conn, after_seq, settled, replace(where, history="own"))
        return [*inherited, *own]
