"""A world keeps one vector per memory text (migration 0128): memories of the same text share it, deleting
the last memory of a text deletes its vector, and a stream with an index of its own holds its vectors in its
rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import MemoryRecorded, ObservationMade
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef
from services.memory.indexing import maintain_indexes_once
from services.memory.repository import MemoryRepository
from services.memory.retrieval import retrieve
from tests.integration.memory.support import (
    T0,
    envelope,
    handle,
    insert_stream,
    new_npc,
    random_stream,
    with_settings,
)

pytestmark = pytest.mark.integration

OVEN = "the bakery oven is hot"


async def _world_vectors(conn: AsyncConnection[Any], npc: NpcRef) -> int:
    cur = await conn.execute(
        "SELECT count(*) FROM memory_vectors WHERE world_key = world_key(%s, %s)",
        (npc.tenant_id, npc.world_id),
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def _vectors_in_rows(conn: AsyncConnection[Any], npc: NpcRef) -> int:
    cur = await conn.execute(
        "SELECT count(m.embedding) FROM memories AS m JOIN memory_npcs AS n USING (npc_key)"
        " WHERE n.tenant_id = %s AND n.world_id = %s",
        (npc.tenant_id, npc.world_id),
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def test_npcs_of_a_world_store_a_text_they_both_saw_once_and_each_retrieves_it(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    baker = new_npc()
    neighbour = NpcRef(baker.tenant_id, baker.world_id, "neighbour")
    for npc in (baker, neighbour):
        await handle(pool, envelope(ObservationMade(description=OVEN), npc, T0), deps)
    await handle(pool, envelope(ObservationMade(description="Klaus reads in the library"), neighbour,
                                T0 + timedelta(minutes=1)), deps)
    async with pool.connection() as conn:
        assert await _world_vectors(conn, baker) == 2  # two texts, three memories
        assert await _vectors_in_rows(conn, baker) == 0
    for npc in (baker, neighbour):
        async with pool.connection() as conn, conn.transaction():
            found = await retrieve(conn, deps, npc, "a hot oven", k=1, now=T0 + timedelta(hours=1))
        assert [r.memory.description for r in found] == [OVEN]


async def test_forgetting_the_last_memory_of_a_text_deletes_its_vector_and_deleting_the_world_deletes_all(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    baker = new_npc()
    neighbour = NpcRef(baker.tenant_id, baker.world_id, "neighbour")
    ids = {}
    for npc in (baker, neighbour):
        appended = await handle(pool, envelope(ObservationMade(description=OVEN), npc, T0), deps)
        ids[npc] = next(e.payload.memory_id for e in appended if isinstance(e.payload, MemoryRecorded))
    repo = MemoryRepository()
    async with pool.connection() as conn, conn.transaction():
        stream = await repo.get_npc(conn, baker)
        assert stream is not None
        await repo.forget(conn, stream, ids[baker])
        assert await _world_vectors(conn, baker) == 1  # the neighbour still remembers the oven
        other = await repo.get_npc(conn, neighbour)
        assert other is not None
        await repo.correct(conn, other, ids[neighbour], "the bakery oven is cold", None,
                           (await deps.embedder.embed(["the bakery oven is cold"]))[0])
        cur = await conn.execute(
            "SELECT count(*) FROM memory_vectors WHERE world_key = world_key(%s, %s)"
            " AND text_key = memory_text_key(%s)", (baker.tenant_id, baker.world_id, OVEN),
        )
        assert await cur.fetchone() == (0,)  # no memory of the world holds that text any more
        assert await _world_vectors(conn, baker) == 1
        await repo.delete_world(conn, baker.tenant_id, baker.world_id)
        assert await _world_vectors(conn, baker) == 0


async def test_a_stream_given_an_index_of_its_own_holds_its_vectors_in_its_rows_from_then_on(
    pool: AsyncConnectionPool, deps: MemoryDeps, database_url: str
) -> None:
    rng = np.random.default_rng(7)
    npc = new_npc()
    vectors, importances, accessed = random_stream(rng, 120, dims=384)
    async with pool.connection() as conn, conn.transaction():
        await insert_stream(conn, npc, vectors, importances, accessed)
        assert await _vectors_in_rows(conn, npc) == 0
    upkeep = with_settings(deps, own_index_min=100)
    assert await maintain_indexes_once(database_url, upkeep) >= 1
    repo = MemoryRepository()
    async with pool.connection() as conn:
        assert await _vectors_in_rows(conn, npc) == 120
        stream = await repo.get_npc(conn, npc)
        assert stream is not None and stream.in_row_vectors and stream.own_index
        cur = await conn.execute(
            "SELECT m.embedding::text FROM memories AS m WHERE m.npc_key = %s AND m.description = 'memory 3'",
            (stream.key,),
        )
        row = await cur.fetchone()
    assert row is not None
    assert np.array_equal(np.array(row[0].strip("[]").split(","), dtype=np.float32), vectors[3])
    async with pool.connection() as conn, conn.transaction():
        await insert_stream(conn, npc, *random_stream(rng, 5, dims=384))
        assert await _vectors_in_rows(conn, npc) == 125


async def test_only_an_npcs_first_memories_name_the_embedding_model_its_stream_keeps(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    baker = new_npc()
    for minute, text in enumerate((OVEN, "Klaus reads in the library")):
        await handle(pool, envelope(ObservationMade(description=text), baker, T0 + timedelta(minutes=minute)),
                     deps)
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT payload->>'description', payload->>'embedding_model', payload->'embedding_dimensions'"
            " FROM events WHERE in_world(tenant_id, world_id, %s, %s) AND type = 'MemoryRecorded'"
            " ORDER BY seq",
            (baker.tenant_id, baker.world_id))
        logged = await cur.fetchall()
        stream = await MemoryRepository().get_npc(conn, baker)
    assert logged == [(OVEN, deps.embedder.model, deps.embedder.dimensions),
                      ("Klaus reads in the library", None, None)]
    assert stream is not None and stream.embedding_model == deps.embedder.model
