"""The index path on 384-dim vectors: a large stream's own HNSW index (an exact sort before it is built), and
it finds the exact top 10."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from psycopg_pool import AsyncConnectionPool

from services.memory.deps import MemoryDeps
from services.memory.domain import RetrievalWeights
from services.memory.indexing import maintain_indexes_once
from services.memory.repository import MemoryRepository
from services.memory.repository._indexes import own_index_name
from services.memory.retrieval import rank
from tests.integration.memory.support import T0, insert_stream, new_npc, random_stream, with_settings

pytestmark = pytest.mark.integration


async def test_no_index_holds_small_streams_and_the_index_path_before_its_own_index_agrees_with_exact_scoring(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    rng = np.random.default_rng(3)
    npc, neighbour = new_npc(), new_npc()
    async with pool.connection() as conn, conn.transaction():
        vectors, importances, accessed = random_stream(rng, 1500, dims=384)
        await insert_stream(conn, npc, vectors, importances, accessed)
        await insert_stream(conn, neighbour, *random_stream(rng, 500, dims=384))
        stream = await MemoryRepository().get_npc(conn, npc)
    assert stream is not None
    async with pool.connection() as conn:
        await conn.execute("ANALYZE memories")
    indexed = with_settings(deps, exact_scan_max=100, candidate_pool=50)
    now = T0 + timedelta(days=11)
    recalls = []
    async with pool.connection() as conn, conn.transaction():
        # With sorting discouraged the planner would take any HNSW index that covered this stream: none does
        # (no index over every stream, and the stream has not got its own), so the search sorts it exactly.
        await conn.execute("SET LOCAL enable_sort = off")
        query = vectors[0]
        cur = await conn.execute(
            "EXPLAIN SELECT memory_id FROM memories WHERE npc_key = %s AND embedding_dims = 384 "
            "ORDER BY (embedding::halfvec(384)) <=> %s::halfvec(384) LIMIT 50",
            (stream.key, "[" + ",".join(map(str, query.tolist())) + "]"),
        )
        assert "hnsw" not in "\n".join(r[0] for r in await cur.fetchall())
        for i in range(20):
            q = vectors[i * 7] + 0.3 * rng.normal(size=384).astype(np.float32) / 384**0.5
            q = (q / np.linalg.norm(q)).astype(np.float32)
            got = await rank(conn, indexed, stream, q, now=now, weights=RetrievalWeights(), k=10)
            want = await rank(conn, deps, stream, q, now=now, weights=RetrievalWeights(), k=10)
            recalls.append(len({s.memory_id for s in got} & {s.memory_id for s in want}) / 10)
    assert np.mean(recalls) >= 0.98


async def test_a_large_stream_gets_an_index_of_its_own_which_retrieval_uses_and_upkeep_drops_when_gone(
    pool: AsyncConnectionPool, deps: MemoryDeps, database_url: str
) -> None:
    rng = np.random.default_rng(5)
    npc, small = new_npc(), new_npc()
    async with pool.connection() as conn, conn.transaction():
        vectors, importances, accessed = random_stream(rng, 1200, dims=384)
        await insert_stream(conn, npc, vectors, importances, accessed)
        await insert_stream(conn, small, *random_stream(rng, 300, dims=384))
    upkeep = with_settings(deps, own_index_min=1000, exact_scan_max=100, candidate_pool=50)
    assert await maintain_indexes_once(database_url, upkeep) >= 1
    repo = MemoryRepository()
    async with pool.connection() as conn:
        stream, other = await repo.get_npc(conn, npc), await repo.get_npc(conn, small)
        assert stream is not None and stream.own_index
        assert other is not None and not other.own_index  # 300 memories: ranked by an exact scan
        await conn.execute("ANALYZE memories")
    now, recalls = T0 + timedelta(days=11), []
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_sort = off")
        cur = await conn.execute(
            f"EXPLAIN SELECT memory_id FROM memories WHERE npc_key = {stream.key} AND embedding_dims = 384 "
            "ORDER BY (embedding::halfvec(384)) <=> %s::halfvec(384) LIMIT 50",
            ("[" + ",".join(map(str, vectors[0].tolist())) + "]",),
        )
        assert own_index_name(stream.key) in "\n".join(r[0] for r in await cur.fetchall())
        # Its accesses by importance and recency (the prior lists) are in an index of its own as well.
        cur = await conn.execute(
            f"EXPLAIN SELECT memory_id FROM memory_access WHERE npc_key = {stream.key} AND importance = 5 "
            "ORDER BY last_accessed_at DESC LIMIT 20")
        assert f"memory_access_prior_npc_{stream.key}" in "\n".join(r[0] for r in await cur.fetchall())
        for i in range(20):
            q = vectors[i * 11] + 0.3 * rng.normal(size=384).astype(np.float32) / 384**0.5
            q = (q / np.linalg.norm(q)).astype(np.float32)
            got = await rank(conn, upkeep, stream, q, now=now, weights=RetrievalWeights(), k=10)
            want = await rank(conn, deps, stream, q, now=now, weights=RetrievalWeights(), k=10)
            recalls.append(len({s.memory_id for s in got} & {s.memory_id for s in want}) / 10)
    assert np.mean(recalls) >= 0.98
    async with pool.connection() as conn, conn.transaction():
        await repo.delete_stream(conn, stream)
    assert await maintain_indexes_once(database_url, upkeep) == 0
    async with pool.connection() as conn:
        for name in (own_index_name(stream.key), f"memory_access_prior_npc_{stream.key}",
                     f"memory_access_recency_npc_{stream.key}"):
            cur = await conn.execute("SELECT to_regclass(%s)", (name,))
            assert (await cur.fetchone()) == (None,)
