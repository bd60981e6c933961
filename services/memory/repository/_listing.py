"""Listing queries: memories newest first in keyset pages; which memories and vectors a stream already has."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
from psycopg.rows import dict_row

from services.memory.domain import Memory, NpcStream
from services.memory.repository._rows import _JOINED, _MEMORIES, _MEMORY_COLUMNS, Conn, _memory, _params

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

    async def keep_vectors(self, conn: Conn) -> None:
        """Keep every stored vector in a temporary table until commit (a replay empties ``memories``)."""
        await conn.execute(
            "CREATE TEMP TABLE memory_vectors_kept ON COMMIT DROP AS "
            "SELECT DISTINCT ON (m.memory_id) m.memory_id, n.tenant_id, m.embedding_model, m.embedding"
            " FROM memories AS m JOIN memory_npcs AS n USING (npc_key)"
        )
        await conn.execute("CREATE INDEX ON memory_vectors_kept (memory_id)")

    async def known_vectors(
        self, conn: Conn, tenant_id: str, memory_ids: Sequence[str], model: str, *, kept: bool = False
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Vectors of ``model`` already stored for these memory ids in any of the tenant's streams.

        A world fork copies memories with their ids, so the source stream's vector is the copy's vector;
        with ``kept`` the vectors saved by ``keep_vectors`` count too.
        """
        also = " UNION ALL SELECT memory_id, tenant_id, embedding_model, embedding FROM memory_vectors_kept"
        cur = await conn.execute(
            f"""SELECT DISTINCT ON (memory_id) memory_id::text, embedding::text FROM (
                    SELECT m.memory_id, n.tenant_id, m.embedding_model, m.embedding
                    FROM memories AS m JOIN memory_npcs AS n USING (npc_key){also if kept else ""}
                ) AS v WHERE memory_id = ANY(%s::uuid[]) AND tenant_id = %s AND embedding_model = %s""",
            (list(memory_ids), tenant_id, model),
        )
        return {r[0]: np.array(r[1].strip("[]").split(","), dtype=np.float32) for r in await cur.fetchall()}
