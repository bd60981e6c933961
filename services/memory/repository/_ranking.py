"""Retrieval queries: exact top-k in one scan; for large streams, HNSW and importance + recency candidates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg import AsyncCursor, sql

from services.memory.domain import (
    Candidate,
    NpcStream,
    RetrievalWeights,
    ScoredMemory,
)
from services.memory.repository._rows import (
    _EXACT,
    _PRIOR,
    _TOP_PRIOR,
    _VECTOR,
    Conn,
    ScoreFloor,
    _params,
    _vector,
)

__all__ = ["IndexCandidates", "RankingQueries", "SearchPlan"]


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

    async def index_candidates(
        self, conn: Conn, stream: NpcStream, query: npt.NDArray[np.float32], plan: SearchPlan
    ) -> IndexCandidates:
        """First phase of the index path, pipelined (one round trip): importance and access ranges, the
        ``plan.limit`` most relevant memories via HNSW, the least relevant one, and the ``plan.prior_top``
        best by importance + recency, each with its exact cosine to ``query``. Runs in the caller's
        transaction, whose planner and HNSW settings it changes until ``restore_settings`` (custom plans stay
        on for the rest of the transaction).

        A large stream has an HNSW index of its own (there is none over every stream: migration 0123); until
        the upkeep has built it, the relevance searches sort the stream exactly. The least relevant memory is
        the one nearest the negated query, far from every memory: one graph search of ``plan.far_ef_search``
        finds it.
        """
        async with conn.pipeline():
            # The planner's HNSW cost estimate is pessimistic: for a few hundred rows it would rather sort
            # the NPC's whole stream, which is what this path exists to avoid. Every statement is planned
            # for its own NPC: the generic plan psycopg's prepared statements switch to after five runs
            # assumes an NPC of average size, and for the best-by-prior list of a 100k-memory NPC in a
            # table of 1M rows across 100 NPCs it took 27 ms instead of 2.6.
            ranges = await conn.execute(
                "SELECT current_setting('enable_sort'), set_config('enable_sort', 'off', true), "
                "set_config('plan_cache_mode', 'force_custom_plan', true), "
                "set_config('hnsw.iterative_scan', 'off', true), set_config('hnsw.ef_search', %s, true), "
                "min(importance), max(importance), min(last_accessed_at), max(last_accessed_at) "
                "FROM memory_access WHERE npc_key = %s",
                (str(min(max(plan.ef_search, plan.limit), 1000)), stream.key),
            )
            near = await self._nearest(conn, stream, query, plan.limit, query)
            await conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(plan.far_ef_search),))
            far = await self._nearest(conn, stream, -query, 1, query)
            prior = await conn.execute(
                _TOP_PRIOR,
                _params(stream, q=_vector(query), top=plan.prior_top, now=plan.now,
                        wimp=plan.weights.importance, wrec=plan.weights.recency),
            )
            row = await ranges.fetchone()
            assert row is not None and row[5] is not None
            return IndexCandidates(
                (int(row[5]), int(row[6]), row[7], row[8]),
                await _candidates(near),
                await _candidates(far),
                await _candidates(prior),
                row[0],
            )

    async def _nearest(
        self,
        conn: Conn,
        stream: NpcStream,
        query: npt.NDArray[np.float32],
        limit: int,
        relevance_to: npt.NDArray[np.float32],
    ) -> AsyncCursor[Any]:
        # npc_key and dims as literals, so the planner can prove a stream's own partial index applies.
        dims, key = sql.Literal(stream.embedding_dims), sql.Literal(stream.key)
        if stream.in_row_vectors:
            query_sql = sql.SQL(
                "SELECT memory_id, (embedding::halfvec({dims})) <=> %(q)s::halfvec({dims}) AS distance, "
                "(embedding::halfvec({dims})) <=> %(r)s::halfvec({dims}) AS relevance_distance "
                "FROM memories WHERE npc_key = {key} AND embedding_dims = {dims} "
                "ORDER BY (embedding::halfvec({dims})) <=> %(q)s::halfvec({dims}) LIMIT %(limit)s"
            ).format(dims=dims, key=key)
        else:  # no index of its own: the stream sorted exactly, its vectors its world's (migration 0128);
            # OFFSET 0 keeps the subquery, so each row's vector is looked up once, not once per use
            query_sql = sql.SQL(
                "SELECT memory_id, vector <=> %(q)s::halfvec AS distance, "
                "vector <=> %(r)s::halfvec AS relevance_distance "
                "FROM (SELECT m.memory_id, {vector} AS vector FROM memories AS m"
                "      WHERE m.npc_key = {key} AND m.embedding_dims = {dims} OFFSET 0) AS s "
                "ORDER BY 2 LIMIT %(limit)s"
            ).format(dims=dims, key=key, vector=sql.SQL(_VECTOR))
        # Materialise the hits, then order them by distance and id: the same order whichever plan found them.
        wrapped = sql.SQL(
            "WITH hits AS MATERIALIZED ({q}) "
            "SELECT h.memory_id::text, a.importance, a.last_accessed_at, 1 - h.relevance_distance "
            "FROM hits AS h "
            "JOIN memory_access AS a ON a.npc_key = {key} AND a.memory_id = h.memory_id "
            "ORDER BY h.distance, h.memory_id"
        ).format(q=query_sql, key=key)
        # Never a prepared (generic) plan: without the actual limit the planner picks a full per-NPC sort.
        params = {"q": _vector(query), "r": _vector(relevance_to), "limit": limit,
                  "t": stream.npc.tenant_id, "w": stream.npc.world_id}
        return await conn.execute(wrapped, params, prepare=False)

    async def restore_settings(self, conn: Conn, enable_sort: str) -> None:
        """Undo what ``index_candidates`` changed for the rest of the transaction."""
        await conn.execute("SELECT set_config('enable_sort', %s, true)", (enable_sort,))

    async def prior_candidates(
        self,
        conn: Conn,
        stream: NpcStream,
        query: npt.NDArray[np.float32],
        since: Mapping[int, datetime | None],
        bounds: ScoreFloor,
        enable_sort: str,
    ) -> list[Candidate]:
        """Memories accessed at or after ``since[importance]`` (one index range per level) that can score at
        least ``bounds.floor``, with exact cosines; at most ``bounds.cap`` per level, most recent first.
        Also restores the settings ``index_candidates`` changed (in the same round trip)."""
        if not since:
            await self.restore_settings(conn, enable_sort)
            return []
        oldest = datetime(1, 1, 1, tzinfo=UTC)
        async with conn.pipeline():
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
            )
            await self.restore_settings(conn, enable_sort)
            return await _candidates(cur)


@dataclass(frozen=True)
class SearchPlan:
    """How wide the first phase of the index path searches."""

    limit: int
    ef_search: int
    far_ef_search: int
    prior_top: int
    weights: RetrievalWeights
    now: datetime


@dataclass(frozen=True)
class IndexCandidates:
    """What the first phase found: (min, max importance, min, max last access) and three candidate lists."""

    ranges: tuple[int, int, datetime, datetime]
    relevant: list[Candidate]
    farthest: list[Candidate]
    by_prior: list[Candidate]
    enable_sort: str


async def _candidates(cur: AsyncCursor[Any]) -> list[Candidate]:
    return [Candidate(r[0], int(r[1]), r[2], float(r[3])) for r in await cur.fetchall()]
