"""Listing queries: memories newest first in keyset pages; which memories and vectors a stream already has;
the world's vectors by text."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
from psycopg.rows import dict_row

from services.memory.domain import Memory, NpcRef, NpcStream
from services.memory.repository._rows import (
    _JOINED,
    _MEMORIES,
    _MEMORY_COLUMNS,
    Conn,
    _memory,
    _params,
    _vector_of,
)

__all__ = ["ListingQueries"]

_PAGE = f"""
SELECT {_MEMORY_COLUMNS} FROM {_JOINED}
WHERE m.{_MEMORIES}
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

    async def perceived(self, conn: Conn, stream: NpcStream, *, limit: int = 500) -> list[str]:
        """The descriptions of the NPC's ``limit`` latest perceived observations (to corroborate a claim)."""
        cur = await conn.execute(
            f"""SELECT description FROM memories
                WHERE {_MEMORIES} AND kind = 'observation' AND source = 'perceived'
                ORDER BY created_at DESC LIMIT %(limit)s""",
            _params(stream, limit=limit),
        )
        return [row[0] for row in await cur.fetchall()]

    async def times_told(self, conn: Conn, stream: NpcStream, told_by: str, line: str) -> int:
        """How many of the NPC's observations hold ``line`` as told by ``told_by`` (a repeated claim)."""
        cur = await conn.execute(
            f"""SELECT count(*) FROM memories
                WHERE {_MEMORIES} AND kind = 'observation' AND told_by = %(by)s
                  AND strpos(description, %(q)s) > 0""",
            _params(stream, by=told_by, q=f': "{line}"'),
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def existing_ids(self, conn: Conn, stream: NpcStream, memory_ids: Sequence[str]) -> set[str]:
        """Which of these memory ids the stream already holds."""
        cur = await conn.execute(
            "SELECT memory_id::text FROM memories "
            "WHERE npc_key = %(key)s AND memory_id = ANY(%(ids)s::uuid[])",
            _params(stream, ids=list(memory_ids)),
        )
        return {r[0] for r in await cur.fetchall()}

    async def stored_vector(
        self, conn: Conn, npc: NpcRef, model: str, memory_id: str, text: str
    ) -> npt.NDArray[np.float32] | None:
        """A vector of ``model`` already stored for this memory: its world's for its text (a rebuild, a
        replay: migration 0128), else that of the memory with its id in any of the tenant's worlds (a world
        fork copies memories with their ids, so the source's vector is the copy's); None when neither
        exists."""
        cur = await conn.execute(
            f"""SELECT coalesce(
                    (SELECT embedding FROM memory_vectors WHERE world_key = world_key(%(t)s, %(w)s)
                       AND model_key = memory_model_key(%(model)s) AND text_key = memory_text_key(%(text)s)),
                    (SELECT {_vector_of("world_key(n.tenant_id, n.world_id)")}
                     FROM memories AS m JOIN memory_npcs AS n USING (npc_key)
                     WHERE m.memory_id = %(id)s::uuid AND n.tenant_id = %(t)s
                       AND m.embedding_model = %(model)s LIMIT 1))::text""",
            {"t": npc.tenant_id, "w": npc.world_id, "model": model, "text": text, "id": memory_id},
        )
        row = await cur.fetchone()
        return None if row is None or row[0] is None else _parsed(row[0])


def _parsed(vector: str) -> npt.NDArray[np.float32]:
    return np.array(vector.strip("[]").split(","), dtype=np.float32)
