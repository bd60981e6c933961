"""Designers' edits of a stream: a memory's text corrected (with its new vector), a memory forgotten."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from services.memory.domain import NpcStream
from services.memory.repository._rows import _MEMORIES, _STREAM, Conn, _params, _vector

__all__ = ["EditingQueries"]


class EditingQueries:
    """Mixed into MemoryRepository; every method runs in the caller's transaction."""

    async def correct(
        self, conn: Conn, stream: NpcStream, memory_id: str, description: str, state_key: str | None,
        vector: npt.NDArray[np.float32],
    ) -> bool:
        """Replace the memory's text, duplicate key and vector (in the stream's space); False if absent."""
        cur = await conn.execute(
            f"""UPDATE memories SET description = %(d)s, state_hash = memory_state_hash(%(sk)s),
                    embedding = %(v)s::halfvec
                WHERE {_MEMORIES} AND memory_id = %(id)s::uuid""",
            _params(stream, d=description, sk=state_key, v=_vector(vector), id=memory_id),
        )
        return cur.rowcount > 0

    async def forget(self, conn: Conn, stream: NpcStream, memory_id: str) -> None:
        """Delete the memory (its last access goes with it) and keep a tombstone against its re-insertion."""
        await conn.execute(
            "INSERT INTO memory_forgotten (npc_key, memory_id) VALUES (%(key)s, %(id)s::uuid)"
            " ON CONFLICT DO NOTHING",
            _params(stream, id=memory_id),
        )
        cur = await conn.execute(
            f"DELETE FROM memories WHERE {_MEMORIES} AND memory_id = %(id)s::uuid",
            _params(stream, id=memory_id),
        )
        if cur.rowcount:
            await conn.execute(
                f"UPDATE memory_npcs SET memory_count = memory_count - %(removed)s WHERE {_STREAM}",
                _params(stream, removed=cur.rowcount),
            )

    async def forgotten(self, conn: Conn, stream: NpcStream, memory_ids: list[str]) -> set[str]:
        """Which of these memory ids a designer removed from the stream."""
        cur = await conn.execute(
            "SELECT memory_id::text FROM memory_forgotten WHERE npc_key = %(key)s"
            " AND memory_id = ANY(%(ids)s::uuid[])",
            _params(stream, ids=memory_ids),
        )
        return {r[0] for r in await cur.fetchall()}
