"""Replaying the memory events rebuilds the same stream; re-embedding moves a stream to another model."""

from __future__ import annotations

from datetime import timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import ObservationMade
from npcworld.eventstore import EventStore, UnitOfWork
from services.memory.accesses import flush_accesses
from services.memory.deps import MemoryDeps
from services.memory.domain import access_stream_id, memory_stream_id
from services.memory.projection import reembed_stream, replay_memory_events
from services.memory.repository import MemoryRepository
from services.memory.retrieval import retrieve
from tests.integration.memory.support import T0, envelope, handle, new_npc
from tests.unit.memory.fakes import FakeImportanceRater, HashingEmbedder

pytestmark = pytest.mark.integration


async def test_replaying_memory_events_reproduces_memories_and_last_access_times(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc, repo = new_npc(), MemoryRepository()
    for minutes, text in enumerate(
        ["Isabella is baking", "Klaus is writing", "Sam is campaigning for mayor"]
    ):
        await handle(
            pool, envelope(ObservationMade(description=text), npc, T0 + timedelta(minutes=minutes)), deps
        )
    async with pool.connection() as conn, conn.transaction():
        await retrieve(conn, deps, npc, "mayor election", k=1, now=T0 + timedelta(hours=3))
        await flush_accesses(UnitOfWork(conn, EventStore()), deps, npc.tenant_id, npc.world_id)
    async with pool.connection() as conn, conn.transaction(force_rollback=True):
        stream = await repo.get_npc(conn, npc)
        assert stream is not None
        before = await repo.all_memories(conn, stream)
        ranked_before = await retrieve(conn, deps, npc, "baking", k=3, now=T0)
    async with pool.connection() as conn, conn.transaction():
        await repo.delete_stream(conn, stream)
        stored = [*await EventStore().read_stream(conn, npc.tenant_id, memory_stream_id(npc)),
                  *await EventStore().read_stream(conn, npc.tenant_id, access_stream_id(npc))]
        events = [e.envelope for e in sorted(stored, key=lambda e: e.seq)]
        assert await replay_memory_events(conn, deps, events) == 3
    async with pool.connection() as conn, conn.transaction(force_rollback=True):
        rebuilt = await repo.get_npc(conn, npc)
        assert rebuilt is not None
        assert await repo.all_memories(conn, rebuilt) == before
        ranked_after = await retrieve(conn, deps, npc, "baking", k=3, now=T0)
    assert [r.scores for r in ranked_after] == [r.scores for r in ranked_before]


async def test_re_embedding_moves_a_stream_to_the_new_model_and_retrieval_works_again(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    await handle(pool, envelope(ObservationMade(description="Isabella is baking bread"), npc, T0), deps)
    hashing = MemoryDeps(embedder=HashingEmbedder(16), rater=FakeImportanceRater())
    async with pool.connection() as conn, conn.transaction():
        assert await reembed_stream(conn, hashing, npc) == 1
    async with pool.connection() as conn, conn.transaction():
        got = await retrieve(conn, hashing, npc, "baking bread", k=1, now=T0)
        stream = await MemoryRepository().get_npc(conn, npc)
    assert [r.memory.description for r in got] == ["Isabella is baking bread"]
    assert stream is not None and (stream.embedding_model, stream.embedding_dims) == ("fake-hashing-16", 16)
