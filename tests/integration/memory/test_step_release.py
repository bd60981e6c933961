"""Releasing a stepped world's held writes: short transactions, no model call inside one, nothing doubled."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import psycopg
import pytest
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, NpcCreated, ObservationMade, StepCompleted
from npcworld.embeddings import PrefetchingEmbedder
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.lanes import handling_lane
from npcworld.outbox import OutboxRelay
from services.memory.batching import MemoryConsumerLoop
from services.memory.deps import MemoryDeps
from services.memory.domain import ImportanceRatings, NpcRef, RatingContext, memory_stream_id
from services.memory.gathering import DraftCollector
from services.memory.handlers import ROUTES, on_observation_made, release_steps
from services.memory.holding import release_in_chunks
from tests.infra import BrokerForTests
from tests.integration.memory.support import T0, envelope, handle, new_npc
from tests.polling import eventually
from tests.unit.memory.fakes import FakeImportanceRater, HashingEmbedder

pytestmark = pytest.mark.integration

_T = TypeVar("_T")

_WRITERS_OPEN = (
    "SELECT pid, backend_xid::text, left(query, 200) FROM pg_stat_activity"
    " WHERE backend_xid IS NOT NULL AND pid = ANY(%s)"
)
_CALL_S = 0.05  # each fake model call takes this long, as a real one takes much longer
_MINE = "sees lantern"  # in every text of this file's steps


class _WritersSeen:
    """Counts, for each model call, the consumer's write transactions (which hold back the outbox relay)
    open both before and after it: a transaction kept open across a model call. A short write of its own
    meanwhile (a heartbeat) holds another transaction id and does not count."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self.consumer_pids: list[int] = []
        self.seen: list[int] = []
        self.spanning: list[str] = []  # the statements of transactions seen across a call, for the message

    async def open_writers(self) -> dict[tuple[int, str], str]:
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(_WRITERS_OPEN, (self.consumer_pids,))).fetchall()
        return {(int(pid), str(xid)): str(query) for pid, xid, query in rows}

    async def around(self, texts: Sequence[str], call: Callable[[], Awaitable[_T]]) -> _T:
        if not any(_MINE in t for t in texts):  # another test's event, from the shared broker
            return await call()
        before = await self.open_writers()
        await asyncio.sleep(_CALL_S)
        result = await call()
        after = await self.open_writers()
        spanning = before.keys() & after.keys()
        self.seen.append(len(spanning))
        self.spanning += [f"{key}: {before[key]!r} ... {after[key]!r}" for key in spanning]
        return result


class _WatchedRater(FakeImportanceRater):
    def __init__(self, writers: _WritersSeen) -> None:
        super().__init__()
        self.writers = writers

    async def rate(self, descriptions: Sequence[str], context: RatingContext) -> ImportanceRatings:
        return await self.writers.around(descriptions,
                                         lambda: super(_WatchedRater, self).rate(descriptions, context))


class _WatchedEmbedder(HashingEmbedder):
    def __init__(self, writers: _WritersSeen) -> None:
        super().__init__(16)
        self.writers = writers

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self.writers.around(texts, lambda: super(_WatchedEmbedder, self).embed(texts))


async def _stepped_world(
    pool: AsyncConnectionPool, deps: MemoryDeps, npcs: int, per_npc: int
) -> tuple[list[NpcRef], Envelope]:
    """NPC streams in a stepped world, ``per_npc`` observations each held, and the step's StepCompleted."""
    base = new_npc()
    refs = [NpcRef(base.tenant_id, base.world_id, f"npc-{i}") for i in range(npcs)]
    for ref in refs:
        created = NpcCreated(npc_id=ref.npc_id, name=ref.npc_id.title(), age=30, traits=("kind",),
                             occupation="baker", seed="likes bread", location="town")
        await handle(pool, envelope(created, ref, T0), deps)
    async with pool.connection() as conn:
        await deps.repository.set_stepped(conn, base.tenant_id, base.world_id, True)
    for j in range(per_npc):
        for ref in refs:
            seen = ObservationMade(description=f"{ref.npc_id} sees lantern {j} by the well",
                                   subject=f"lantern {j}")
            await _store_and_handle(pool, deps, envelope(seen, ref, T0 + timedelta(seconds=10)))
    return refs, await _store(pool, envelope(StepCompleted(step=1), base, T0 + timedelta(seconds=10)))


async def _store(pool: AsyncConnectionPool, event: Envelope) -> Envelope:
    async with pool.connection() as conn, conn.transaction():
        await EventStore().append(conn, f"test-{event.event_id}", [event])
    return event


