"""The memory service's internal API over HTTP, running with its consumer on the real Postgres and broker."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.cause import handling
from npcworld.contracts import MemoriesAccessed, NpcCreated, ObservationMade, StepCompleted
from npcworld.embeddings import LocalMiniLMEmbedder
from npcworld.errors import NotFoundError, TransientError, ValidationError
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.lanes import handling_lane
from npcworld.memory_client import RetrievalRequest
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.outbox import OutboxRelay
from services.memory.domain import NpcRef, access_stream_id
from services.memory.repository import MemoryRepository
from tests.infra import BrokerForTests
from tests.integration.memory.support import T0, envelope, new_npc, running_memory_service
from tests.polling import eventually

pytestmark = pytest.mark.integration

SEED = "Isabella runs Hobbs Cafe; she is planning a Valentine's Day party; she likes Klaus"
SEEN = ["the stove is idle", "Klaus is reading a book", "Maria is studying chemistry", "the cafe is crowded"]


@pytest.fixture
async def service(
    pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests, local_embedder: LocalMiniLMEmbedder
) -> AsyncIterator[HttpMemoryReader]:
    stop = asyncio.Event()
    relay = asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop))
    try:
        async with running_memory_service(database_url, broker.bootstrap, embedder=local_embedder) as url:
            reader = HttpMemoryReader(url)
            yield reader
            await reader.aclose()
    finally:
        stop.set()
        await relay


async def _populate(pool: AsyncConnectionPool, reader: HttpMemoryReader) -> NpcRef:
    npc = new_npc()
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        created = NpcCreated(npc_id=npc.npc_id, name="Isabella Rodriguez", seed=SEED)
        await uow.append(f"world-{npc.world_id}", [envelope(created, npc, T0, npc_id="")])
        seen = [envelope(ObservationMade(description=t), npc, T0 + timedelta(hours=i + 1))
                for i, t in enumerate(SEEN)]
        await uow.append(f"perception-{npc.npc_id}", seen)

    async def count() -> int:
        try:
            return len(await reader.recent(npc.tenant_id, npc.world_id, npc.npc_id))
        except NotFoundError:
            return 0

    await eventually(count, lambda n: n == 7, timeout=60)
    return npc


def _request(npc: NpcRef, query: str, k: int = 3) -> RetrievalRequest:
    return RetrievalRequest(tenant_id=npc.tenant_id, world_id=npc.world_id, npc_id=npc.npc_id, query=query,
                            k=k, now=T0 + timedelta(hours=6))


async def _accesses(pool: AsyncConnectionPool, npc: NpcRef) -> list[MemoriesAccessed]:
    async with pool.connection() as conn:
        events = await EventStore().read_stream(conn, npc.tenant_id, access_stream_id(npc))
    return [e.envelope.payload for e in events if isinstance(e.envelope.payload, MemoriesAccessed)]


async def test_retrieval_over_http_ranks_and_the_access_becomes_an_event_within_seconds(
    pool: AsyncConnectionPool, service: HttpMemoryReader
) -> None:
    npc = await _populate(pool, service)
    found = await service.retrieve(_request(npc, "Is there a party for Valentine's Day?"))
    assert found[0].description == "she is planning a Valentine's Day party"
    assert len(found) == 3 and all(0 <= r.relevance <= 1 and 0 <= r.recency <= 1 for r in found)
    assert all(r.score == pytest.approx(r.recency + r.importance_score + r.relevance) for r in found)
    # The returned view shows the access time the recency score came from; the stream moves on once the
    # service has turned the noted access into its event (about a second).
    [accessed] = await eventually(lambda: _accesses(pool, npc), lambda a: len(a) == 1, timeout=15)
    assert accessed.memory_ids == tuple(sorted(r.memory_id for r in found))
    ranked = tuple(r.memory_id for r in found)
    assert [(r.cause, r.memory_ids) for r in accessed.retrievals] == [(None, ranked)]
    after = {m.memory_id: m for m in await service.recent(npc.tenant_id, npc.world_id, npc.npc_id)}
    assert all(after[r.memory_id].last_accessed_at == T0 + timedelta(hours=6) for r in found)


async def test_a_retrieval_made_while_handling_an_event_is_found_by_that_event(
    pool: AsyncConnectionPool, service: HttpMemoryReader
) -> None:
    npc = await _populate(pool, service)
    handled, chain = uuid.uuid4(), uuid.uuid4()
    with handling(handled, chain):
        party = await service.retrieve(_request(npc, "the party"))
    await service.retrieve(_request(npc, "Klaus"))
    accesses = await eventually(lambda: _accesses(pool, npc), lambda a: len(a) >= 1, timeout=15)
    made = {r.cause: r.memory_ids for a in accesses for r in a.retrievals}
    assert made[handled] == tuple(r.memory_id for r in party) and None in made


async def test_a_stepped_worlds_accesses_are_one_event_at_the_steps_end_and_a_repeat_changes_nothing(
    pool: AsyncConnectionPool, service: HttpMemoryReader
) -> None:
    """A handler worked out before its transaction and again after its process died repeats its
    retrievals: the repeat changes nothing. A stepped world's accesses wait for its StepCompleted."""
    npc = await _populate(pool, service)
    async with pool.connection() as conn:
        await MemoryRepository().set_stepped(conn, npc.tenant_id, npc.world_id, True)
    handled = uuid.uuid4()
    with handling(handled, uuid.uuid4()):
        first = await service.retrieve(_request(npc, "the party"))
        again = await service.retrieve(_request(npc, "the party"))
    await service.retrieve(_request(npc, "Klaus"))
    assert [r.memory_id for r in again] == [r.memory_id for r in first]
    await asyncio.sleep(2.5)  # the service's flushing leaves a stepped world alone
    assert await _accesses(pool, npc) == []
    async with pool.connection() as conn, conn.transaction():
        done = envelope(StepCompleted(step=1), npc, T0 + timedelta(hours=6), npc_id="")
        await UnitOfWork(conn, EventStore()).append(f"clock-{npc.world_id}", [done])
    [accessed] = await eventually(lambda: _accesses(pool, npc), lambda a: len(a) == 1, timeout=30)
    made = {r.cause: r.memory_ids for r in accessed.retrievals}
    assert made[handled] == tuple(r.memory_id for r in first) and set(made) == {handled, None}


