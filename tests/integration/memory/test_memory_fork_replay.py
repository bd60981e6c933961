"""A fork's memory streams are folded from what it inherits (vectors included); ``npcworld replay --service
memory`` rebuilds them."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import numpy as np
import psycopg
import pytest
from click.testing import CliRunner
from psycopg_pool import AsyncConnectionPool

from launcher.cli import main
from npcworld.contracts import Envelope, NpcCreated, ObservationMade, WorldCreated, WorldForked
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.fork import fork_world, world_stream
from npcworld.projection import rebuild
from services.memory.accesses import flush_accesses
from services.memory.deps import MemoryDeps
from services.memory.domain import Memory, NpcRef
from services.memory.projection import build_projection
from services.memory.repository import MemoryRepository
from services.memory.retrieval import retrieve
from tests.infra import BrokerForTests
from tests.integration.memory.support import T0, VECTOR_OF, envelope, handle, new_npc
from tests.unit.memory.fakes import FakeImportanceRater, HashingEmbedder

pytestmark = pytest.mark.integration

SEEN = ["Klaus is reading a book", "the stove is burning", "Sam is running for mayor"]


@pytest.fixture
def hashing_deps() -> MemoryDeps:
    return MemoryDeps(embedder=HashingEmbedder(16), rater=FakeImportanceRater())


async def _world_with_memories(pool: AsyncConnectionPool, deps: MemoryDeps) -> NpcRef:
    """A world whose NPC has 2 seed memories, 3 observations an hour apart and one retrieval at +2h30."""
    npc = new_npc()
    created = NpcCreated(npc_id=npc.npc_id, name="Isabella", seed="Isabella runs Hobbs Cafe; she likes Klaus")
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        world = [
            envelope(WorldCreated(name="Smallville", start_time=T0), npc, T0, npc_id=""),
            envelope(created, npc, T0, npc_id=""),
        ]
        await uow.append(world_stream(npc.world_id), world)
    await handle(pool, world[1], deps)
    for hours, text in enumerate(SEEN, start=1):
        await handle(
            pool, envelope(ObservationMade(description=text), npc, T0 + timedelta(hours=hours)), deps
        )
    async with pool.connection() as conn, conn.transaction():
        await retrieve(conn, deps, npc, "Klaus", k=2, now=T0 + timedelta(hours=2.5))
        await flush_accesses(UnitOfWork(conn, EventStore()), deps, npc.tenant_id, npc.world_id)
    return npc


async def _stream(pool: AsyncConnectionPool, npc: NpcRef) -> tuple[list[Memory], dict[str, list[float]]]:
    repo = MemoryRepository()
    async with pool.connection() as conn:
        stream = await repo.get_npc(conn, npc)
        assert stream is not None
        memories = await repo.all_memories(conn, stream)
        cur = await conn.execute(
            "SELECT m.memory_id::text, coalesce(m.embedding, v.embedding)::text"
            f" FROM memories AS m JOIN memory_npcs AS n USING (npc_key) {VECTOR_OF} WHERE m.npc_key = %s",
            (stream.key,),
        )
        vectors = {r[0]: [float(x) for x in r[1].strip("[]").split(",")] for r in await cur.fetchall()}
    return memories, vectors


async def _apply_world(pool: AsyncConnectionPool, deps: MemoryDeps, world_id: str) -> None:
    """Fold the world's events through the memory projection, as the consumer loop does for fork copies."""
    projection = build_projection(deps)
    async with pool.connection() as conn, conn.transaction():
        for stored in await EventStore().read_all(conn, 0, 10_000, EventFilter(world_id=world_id)):
            applier = projection.appliers.get(stored.envelope.type)
            if applier is not None:
                await applier(stored.envelope, conn)


_CLAIM_ALL = (
    "INSERT INTO processed_events (consumer, event_id) SELECT 'memory', event_id FROM events"
    " WHERE type = ANY(%s) ON CONFLICT DO NOTHING"
)