async def _store_and_handle(pool: AsyncConnectionPool, deps: MemoryDeps, event: Envelope) -> None:
    await handle(pool, await _store(pool, event), deps)


async def _recorded(pool: AsyncConnectionPool, refs: list[NpcRef]) -> list[tuple[str, int]]:
    """Every observation memory of these NPCs with the transaction that stored it, in store order."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT payload->>'description', xmin::text::bigint FROM events"
            " WHERE type = 'MemoryRecorded' AND tenant_id || '/' || stream_id = ANY(%s)"
            " AND payload->>'kind' = 'observation'"
            " ORDER BY seq",
            ([f"{r.tenant_id}/{memory_stream_id(r)}" for r in refs],),
        )
        return [(r[0], int(r[1])) for r in await cur.fetchall()]


async def _held(pool: AsyncConnectionPool, world: str) -> int:
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT count(*) FROM memory_held WHERE world_id = %s", (world,))
                     ).fetchone()
    return int(row[0]) if row else 0


async def _publishable(pool: AsyncConnectionPool, world: str) -> int:
    """Observation memories of the world waiting in the outbox (what the relay will publish)."""
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT count(*) FROM outbox o JOIN events e ON e.seq = o.seq WHERE e.world_id = %s"
            " AND e.type = 'MemoryRecorded' AND e.payload->>'kind' = 'observation'", (world,))).fetchone()
    return int(row[0]) if row else 0


async def _consume_until_handled(
    pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests, deps: MemoryDeps,
    writers: _WritersSeen, name: str, events: Sequence[Envelope],
) -> None:
    """Run the memory consumer ``name`` (on connections ``writers`` watches) and the relay until the consumer
    has claimed every one of ``events``."""

    async def remember(conn: AsyncConnection[Any]) -> None:
        writers.consumer_pids.append(conn.info.backend_pid)

    consumer_pool = AsyncConnectionPool(database_url, min_size=1, max_size=4, configure=remember, open=False)
    await consumer_pool.open(wait=True)
    stop = asyncio.Event()
    loop = MemoryConsumerLoop(name, ROUTES, deps, pool=consumer_pool, bootstrap=broker.bootstrap)
    tasks = [asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
             asyncio.create_task(loop.run(stop))]
    try:
        async def handled() -> int:
            async with pool.connection() as conn:
                row = await (await conn.execute(
                    "SELECT count(*) FROM processed_events WHERE consumer = %s AND event_id = ANY(%s)",
                    (name, [e.event_id for e in events]))).fetchone()
            return int(row[0]) if row else 0

        await eventually(handled, lambda n: n == len(events), timeout=60)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        await consumer_pool.close()


def _fixed_order(refs: list[NpcRef], per_npc: int) -> list[str]:
    return [f"{r.npc_id} sees lantern {j} by the well" for r in refs for j in range(per_npc)]


async def test_a_step_is_released_in_several_short_transactions_in_the_fixed_order(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    refs, step = await _stepped_world(pool, deps, npcs=3, per_npc=5)
    visible_while_releasing: list[int] = []

    async def watched(event: Envelope, uow: UnitOfWork, d: MemoryDeps) -> None:
        if not isinstance(d.rater, DraftCollector):
            visible_while_releasing.append(await _publishable(pool, step.world_id))
        await on_observation_made(event, uow, d)

    released = await release_in_chunks([step], deps, pool, {"ObservationMade": watched}, chunk=4)
    await handle(pool, step, deps)  # the StepCompleted's own transaction finds nothing left

    recorded = await _recorded(pool, refs)
    assert released == 15
    assert [d for d, _ in recorded] == _fixed_order(refs, 5)
    assert len({xid for _, xid in recorded}) >= 4  # at most 4 held writes per transaction
    assert await _held(pool, step.world_id) == 0
    # Other services see the step's memories all at once, when the release is done.
    assert visible_while_releasing == [0] * 15
    assert await _publishable(pool, step.world_id) == 15


class _RaterOfMany(FakeImportanceRater):
    """Rates several NPCs at once, as the LLM layer's rater does with one importance_batch call."""

    def __init__(self) -> None:
        super().__init__()
        self.shared: list[list[tuple[tuple[str, ...], RatingContext]]] = []

    async def rate_many(
        self, requests: Sequence[tuple[Sequence[str], RatingContext]]
    ) -> list[ImportanceRatings]:
        self.shared.append([(tuple(t), c) for t, c in requests])
        return [await FakeImportanceRater.rate(FakeImportanceRater(), t, c) for t, c in requests]


