"""Listing queries: an NPC's memories newest first, filtered by kind and world time, in keyset pages."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from psycopg.rows import dict_row

from services.memory.domain import Memory, NpcStream
from services.memory.repository._rows import _JOINED, _MEMORY_COLUMNS, _STREAM, Conn, _memory, _params

__all__ = ["ListingQueries"]

_PAGE = f"""
SELECT {_MEMORY_COLUMNS} FROM {_JOINED}
WHERE m.{_STREAM}
  AND (cardinality(%(kinds)s::text[]) = 0 OR m.kind = ANY(%(kinds)s::text[]))
  AND (%(since)s::timestamptz IS NULL OR m.created_at >= %(since)s::timestamptz)
  AND (%(until)s::timestamptz IS NULL OR m.created_at <= %(until)s::timestamptz)
  AND (%(after_at)s::timestamptz IS NULL
       OR (m.created_at, m.memory_id) < (%(after_at)s::timestamptz, %(after_id)s::uuid))
ORDER BY m.created_at DESC, m.memory_id DESC
LIMIT %(limit)s
"""


class ListingQueries:
    """The inspection side of the stream; mixed into MemoryRepository."""

    async def page(
        self,
        conn: Conn,
        stream: NpcStream,
        *,
        limit: int,
        kinds: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
        after: tuple[datetime, str] | None = None,
    ) -> list[Memory]:
        """Up to ``limit`` memories newest first (by creation), strictly after the keyset ``after``."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                _PAGE,
                _params(
                    stream,
                    kinds=list(kinds),
                    since=since,
                    until=until,
                    after_at=after[0] if after else None,
                    after_id=after[1] if after else None,
                    limit=limit,
                ),
            )
            return [_memory(stream.npc, r) for r in await cur.fetchall()]