async def _consumed(pool: AsyncConnectionPool, deps: MemoryDeps) -> None:
    """Claim every stored event the memory projection folds, as the live memory consumer does when it
    processes them (``handle`` runs the handlers without the loop); a rebuild folds exactly those."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(_CLAIM_ALL, (list(build_projection(deps).appliers),))


def _without_npc(memories: list[Memory]) -> list[tuple[object, ...]]:
    return [
        (m.memory_id, m.kind, m.description, m.importance, m.created_at, m.last_accessed_at) for m in memories
    ]


async def test_a_fork_inherits_the_memory_stream_up_to_the_fork_time_with_vectors_and_access_times(
    pool: AsyncConnectionPool, hashing_deps: MemoryDeps
) -> None:
    npc = await _world_with_memories(pool, hashing_deps)
    at: datetime = T0 + timedelta(hours=2, minutes=45)
    fork = NpcRef(npc.tenant_id, f"{npc.world_id}-fork", npc.npc_id)
    async with pool.connection() as conn, conn.transaction():
        await fork_world(
            conn, tenant_id=npc.tenant_id, source_world_id=npc.world_id, at=at, new_world_id=fork.world_id
        )
    assert isinstance(hashing_deps.embedder, HashingEmbedder)
    calls = hashing_deps.embedder.calls
    await _apply_world(pool, hashing_deps, fork.world_id)
    assert hashing_deps.embedder.calls == calls  # vectors copied from the source stream, not re-embedded
    source, source_vectors = await _stream(pool, npc)
    copied, copied_vectors = await _stream(pool, fork)
    assert _without_npc(copied) == _without_npc([m for m in source if m.created_at <= at])
    assert [m.description for m in copied][-2:] == SEEN[:2]
    assert copied_vectors == {k: v for k, v in source_vectors.items() if k in copied_vectors}
    assert any(m.last_accessed_at == T0 + timedelta(hours=2.5) for m in copied)  # the retrieval came along
    async with pool.connection() as conn, conn.transaction():
        found = await retrieve(conn, hashing_deps, fork, "stove", k=1, now=T0 + timedelta(hours=5))
    assert found[0].memory.npc == fork
    assert _without_npc((await _stream(pool, npc))[0]) == _without_npc(source)  # the source is untouched


async def test_a_fork_made_by_copying_before_inheritance_existed_still_folds_its_copies(
    pool: AsyncConnectionPool, hashing_deps: MemoryDeps
) -> None:
    npc = await _world_with_memories(pool, hashing_deps)
    fork = NpcRef(npc.tenant_id, f"{npc.world_id}-old", npc.npc_id)
    store = EventStore()
    async with pool.connection() as conn, conn.transaction():  # as forks were made up to migration 0132
        source_world = EventFilter(tenant_id=npc.tenant_id, world_id=npc.world_id)
        history = await store.read_all(conn, 0, 1000, source_world)
        streams: dict[str, list[Envelope]] = {}
        for stored in history:
            copy = stored.envelope.model_copy(update={
                "event_id": uuid.uuid4(), "world_id": fork.world_id, "causation_id": stored.envelope.event_id,
                "forked_from": stored.envelope.event_id})
            streams.setdefault(stored.stream_id.replace(npc.world_id, fork.world_id), []).append(copy)
        for stream_id, copies in streams.items():
            await store.append(conn, stream_id, copies, expected_version=0)
        at = T0 + timedelta(hours=9)
        forked = Envelope.new(WorldForked(source_world_id=npc.world_id, at_world_time=at,
                                          copied_events=len(history)),
                              tenant_id=npc.tenant_id, world_id=fork.world_id, world_time=at)
        await store.append(conn, world_stream(fork.world_id), [forked])
    await _apply_world(pool, hashing_deps, fork.world_id)
    source, _ = await _stream(pool, npc)
    copied, _ = await _stream(pool, fork)
    assert _without_npc(copied) == _without_npc(source)


async def test_replay_rebuilds_every_stream_identically_without_re_embedding(
    pool: AsyncConnectionPool, hashing_deps: MemoryDeps
) -> None:
    npc = await _world_with_memories(pool, hashing_deps)
    before = await _stream(pool, npc)
    assert isinstance(hashing_deps.embedder, HashingEmbedder)
    calls = hashing_deps.embedder.calls
    await _consumed(pool, hashing_deps)
    await rebuild(pool, build_projection(hashing_deps))
    assert await _stream(pool, npc) == before
    assert hashing_deps.embedder.calls == calls
    async with pool.connection() as conn:
        persona = await (
            await conn.execute("SELECT name, persona FROM memory_npcs WHERE world_id = %s", (npc.world_id,))
        ).fetchone()
    assert persona == ("Isabella", "Isabella")


async def test_replay_re_embeds_when_no_vector_is_kept(
    pool: AsyncConnectionPool, hashing_deps: MemoryDeps
) -> None:
    npc = await _world_with_memories(pool, hashing_deps)
    memories, vectors = await _stream(pool, npc)
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("DELETE FROM memory_npcs WHERE world_id = %s", (npc.world_id,))
    await _apply_world(pool, hashing_deps, npc.world_id)
    again = await _stream(pool, npc)
    assert _without_npc(again[0]) == _without_npc(memories)
    assert {k: np.round(v, 6).tolist() for k, v in again[1].items()} == {
        k: np.round(v, 6).tolist() for k, v in vectors.items()
    }


def test_npcworld_replay_memory_rebuilds_from_the_command_line(
    hashing_deps: MemoryDeps, database_url: str, broker: BrokerForTests
) -> None:
    with psycopg.connect(database_url) as conn:
        conn.execute(_CLAIM_ALL, (list(build_projection(hashing_deps).appliers),))
    with psycopg.connect(database_url) as conn:
        before = conn.execute("SELECT count(*), coalesce(sum(memory_count), 0) FROM memory_npcs").fetchone()
    env = {
        "DATABASE_URL": database_url,
        "KAFKA_BOOTSTRAP_SERVERS": broker.bootstrap,
        "EMBEDDINGS_PROVIDER": "local",
    }
    result = CliRunner().invoke(main, ["replay", "--service", "memory"], env=env)
    assert result.exit_code == 0, result.output
    with psycopg.connect(database_url) as conn:
        after = conn.execute("SELECT count(*), coalesce(sum(memory_count), 0) FROM memory_npcs").fetchone()
    assert after == before