async def test_a_steps_new_memories_of_every_npc_are_rated_in_one_call(pool: AsyncConnectionPool) -> None:
    rater = _RaterOfMany()
    deps = MemoryDeps(embedder=HashingEmbedder(16), rater=rater)
    refs, step = await _stepped_world(pool, deps, npcs=3, per_npc=2)
    rater.calls.clear()  # the NPCs' seed memories, rated when they were created

    assert await release_in_chunks([step], deps, pool, {"ObservationMade": on_observation_made}) == 6
    assert rater.calls == []  # no call for one NPC alone
    assert [[(texts, c.npc.npc_id) for texts, c in call] for call in rater.shared] == [
        [((f"{r.npc_id} sees lantern 0 by the well", f"{r.npc_id} sees lantern 1 by the well"), r.npc_id)
         for r in refs]
    ]
    assert [d for d, _ in await _recorded(pool, refs)] == _fixed_order(refs, 2)


async def test_writes_stored_after_the_step_completed_wait_for_the_next_step(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    refs, step = await _stepped_world(pool, deps, npcs=1, per_npc=2)
    late = await _store(pool, envelope(ObservationMade(description="a late lantern", subject="late"),
                                       refs[0], T0 + timedelta(seconds=10)))
    await handle(pool, late, deps)  # held after the StepCompleted was stored: it belongs to the next step

    await release_steps([step], deps, pool)
    await handle(pool, step, deps)
    assert [d for d, _ in await _recorded(pool, refs)] == _fixed_order(refs, 2)
    assert await _held(pool, step.world_id) == 1

    following = await _store(pool, envelope(StepCompleted(step=2), refs[0], T0 + timedelta(seconds=20)))
    await release_steps([following], deps, pool)
    await handle(pool, following, deps)
    assert [d for d, _ in await _recorded(pool, refs)] == [*_fixed_order(refs, 2), "a late lantern"]


async def test_player_traffic_in_a_stepped_world_is_written_at_once_not_held_for_the_step(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    """A step never waits for player traffic (npcworld.lanes), so memory does not hold it for the step's end
    either: the StepCompleted's release does the world's work only."""
    refs, step = await _stepped_world(pool, deps, npcs=1, per_npc=1)
    posted = await _store(pool, envelope(ObservationMade(description="a player waves", source="studio"),
                                         refs[0], T0 + timedelta(seconds=5)))
    with handling_lane("ingest"):
        await handle(pool, posted, deps)
    assert [d for d, _ in await _recorded(pool, refs)] == ["a player waves"]
    assert await _held(pool, step.world_id) == 1  # the world's own write still waits for its step

    await release_steps([step], deps, pool)
    await handle(pool, step, deps)
    assert [d for d, _ in await _recorded(pool, refs)] == ["a player waves", *_fixed_order(refs, 1)]


async def test_a_release_cut_short_by_a_failure_is_finished_once_by_the_step_completed(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    refs, step = await _stepped_world(pool, deps, npcs=2, per_npc=4)
    failing = {"left": 1}

    async def fails_once_on_the_sixth(event: Envelope, uow: UnitOfWork, d: MemoryDeps) -> None:
        assert isinstance(event.payload, ObservationMade)
        applying = not isinstance(d.rater, DraftCollector)  # not the dry run that finds the slow calls
        if applying and event.payload.description == _fixed_order(refs, 4)[5] and failing["left"]:
            failing["left"] -= 1
            raise ConnectionError("the database went away mid-release")
        await on_observation_made(event, uow, d)

    with pytest.raises(ConnectionError):
        await release_in_chunks([step], deps, pool, {"ObservationMade": fails_once_on_the_sixth}, chunk=2)
    assert len(await _recorded(pool, refs)) == 4  # two chunks committed, the third rolled back

    await handle(pool, step, deps)  # the consumer then claims the StepCompleted with the rest
    assert [d for d, _ in await _recorded(pool, refs)] == _fixed_order(refs, 4)


async def test_a_release_chunk_that_meets_a_deadlock_is_redone_not_left_to_the_step_completed(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    """A chunk's transaction that loses a lock cycle with another writer (Postgres fails one of them) is
    tried again: the release ends whole, in order, without leaving the rest to the StepCompleted's own
    transaction (which would rate it inside that transaction)."""
    refs, step = await _stepped_world(pool, deps, npcs=2, per_npc=4)
    failing = {"left": 1}

    async def deadlocks_once_on_the_sixth(event: Envelope, uow: UnitOfWork, d: MemoryDeps) -> None:
        assert isinstance(event.payload, ObservationMade)
        applying = not isinstance(d.rater, DraftCollector)
        if applying and event.payload.description == _fixed_order(refs, 4)[5] and failing["left"]:
            failing["left"] -= 1
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        await on_observation_made(event, uow, d)

    released = await release_in_chunks([step], deps, pool, {"ObservationMade": deadlocks_once_on_the_sixth},
                                       chunk=2)
    assert released == 8 and failing["left"] == 0
    assert [d for d, _ in await _recorded(pool, refs)] == _fixed_order(refs, 4)
    assert await _held(pool, step.world_id) == 0


async def test_the_consumer_makes_a_steps_model_calls_with_no_transaction_open(
    pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests
) -> None:
    """Regression: the whole step used to be rated and embedded inside the StepCompleted's transaction, which
    holds a transaction id from its first write, so every event stored meanwhile (by any service) waited
    behind it in the outbox and the world's next step waited for all of it."""
    writers = _WritersSeen(pool)
    deps = MemoryDeps(embedder=PrefetchingEmbedder(_WatchedEmbedder(writers)), rater=_WatchedRater(writers))
    refs, step = await _stepped_world(pool, MemoryDeps(embedder=HashingEmbedder(16),
                                                       rater=FakeImportanceRater()), npcs=3, per_npc=3)
    writers.seen.clear()
    name = f"memory-{uuid.uuid4().hex[:8]}"
    async with pool.connection() as conn:  # only the step is this consumer's to handle
        await conn.execute("INSERT INTO processed_events (consumer, event_id) SELECT %s, event_id FROM events"
                           " WHERE event_id <> %s", (name, step.event_id))

    await _consume_until_handled(pool, database_url, broker, deps, writers, name, [step])
    assert [d for d, _ in await _recorded(pool, refs)] == _fixed_order(refs, 3)
    assert writers.seen and set(writers.seen) == {0}, "\n".join(writers.spanning)


async def test_player_traffic_in_a_stepped_world_is_rated_and_embedded_with_no_transaction_open(
    pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests
) -> None:
    """Regression: perceptions a studio posts in a stepped world are written at once (not held for the step),
    yet the consumer left them out of the calls it makes before its transaction, as if they were held: each
    was rated and embedded inside it, and under client load those transactions held the relay, and with it
    the world's next step, back for seconds. (Two phases, as the service runs with every provider.)"""
    writers = _WritersSeen(pool)
    deps = MemoryDeps(embedder=PrefetchingEmbedder(_WatchedEmbedder(writers)), rater=_WatchedRater(writers),
                      rate_before_transaction=True)
    refs, _ = await _stepped_world(pool, MemoryDeps(embedder=HashingEmbedder(16),
                                                    rater=FakeImportanceRater()), npcs=2, per_npc=0)
    name = f"memory-{uuid.uuid4().hex[:8]}"
    async with pool.connection() as conn:  # only the posted perceptions are this consumer's to handle
        await conn.execute(
            "INSERT INTO processed_events (consumer, event_id) SELECT %s, event_id FROM events", (name,)
        )
    posted = [await _store(pool, envelope(ObservationMade(description=f"{r.npc_id} sees lantern {j} held up"
                                                                      " by a player", source="studio"),
                                          r, T0 + timedelta(seconds=j)))
              for j in range(3) for r in refs]

    await _consume_until_handled(pool, database_url, broker, deps, writers, name, posted)
    assert len(await _recorded(pool, refs)) == len(posted)  # written at once: nothing held for the step
    assert writers.seen and set(writers.seen) == {0}, "\n".join(writers.spanning)


@pytest.mark.parametrize("remote", [True, False], ids=["remote-rater", "local-rater"])
async def test_a_real_time_polls_ratings_are_made_with_no_transaction_open_when_they_call_a_remote_model(
    pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests, remote: bool
) -> None:
    """In a world on a real-time clock nothing is held for a step: each poll is recorded at once. With a
    rater that calls a remote model, a dry run finds the poll's ratings and they are made before its
    transaction; with the offline rater (local, quick) they are made inside it, as the dry run would cost
    more than it saves."""
    writers = _WritersSeen(pool)
    deps = MemoryDeps(embedder=PrefetchingEmbedder(_WatchedEmbedder(writers)), rater=_WatchedRater(writers),
                      rate_before_transaction=remote)
    setup = MemoryDeps(embedder=HashingEmbedder(16), rater=FakeImportanceRater())
    ref = new_npc()
    created = NpcCreated(npc_id=ref.npc_id, name="Ada", age=30, traits=("kind",), occupation="baker",
                         seed="likes bread", location="town")
    await handle(pool, envelope(created, ref, T0), setup)
    name = f"memory-{uuid.uuid4().hex[:8]}"
    async with pool.connection() as conn:  # only this test's observations are this consumer's to handle
        await conn.execute(
            "INSERT INTO processed_events (consumer, event_id) SELECT %s, event_id FROM events", (name,)
        )
    observations = [ObservationMade(description=f"Ada sees lantern {j} by the well", subject=f"lantern {j}")
                    for j in range(4)]
    seen = [await _store(pool, envelope(o, ref, T0 + timedelta(seconds=j)))
            for j, o in enumerate(observations)]

    await _consume_until_handled(pool, database_url, broker, deps, writers, name, seen)
    assert len(await _recorded(pool, [ref])) == len(seen)
    assert writers.seen, "no model call was watched"
    if remote:
        assert set(writers.seen) == {0}, "\n".join(writers.spanning)
    else:
        assert max(writers.seen) > 0  # inside the poll's transaction, after its first write


async def test_a_steps_held_memories_are_rated_in_one_call_per_npc(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    """The paper's per-step batch: whatever an NPC took in during a step is rated in one model call, however
    many events brought it (here four observations each for three NPCs: three calls, not twelve), also when
    the release's chunks (six held writes here) would cut an NPC's writes in two."""
    refs, step = await _stepped_world(pool, deps, npcs=3, per_npc=4)
    rater = deps.rater
    assert isinstance(rater, FakeImportanceRater)
    rater.calls.clear()

    released = await release_in_chunks([step], deps, pool, {"ObservationMade": on_observation_made}, chunk=6)

    assert released == 12
    assert [d for d, _ in await _recorded(pool, refs)] == _fixed_order(refs, 4)
    assert [(texts, context.npc.npc_id) for texts, context in rater.calls] == [
        (tuple(f"{r.npc_id} sees lantern {j} by the well" for j in range(4)), r.npc_id) for r in refs
    ]


async def test_a_state_seen_again_keeps_its_earlier_rating_and_costs_no_call(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    """An observation the NPC stored and rated before (the stove heating soup, then burning, then heating
    soup again) is stored again, as the state changed, with the rating it got the first time and no call."""
    ref = new_npc()
    created = NpcCreated(npc_id=ref.npc_id, name="Ada", age=30, traits=("kind",), occupation="baker",
                         seed="likes bread", location="town")
    await handle(pool, envelope(created, ref, T0), deps)
    rater = deps.rater
    assert isinstance(rater, FakeImportanceRater)
    rater.calls.clear()
    recorded = []
    for minutes, text in enumerate(["The party stove is heating soup", "the stove is burning",
                                    "the party stove is heating soup."]):
        seen = ObservationMade(description=text, subject="stove", location="town:kitchen")
        recorded += await handle(pool, envelope(seen, ref, T0 + timedelta(minutes=minutes)), deps)

    payloads = [e.payload for e in recorded]
    assert [p.description for p in payloads] == [  # type: ignore[attr-defined]
        "The party stove is heating soup", "the stove is burning", "the party stove is heating soup."]
    assert [p.importance for p in payloads] == [9, 2, 9]  # type: ignore[attr-defined]
    assert [p.importance_model for p in payloads] == ["fake-rater", "fake-rater", "earlier-rating"]  # type: ignore[attr-defined]
    assert [texts for texts, _ in rater.calls] == [("The party stove is heating soup",),
                                                   ("the stove is burning",)]


async def test_an_idle_object_is_rated_1_without_a_call_as_in_the_papers_code(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    ref = new_npc()
    created = NpcCreated(npc_id=ref.npc_id, name="Ada", age=30, traits=("kind",), occupation="baker",
                         seed="likes bread", location="town")
    await handle(pool, envelope(created, ref, T0), deps)
    rater = deps.rater
    assert isinstance(rater, FakeImportanceRater)
    rater.calls.clear()
    seen = ObservationMade(description="the party lantern is idle", subject="lantern", location="town:square")
    recorded = await handle(pool, envelope(seen, ref, T0 + timedelta(minutes=1)), deps)
    assert [(e.payload.importance, e.payload.importance_model) for e in recorded] == [  # type: ignore[attr-defined]
        (1, "idle-rule")]
    assert rater.calls == []
