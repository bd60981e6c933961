"""Retrieval queries: exact top-k in one scan; HNSW and per-importance candidate lists for large streams."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
from psycopg import sql

from services.memory.domain import (
    Candidate,
    NpcStream,
    RetrievalWeights,
    ScoredMemory,
)
from services.memory.repository._rows import (
    _EXACT,
    _PRIOR,
    Conn,
    ScoreFloor,
    _params,
    _vector,
)

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
    ) -> list[Candidate]:
        """The ``limit`` memories most similar to ``query`` via HNSW, best first, with exact cosines.

        A large stream has an index of its own, searched plainly. Otherwise the shared index is searched with
        pgvector's iterative scan, which keeps reading the graph until enough rows pass the per-NPC filter.
        Without it one graph search of ``ef_search`` runs and only its rows of this NPC come back.
        """
        iterative = iterative and not stream.own_index
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
    ) -> list[Candidate]:
        # npc_key and dims as literals, so the planner can prove a stream's own partial index applies.
        dims, key = sql.Literal(stream.embedding_dims), sql.Literal(stream.key)
        query_sql = sql.SQL(
            "SELECT memory_id, (embedding::vector({dims})) <=> %(q)s::vector({dims}) AS distance "
            "FROM memories WHERE npc_key = {key} AND embedding_dims = {dims} "
            "ORDER BY (embedding::vector({dims})) <=> %(q)s::vector({dims}) LIMIT %(limit)s"
        ).format(dims=dims, key=key)
        # relaxed_order may return rows slightly out of order: materialise, then sort exactly.
        wrapped = sql.SQL(
            "WITH hits AS MATERIALIZED ({q}) "
            "SELECT h.memory_id::text, a.importance, a.last_accessed_at, 1 - h.distance FROM hits AS h "
            "JOIN memory_access AS a ON a.npc_key = {key} AND a.memory_id = h.memory_id "
            "ORDER BY h.distance, h.memory_id"
        ).format(q=query_sql, key=key)
        # Never a prepared (generic) plan: without the actual limit the planner picks a full per-NPC sort.
        cur = await conn.execute(wrapped, {"q": _vector(query), "limit": limit}, prepare=False)
        return [Candidate(r[0], int(r[1]), r[2], float(r[3])) for r in await cur.fetchall()]

    async def prior_candidates(
        self,
        conn: Conn,
        stream: NpcStream,
        query: npt.NDArray[np.float32],
        since: Mapping[int, datetime | None],
        bounds: ScoreFloor,
    ) -> list[Candidate]:
        """Memories accessed at or after ``since[importance]`` (one index range per level) that can score at
        least ``bounds.floor``, with exact cosines; at most ``bounds.cap`` per level, most recent first."""
        if not since:
            return []
        oldest = datetime(1, 1, 1, tzinfo=UTC)
        cur = await conn.execute(
            _PRIOR,
            _params(
                stream,
                q=_vector(query),
                levels=list(since),
                since=[t or oldest for t in since.values()],
                exclude=list(bounds.exclude),
                cap=bounds.cap,
                now=bounds.now,
                floor=bounds.floor - 1e-9,
                **bounds.sql_params(),
            ),
            prepare=False,
        )
        return [Candidate(r[0], int(r[1]), r[2], float(r[3])) for r in await cur.fetchall()]
