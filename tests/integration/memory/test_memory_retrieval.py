"""Retrieval through the service call: ranking, accesses batched into events, isolation and clear errors."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.cause import Cause
from npcworld.contracts import MemoriesAccessed, ObservationMade
from npcworld.embeddings import EmbeddingSpaceMismatchError
from npcworld.errors import NotFoundError, ValidationError
from npcworld.eventstore import EventStore, UnitOfWork
from services.memory.accesses import flush_accesses
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef, RetrievalWeights, access_stream_id
from services.memory.repository import MemoryRepository
from services.memory.retrieval import RetrievedMemory, retrieve
from tests.integration.memory.support import T0, envelope, handle, new_npc
from tests.unit.memory.fakes import FakeImportanceRater, HashingEmbedder

pytestmark = pytest.mark.integration

NOW = T0 + timedelta(hours=5)
OBSERVATIONS = [
    "Isabella is decorating the cafe for the Valentine's Day party",
    "the toilet is clean",
    "Klaus is reading a book about gentrification",
    "Maria is brushing her teeth",
]


async def observe_all(pool: AsyncConnectionPool, deps: MemoryDeps, npc: NpcRef) -> None:
    for minutes, text in enumerate(OBSERVATIONS):
        await handle(
            pool, envelope(ObservationMade(description=text), npc, T0 + timedelta(minutes=minutes)), deps
        )


async def ask(
    pool: AsyncConnectionPool, deps: MemoryDeps, npc: NpcRef, query: str, k: int = 2, **kwargs: object
) -> list[RetrievedMemory]:
    async with pool.connection() as conn, conn.transaction():
        return await retrieve(conn, deps, npc, query, k=k, now=NOW, **kwargs)  # type: ignore[arg-type]


async def test_retrieval_returns_the_relevant_memories_with_their_component_scores(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    await observe_all(pool, deps, npc)
    got = await ask(
        pool,
        deps,
        npc,
        "Who is throwing a party?",
        k=2,
        weights=RetrievalWeights(recency=0.0, importance=0.0),
    )
    assert got[0].memory.description == OBSERVATIONS[0]
    assert got[0].scores.relevance == 1.0 and 0.0 <= got[1].scores.relevance < 1.0
    assert got[0].scores.score >= got[1].scores.score


async def test_retrievals_are_one_accessed_event_per_npc_when_flushed_not_one_per_call(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    await observe_all(pool, deps, npc)
    first, second = uuid.uuid4(), uuid.uuid4()
    got = await ask(pool, deps, npc, "party at the cafe", k=2, cause=Cause(first, first))
    await ask(pool, deps, npc, "party at the cafe", k=2, cause=Cause(first, first))  # a repeat: no change
    other = await ask(pool, deps, npc, "teeth", k=1, cause=Cause(second, second))
    async with pool.connection() as conn:
        assert await EventStore().read_stream(conn, npc.tenant_id, access_stream_id(npc)) == []
        async with conn.transaction():
            flushed = await flush_accesses(UnitOfWork(conn, EventStore()), deps, npc.tenant_id, npc.world_id)
        events = await EventStore().read_stream(conn, npc.tenant_id, access_stream_id(npc))
        stream = await MemoryRepository().get_npc(conn, npc)
        assert stream is not None
        memories = {m.memory_id: m for m in await MemoryRepository().all_memories(conn, stream)}
        claimed = await conn.execute("SELECT count(*) FROM processed_events WHERE consumer = %s"
                                     " AND event_id = %s", (deps.consumer, flushed[0].event_id))
        assert (await claimed.fetchone()) == (1,)  # folded where appended: the consumer skips it
    [accessed] = [e.envelope.payload for e in events]
    assert isinstance(accessed, MemoriesAccessed)
    returned = [r.memory.memory_id for r in got]
    assert set(accessed.memory_ids) == {*returned, other[0].memory.memory_id} and accessed.accessed_at == NOW
    by_cause = {r.cause: r.memory_ids for r in accessed.retrievals}
    assert by_cause == {first: tuple(returned), second: (other[0].memory.memory_id,)}
    assert {mid for mid, m in memories.items() if m.last_accessed_at == NOW} == set(accessed.memory_ids)


async def test_a_step_turns_only_its_own_accesses_into_events(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    await observe_all(pool, deps, npc)
    await ask(pool, deps, npc, "party at the cafe", k=1)
    async with pool.connection() as conn, conn.transaction():
        await retrieve(conn, deps, npc, "teeth", k=1, now=NOW + timedelta(seconds=10))  # the next step's
        flushed = await flush_accesses(UnitOfWork(conn, EventStore()), deps, npc.tenant_id, npc.world_id,
                                       until=NOW)
        left = await MemoryRepository().take_accesses(conn, npc.tenant_id, npc.world_id)
    assert [e.payload.accessed_at for e in flushed] == [NOW]  # type: ignore[attr-defined]
    assert [a.accessed_at for a in left] == [NOW + timedelta(seconds=10)]


@pytest.mark.parametrize("field", ["tenant_id", "world_id", "npc_id"])
async def test_another_tenant_world_or_npc_cannot_retrieve_these_memories(
    pool: AsyncConnectionPool, deps: MemoryDeps, field: str
) -> None:
    npc = new_npc()
    await observe_all(pool, deps, npc)
    ids = {"tenant_id": npc.tenant_id, "world_id": npc.world_id, "npc_id": npc.npc_id}
    ids[field] = "someone-else"
    other = NpcRef(**ids)
    await handle(pool, envelope(ObservationMade(description="nothing happened"), other, T0), deps)
    got = await ask(pool, deps, other, "party at the cafe", k=10)
    assert [r.memory.description for r in got] == ["nothing happened"]


@pytest.mark.parametrize(
    ("query", "k", "field"),
    [
        ("", 5, "query"),
        ("   ", 5, "query"),
        ("x" * 2001, 5, "query"),
        ("party", 0, "k"),
        ("party", -3, "k"),
        ("party", 101, "k"),
        ("party", 10**9, "k"),
    ],
)
async def test_a_bad_query_is_a_validation_error_naming_the_field(
    pool: AsyncConnectionPool, deps: MemoryDeps, query: str, k: int, field: str
) -> None:
    npc = new_npc()
    await observe_all(pool, deps, npc)
    with pytest.raises(ValidationError) as info:
        await ask(pool, deps, npc, query, k=k)
    assert info.value.field == field


async def test_a_negative_weight_is_a_validation_error(pool: AsyncConnectionPool, deps: MemoryDeps) -> None:
    with pytest.raises(ValidationError) as info:
        await ask(pool, deps, new_npc(), "party", weights=RetrievalWeights(relevance=-1.0))
    assert info.value.field == "weights.relevance"


async def test_an_unknown_npc_is_not_found(pool: AsyncConnectionPool, deps: MemoryDeps) -> None:
    with pytest.raises(NotFoundError):
        await ask(pool, deps, new_npc(), "party")


async def test_a_known_npc_without_memories_retrieves_nothing(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    async with pool.connection() as conn:
        await MemoryRepository().ensure_npc(conn, npc)
    assert await ask(pool, deps, npc, "party") == []


async def test_querying_with_another_embedding_model_is_refused(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    await observe_all(pool, deps, npc)
    with pytest.raises(EmbeddingSpaceMismatchError):
        await ask(pool, MemoryDeps(embedder=HashingEmbedder(384), rater=FakeImportanceRater()), npc, "party")