async def test_player_traffic_retrievals_in_a_stepped_world_hold_no_step_and_become_an_event_within_seconds(
    pool: AsyncConnectionPool, service: HttpMemoryReader
) -> None:
    """A chat or a posted perception retrieves in the lane of its traffic: the stepped clock appends no
    StepCompleted for it (nothing is held for the step), and its accesses are an event within seconds."""
    npc = await _populate(pool, service)
    async with pool.connection() as conn:
        await MemoryRepository().set_stepped(conn, npc.tenant_id, npc.world_id, True)
    chat, step = uuid.uuid4(), uuid.uuid4()
    with handling(chat, chat), handling_lane("interactive"):
        talked = await service.retrieve(_request(npc, "the party"))
    [accessed] = await eventually(lambda: _accesses(pool, npc), lambda a: len(a) == 1, timeout=15)
    assert {r.cause: r.memory_ids for r in accessed.retrievals} == {chat: tuple(r.memory_id for r in talked)}
    async with pool.connection() as conn:
        assert await _held(conn, npc) == 0
        with handling(step, step), handling_lane("world"):
            await service.retrieve(_request(npc, "Klaus"))
        assert await _held(conn, npc) == 1  # the world's own retrieval waits for the step's end


async def _held(conn: Any, npc: NpcRef) -> int:
    row = await (await conn.execute("SELECT count(*) FROM held_work WHERE tenant_id = %s AND world_id = %s"
                                    " AND until = 'step'", (npc.tenant_id, npc.world_id))).fetchone()
    return int(row[0])


