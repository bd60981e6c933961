"""Observations and NPC seeds become memories with importance and embeddings; repeats of a state do not."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import MemoryRecorded, NpcCreated, ObservationMade, WorldDeleted
from npcworld.embeddings import EmbeddingSpaceMismatchError
from npcworld.eventstore import EventStore
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef, memory_stream_id
from services.memory.repository import MemoryRepository
from tests.integration.memory.support import T0, VECTOR_OF, envelope, handle, new_npc
from tests.unit.memory.fakes import FakeImportanceRater, HashingEmbedder

# One NPC's rows of memories (they carry the stream's key; its ids are in memory_npcs).
_OF_NPC = (f"FROM memories AS m JOIN memory_npcs AS n USING (npc_key) {VECTOR_OF}"
           " WHERE n.tenant_id = %s AND n.world_id = %s AND n.npc_id = %s")

pytestmark = pytest.mark.integration


async def stored(pool: AsyncConnectionPool, npc: NpcRef) -> list[tuple[str, str, int, str, int]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT m.kind, m.description, m.importance, m.embedding_model,"
            " vector_dims(coalesce(m.embedding, v.embedding)) "
            f"{_OF_NPC} ORDER BY m.created_at, m.description",
            (npc.tenant_id, npc.world_id, npc.npc_id),
        )
        return [tuple(r) for r in await cur.fetchall()]


async def test_an_observation_becomes_a_memory_with_importance_and_embedding_and_emits_memory_recorded(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    appended = await handle(
        pool, envelope(ObservationMade(description="Isabella is planning a party"), npc, T0), deps
    )
    assert await stored(pool, npc) == [
        ("observation", "Isabella is planning a party", 9, "all-MiniLM-L6-v2-onnx-int8", 384)
    ]
    [event] = appended
    assert isinstance(event.payload, MemoryRecorded)
    assert (
        event.payload.importance,
        event.payload.embedding_model,
        event.payload.embedding_dimensions,
        event.payload.importance_model,
    ) == (9, "all-MiniLM-L6-v2-onnx-int8", 384, "fake-rater")
    async with pool.connection() as conn:
        [persisted] = await EventStore().read_stream(conn, npc.tenant_id, memory_stream_id(npc))
    assert persisted.envelope.event_id == event.event_id and persisted.envelope.npc_id == npc.npc_id


async def test_an_unchanged_state_seen_again_is_not_stored_again_but_a_change_is(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    for minutes, text in [
        (0, "the stove is idle"),
        (10, "The stove is idle."),
        (20, "the stove is burning"),
        (30, "the stove is burning"),
        (40, "the stove is idle"),
    ]:
        observed = ObservationMade(description=text, subject="stove", location="cafe:kitchen")
        await handle(pool, envelope(observed, npc, T0 + timedelta(minutes=minutes)), deps)
    assert [row[1] for row in await stored(pool, npc)] == [
        "the stove is idle",
        "the stove is burning",
        "the stove is idle",
    ]
    # No model call for a repeat, nor for an idle object (rated 1, as the paper's code does): only the
    # burning stove was rated; its state seen again keeps the earlier rating.
    assert isinstance(deps.rater, FakeImportanceRater)
    assert [texts for texts, _ in deps.rater.calls] == [("the stove is burning",)]


async def test_npc_created_turns_each_seed_part_into_a_seed_memory_rated_in_one_batch(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    created = NpcCreated(
        npc_id=npc.npc_id,
        name="Isabella Rodriguez",
        age=34,
        occupation="cafe owner",
        seed="Isabella runs Hobbs Cafe; she is throwing a Valentine's Day party; ; she likes Klaus",
    )
    appended = await handle(pool, envelope(created, npc, T0, npc_id=""), deps)
    rows = await stored(pool, npc)
    assert sorted(r[1] for r in rows) == [
        "Isabella runs Hobbs Cafe",
        "she is throwing a Valentine's Day party",
        "she likes Klaus",
    ]
    assert {r[0] for r in rows} == {"seed"} and len(appended) == 3
    assert isinstance(deps.rater, FakeImportanceRater)
    [(texts, context)] = deps.rater.calls
    assert len(texts) == 3 and context.npc_name == "Isabella Rodriguez"
    assert context.persona == "Isabella Rodriguez (age 34), cafe owner"


async def test_a_stream_embedded_with_one_model_refuses_memories_from_another(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    await handle(pool, envelope(ObservationMade(description="Klaus is reading"), npc, T0), deps)
    other = MemoryDeps(embedder=HashingEmbedder(16), rater=FakeImportanceRater())
    with pytest.raises(EmbeddingSpaceMismatchError, match="re-embed"):
        await handle(pool, envelope(ObservationMade(description="Klaus is writing"), npc, T0), other)
    assert len(await stored(pool, npc)) == 1  # nothing half-written


async def test_deleting_a_world_drops_its_memories_only(pool: AsyncConnectionPool, deps: MemoryDeps) -> None:
    npc, other = new_npc(), new_npc()
    for who in (npc, other):
        await handle(pool, envelope(ObservationMade(description="Maria is studying"), who, T0), deps)
    await handle(pool, envelope(WorldDeleted(), npc, T0, npc_id=""), deps)
    assert await stored(pool, npc) == [] and len(await stored(pool, other)) == 1
    async with pool.connection() as conn:
        assert await MemoryRepository().get_npc(conn, npc) is None


async def test_stored_vectors_are_the_embedders_vectors_in_half_precision(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    text = "Sam Moore is running for mayor"
    await handle(pool, envelope(ObservationMade(description=text), npc, T0), deps)
    async with pool.connection() as conn:
        cur = await conn.execute(f"SELECT coalesce(m.embedding, v.embedding)::text {_OF_NPC}",
                                 (npc.tenant_id, npc.world_id, npc.npc_id))
        row = await cur.fetchone()
    assert row is not None
    stored_vector = np.array(row[0].strip("[]").split(","), dtype=np.float32)
    embedded = (await deps.embedder.embed([text]))[0]
    assert np.array_equal(stored_vector, embedded.astype(np.float16).astype(np.float32))
