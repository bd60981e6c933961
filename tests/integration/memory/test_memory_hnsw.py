"""The index path on 384-dim vectors: it searches the per-NPC HNSW index and finds the exact top 10."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from psycopg_pool import AsyncConnectionPool

from services.memory.deps import MemoryDeps
from services.memory.domain import RetrievalWeights
from services.memory.repository import MemoryRepository
from services.memory.retrieval import rank
from tests.integration.memory.support import T0, insert_stream, new_npc, random_stream, with_settings

pytestmark = pytest.mark.integration


async def test_the_index_path_searches_the_hnsw_index_per_npc_and_agrees_with_exact_scoring(
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
        # 1,500 rows are cheaper to sort than to search; discourage sorting so the index path is exercised.
        await conn.execute("SET LOCAL enable_sort = off")
        query = vectors[0]
        cur = await conn.execute(
            "EXPLAIN SELECT memory_id FROM memories WHERE npc_key = %s AND embedding_dims = 384 "
            "ORDER BY (embedding::vector(384)) <=> %s::vector(384) LIMIT 50",
            (stream.key, "[" + ",".join(map(str, query.tolist())) + "]"),
        )
        assert "memories_embedding_384_hnsw" in "\n".join(r[0] for r in await cur.fetchall())
        for i in range(20):
            q = vectors[i * 7] + 0.3 * rng.normal(size=384).astype(np.float32) / 384**0.5
            q = (q / np.linalg.norm(q)).astype(np.float32)
            got = await rank(conn, indexed, stream, q, now=now, weights=RetrievalWeights(), k=10)
            want = await rank(conn, deps, stream, q, now=now, weights=RetrievalWeights(), k=10)
            recalls.append(len({s.memory_id for s in got} & {s.memory_id for s in want}) / 10)
    assert np.mean(recalls) >= 0.98