async def test_concurrent_retrievals_for_one_npc_all_answer_while_it_keeps_recording(
    pool: AsyncConnectionPool, service: HttpMemoryReader
) -> None:
    npc = await _populate(pool, service)
    more = [envelope(ObservationMade(description=f"a villager walks past, number {i}"), npc,
                     T0 + timedelta(hours=7, minutes=i)) for i in range(6)]
    async with pool.connection() as conn, conn.transaction():
        await UnitOfWork(conn, EventStore()).append(f"perception-{npc.npc_id}", more)
    queries = ["the party", "Klaus", "chemistry", "the stove", "crowds", "Valentine's Day", "books", "cafe"]
    answers = await asyncio.gather(*(service.retrieve(_request(npc, q)) for q in queries))
    assert all(len(found) == 3 for found in answers)
    returned = {r.memory_id for found in answers for r in found}
    accesses = await eventually(lambda: _accesses(pool, npc),
                                lambda a: {m for x in a for m in x.memory_ids} == returned, timeout=15)
    assert len(accesses) < len(queries)  # one event per flush, not one per retrieval


async def test_bad_queries_get_4xx_naming_the_field_and_other_tenants_see_nothing(
    pool: AsyncConnectionPool, service: HttpMemoryReader
) -> None:
    npc = await _populate(pool, service)
    with pytest.raises(ValidationError) as blank:
        await service.retrieve(_request(npc, "   "))
    assert blank.value.field == "query"
    body = _request(npc, "party").model_dump(mode="json") | {"k": 0}
    async with httpx.AsyncClient(base_url=service.base_url) as raw:
        response = await raw.post("/internal/v1/retrieve", json=body)
    assert response.status_code == 422 and response.json()["field"] == "k"
    for other in (NpcRef("other-tenant", npc.world_id, npc.npc_id), NpcRef(npc.tenant_id, "w2", npc.npc_id),
                  NpcRef(npc.tenant_id, npc.world_id, "nobody")):
        with pytest.raises(NotFoundError):
            await service.retrieve(_request(other, "party"))
        with pytest.raises(NotFoundError):
            await service.recent(other.tenant_id, other.world_id, other.npc_id)


async def test_listing_filters_by_kind_and_time_and_pages_with_a_cursor(
    pool: AsyncConnectionPool, service: HttpMemoryReader
) -> None:
    npc = await _populate(pool, service)
    ids = (npc.tenant_id, npc.world_id, npc.npc_id)
    first = await service.list_memories(*ids, limit=3, kinds=("observation",))
    second = await service.list_memories(*ids, limit=3, kinds=("observation",), cursor=first.next_cursor)
    assert [m.description for m in first.items + second.items] == SEEN[::-1]
    assert second.next_cursor is None
    window = await service.list_memories(*ids, since=T0 + timedelta(hours=2), until=T0 + timedelta(hours=3))
    assert [m.description for m in window.items] == ["Maria is studying chemistry", "Klaus is reading a book"]
    seeds = await service.recent(*ids, kinds=("seed",))
    assert {m.description for m in seeds} == {p.strip() for p in SEED.split(";")}
    with pytest.raises(ValidationError) as bad:
        await service.list_memories(*ids, cursor="not-a-cursor")
    assert bad.value.field == "cursor"


async def test_a_reader_given_several_instances_answers_while_one_of_them_is_gone(
    pool: AsyncConnectionPool, service: HttpMemoryReader
) -> None:
    npc = await _populate(pool, service)
    gone = f"http://127.0.0.1:{_closed_port()}"
    reader = HttpMemoryReader(f"{gone},{service.base_url}")
    try:
        for _ in range(3):  # whichever instance a call starts at, the live one answers
            assert len(await reader.recent(npc.tenant_id, npc.world_id, npc.npc_id)) == 7
    finally:
        await reader.aclose()
    nobody = HttpMemoryReader(f"{gone},http://127.0.0.1:{_closed_port()}")
    try:
        with pytest.raises(TransientError, match="memory service unreachable"):
            await nobody.recent(npc.tenant_id, npc.world_id, npc.npc_id)
    finally:
        await nobody.aclose()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
