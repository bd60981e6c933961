"""Designers' edits of a stream: a memory's text corrected (with its new vector), a memory forgotten."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from services.memory.domain import NpcStream
from services.memory.repository._rows import (
    _ADD_VECTORS,
    _MEMORIES,
    _STREAM,
    Conn,
    _params,
    _vector,
    drop_unused_vectors,
)

__all__ = ["EditingQueries"]


class EditingQueries:
    """Mixed into MemoryRepository; every method runs in the caller's transaction."""

    async def correct(
        self, conn: Conn, stream: NpcStream, memory_id: str, description: str, state_key: str | None,
        vector: npt.NDArray[np.float32],
    ) -> bool:
        """Replace the memory's text, duplicate key and vector (in the stream's space); False if absent. The
        old text's vector goes when no memory of the world still uses it."""
        cur = await conn.execute(
            f"""WITH old AS (
                    SELECT description FROM memories WHERE {_MEMORIES} AND memory_id = %(id)s::uuid FOR UPDATE
                ), given AS (
                    SELECT %(d)s::text AS description, %(v)s::halfvec AS embedding FROM old
                ), shared AS ({_ADD_VECTORS})
                UPDATE memories AS m SET description = %(d)s, state_hash = memory_state_hash(%(sk)s),
                    embedding = CASE WHEN n.in_row_vectors THEN %(v)s::halfvec END
                FROM old, memory_npcs AS n
                WHERE m.{_MEMORIES} AND m.memory_id = %(id)s::uuid AND n.npc_key = m.npc_key
                RETURNING old.description""",
            _params(stream, d=description, sk=state_key, v=_vector(vector), id=memory_id,
                    model=stream.embedding_model),
        )
        row = await cur.fetchone()
        if row is not None:
            await drop_unused_vectors(conn, stream.npc.tenant_id, stream.npc.world_id, [row[0]])
        return row is not None

    async def forget(self, conn: Conn, stream: NpcStream, memory_id: str) -> None:
        """Delete the memory (its last access goes with it, and its text's vector when no memory of the world
        still uses it) and keep a tombstone against its re-insertion."""
        await conn.execute(
            "INSERT INTO memory_forgotten (npc_key, memory_id) VALUES (%(key)s, %(id)s::uuid)"
            " ON CONFLICT DO NOTHING",
            _params(stream, id=memory_id),
        )
        cur = await conn.execute(
            f"DELETE FROM memories WHERE {_MEMORIES} AND memory_id = %(id)s::uuid RETURNING description",
            _params(stream, id=memory_id),
        )
        texts = [r[0] for r in await cur.fetchall()]
        if texts:
            await conn.execute(
                f"UPDATE memory_npcs SET memory_count = memory_count - %(removed)s WHERE {_STREAM}",
                _params(stream, removed=len(texts)),
            )
            await drop_unused_vectors(conn, stream.npc.tenant_id, stream.npc.world_id, texts)

    async def forgotten(self, conn: Conn, stream: NpcStream, memory_ids: list[str]) -> set[str]:
        """Which of these memory ids a designer removed from the stream."""
        cur = await conn.execute(
            "SELECT memory_id::text FROM memory_forgotten WHERE npc_key = %(key)s"
            " AND memory_id = ANY(%(ids)s::uuid[])",
            _params(stream, ids=memory_ids),
        )
        return {r[0] for r in await cur.fetchall()}
