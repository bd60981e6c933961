"""Retrieval queries: exact top-k in one scan; HNSW and per-importance candidate lists for large streams."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
from psycopg import sql

from services.memory.domain import (
    Candidate,
    NpcStream,
    RetrievalWeights,
    ScoredMemory,
)
from services.memory.repository._rows import _EXACT, _JOINED, _STREAM, Conn, _params, _vector

__all__ = ["RankingQueries"]


class RankingQueries:
    """The read side of retrieval; mixed into MemoryRepository."""

    async def exact_top_k(
        self,
        conn: Conn,
        stream: NpcStream,
        query: npt.NDArray[np.float32],
        now: datetime,
        weights: RetrievalWeights,
        k: int,
    ) -> list[ScoredMemory]:
        """Exact top-k over the whole stream in one SQL scan (fastest for small streams)."""
        cur = await conn.execute(
            _EXACT,
            _params(
                stream,
                q=_vector(query),
                now=now,
                k=k,
                wrec=weights.recency,
                wimp=weights.importance,
                wrel=weights.relevance,
            ),
        )
        return [ScoredMemory(r[0], r[1], r[2], r[3], r[4]) for r in await cur.fetchall()]

    async def accessed_and_importance_range(
        self, conn: Conn, stream: NpcStream
    ) -> tuple[int, int, datetime, datetime]:
        """Min/max importance and last access over the stream (four index probes, no scan)."""
        cur = await conn.execute(
            """SELECT min(importance), max(importance), min(last_accessed_at), max(last_accessed_at)
               FROM memory_access WHERE npc_key = %(key)s""",
            _params(stream),
        )
        row = await cur.fetchone()
        assert row is not None and row[0] is not None
        return int(row[0]), int(row[1]), row[2], row[3]

    async def nearest(
        self,
        conn: Conn,
        stream: NpcStream,
        query: npt.NDArray[np.float32],
        limit: int,
        ef_search: int,
        *,
        iterative: bool = True,
    ) -> list[tuple[str, float]]:
        """The ``limit`` memories most similar to ``query`` via the HNSW index, as (id, cosine), best first.

        Iterative scan keeps reading the graph until enough rows pass the per-NPC filter, so this
        works with many NPCs in one index. Without it, one graph search of ``ef_search`` candidates
        runs and only those of this NPC come back (possibly fewer than ``limit``).
        """
        # The settings are transaction-local: an autocommit connection gets a transaction of its own.
        async with conn.transaction() if conn.autocommit else contextlib.nullcontext():
            # The planner's HNSW cost estimate is pessimistic: for a few hundred rows it would rather
            # sort the NPC's whole stream, which is what this path exists to avoid.
            cur = await conn.execute(
                "SELECT current_setting('enable_sort'), set_config('enable_sort', 'off', true), "
                "set_config('hnsw.iterative_scan', %s, true), set_config('hnsw.ef_search', %s, true)",
                ("relaxed_order" if iterative else "off", str(min(max(ef_search, limit), 1000))),
            )
            row = await cur.fetchone()
            hits = await self._nearest(conn, stream, query, limit)
            await conn.execute("SELECT set_config('enable_sort', %s, true)", (row[0] if row else "on",))
            return hits

    async def _nearest(
        self, conn: Conn, stream: NpcStream, query: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[str, float]]:
        dims = sql.Literal(stream.embedding_dims)
        query_sql = sql.SQL(
            "SELECT memory_id::text, (embedding::vector({dims})) <=> %(q)s::vector({dims}) AS distance "
            "FROM memories WHERE {stream} AND embedding_dims = {dims} "
            "ORDER BY (embedding::vector({dims})) <=> %(q)s::vector({dims}) LIMIT %(limit)s"
        ).format(dims=dims, stream=sql.SQL(_STREAM))
        # relaxed_order may return rows slightly out of order: materialise, then sort exactly.
        wrapped = sql.SQL(
            "WITH hits AS MATERIALIZED ({q}) SELECT memory_id, 1 - distance FROM hits "
            "ORDER BY distance, memory_id"
        ).format(q=query_sql)
        # Never a prepared (generic) plan: without the actual npc_key and limit the planner picks a
        # full per-NPC sort over the HNSW index.
        cur = await conn.execute(wrapped, _params(stream, q=_vector(query), limit=limit), prepare=False)
        return [(r[0], float(r[1])) for r in await cur.fetchall()]

    async def recent_by_importance(
        self, conn: Conn, stream: NpcStream, size: int
    ) -> dict[int, list[tuple[str, datetime]]]:
        """For each importance 1-10, the ``size`` most recently accessed memories (ten index probes)."""
        cur = await conn.execute(
            """SELECT l.importance, m.memory_id::text, m.last_accessed_at
                FROM generate_series(1, 10) AS l(importance) CROSS JOIN LATERAL (
                    SELECT memory_id, last_accessed_at FROM memory_access
                    WHERE npc_key = %(key)s AND importance = l.importance
                    ORDER BY last_accessed_at DESC, memory_id LIMIT %(c)s) AS m
                ORDER BY l.importance, m.last_accessed_at DESC, m.memory_id""",
            _params(stream, c=size),
        )
        levels: dict[int, list[tuple[str, datetime]]] = {}
        for level, memory_id, accessed in await cur.fetchall():
            levels.setdefault(int(level), []).append((memory_id, accessed))
        return levels

    async def candidates(
        self, conn: Conn, stream: NpcStream, memory_ids: Sequence[str], query: npt.NDArray[np.float32]
    ) -> list[Candidate]:
        """Exact raw components of these memories for final scoring."""
        cur = await conn.execute(
            f"""SELECT m.memory_id::text, a.importance, a.last_accessed_at,
                       1 - (m.embedding <=> %(q)s::vector)
                FROM {_JOINED} WHERE m.{_STREAM} AND m.memory_id = ANY(%(ids)s::uuid[])""",
            _params(stream, q=_vector(query), ids=list(memory_ids)),
        )
        return [Candidate(r[0], int(r[1]), r[2], float(r[3])) for r in await cur.fetchall()]
