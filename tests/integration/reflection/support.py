"""Helpers for reflection integration tests: an NPC's day of observations, handler runs, run streams."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, ObservationMade, ReflectionCompleted
from npcworld.db import open_pool
from npcworld.eventstore import EventStore, StoredEvent, UnitOfWork
from npcworld.llm import LLMSettings, build_llm
from npcworld.memory_client.http import HttpMemoryReader
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef
from services.reflection.deps import ConsumerDeps, RunDeps
from services.reflection.handlers import ROUTES
from services.reflection.job import ReflectionJob
from services.reflection.reflect import Outcome
from services.reflection.repository import NpcKey, ReflectionRepository
from services.reflection.runtime import WorkerRuntime
from services.reflection.settings import ReflectionSettings
from tests.integration.memory.support import envelope, handle

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)
REDIS_URL = "redis://127.0.0.1:6379/0"  # unique queue names per test keep tests apart


class RecordingRuntime(WorkerRuntime):
    """The worker runtime, noting each job's outcome so the test knows when both deliveries ran."""

    outcomes: list[Outcome]

    def run(self, job: ReflectionJob) -> Outcome:
        outcome = super().run(job)
        self.outcomes.append(outcome)
        return outcome


def recording_runtime(database_url: str, memory_url: str) -> RecordingRuntime:
    async def build() -> RunDeps:
        pool = await open_pool(database_url, min_size=1, max_size=2)
        return RunDeps(pool=pool, llm=build_llm(LLMSettings(), pool), reader=HttpMemoryReader(memory_url),
                       settings=ReflectionSettings())

    runtime = RecordingRuntime(build)
    runtime.outcomes = []
    return runtime



# With the keyword rater (a party 9, anything else 2) the 26th observation brings the sum to exactly 150
# (no reflection yet: it must exceed 150) and the 27th to 159; the last two arrive while the run is pending.
CROSSING = 27
DAY = [
    "Marta is planning a Valentine's Day party at Hobbs Cafe",
    "Marta brewed the morning coffee at Hobbs Cafe",
    "Marta asked Sam to come to the Valentine's Day party",
    "Sam said he is running for mayor",
    "Isabella offered to decorate Hobbs Cafe for the party",
    "Marta wiped the counter at Hobbs Cafe",
    "Marta wrote the party invitations",
    "Klaus is reading about gentrification in the library",
    "Marta invited Klaus to the party",
    "Marta watered the plants by the window",
    "Maria said she will bring a cake to the party",
    "Marta counted the coins in the till",
    "Isabella and Marta picked the party music",
    "Sam talked about the mayor election at the counter",
    "Marta ordered balloons for the party",
    "Marta swept the floor at Hobbs Cafe",
    "Klaus asked what time the party starts",
    "Marta closed the window",
    "Marta hung the party decorations",
    "Marta fed the cat",
    "Maria told Klaus about the party",
    "Marta washed the cups",
    "Sam promised to come to the party after his campaign meeting",
    "Marta set out chairs for the party guests",
    "Marta locked the cafe door",
    "Marta baked snacks for the party",
    "Marta tried on her party dress",
    "Marta turned off the lights",
    "Marta sent a reminder about the party",
]


class ListQueue:
    """Collects enqueued jobs, as the Celery queue would deliver them."""

    def __init__(self) -> None:
        self.jobs: list[ReflectionJob] = []

    async def enqueue(self, job: ReflectionJob) -> None:
        self.jobs.append(job)


async def record_day(
    pool: AsyncConnectionPool, npc: NpcRef, deps: MemoryDeps, texts: list[str] = DAY
) -> list[Envelope]:
    """Each text observed a minute after the previous; returns the MemoryRecorded events written."""
    recorded: list[Envelope] = []
    for i, text in enumerate(texts):
        observed = envelope(ObservationMade(description=text), npc, T0 + timedelta(minutes=i))
        recorded += [e for e in await handle(pool, observed, deps) if e.type == "MemoryRecorded"]
    return recorded


async def consume(pool: AsyncConnectionPool, event: Envelope, deps: ConsumerDeps) -> list[Envelope]:
    """Run the reflection consumer's handler for ``event`` in one transaction, as the loop does."""
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore(), cause=event)
        await ROUTES[event.type](event, uow, deps)
    return uow.appended


async def consume_all(
    pool: AsyncConnectionPool, events: list[Envelope], deps: ConsumerDeps
) -> list[Envelope]:
    appended: list[Envelope] = []
    for event in events:
        appended += await consume(pool, event, deps)
    return appended


async def run_stream(pool: AsyncConnectionPool, run_key: str) -> list[StoredEvent]:
    async with pool.connection() as conn:
        tenant_id = run_key.split(":")[1]  # reflection:<tenant>:<world>:<npc>:<run>
        return await EventStore().read_stream(conn, tenant_id, run_key)


async def completed(pool: AsyncConnectionPool, run_key: str) -> ReflectionCompleted:
    events = await run_stream(pool, run_key)
    assert [e.envelope.type for e in events] == ["ReflectionTriggered", "ReflectionCompleted"]
    payload = events[1].envelope.payload
    assert isinstance(payload, ReflectionCompleted)
    return payload


async def accumulator(pool: AsyncConnectionPool, npc: NpcRef) -> tuple[int, int, int | None]:
    async with pool.connection() as conn:
        acc = await ReflectionRepository().get(conn, NpcKey(npc.tenant_id, npc.world_id, npc.npc_id))
    assert acc is not None
    return acc.importance_sum, acc.last_run, acc.pending_run


async def memory_ids(pool: AsyncConnectionPool, npc: NpcRef, kind: str | None = None) -> set[str]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT m.memory_id::text FROM memories AS m JOIN memory_npcs AS n USING (npc_key)"
            " WHERE n.tenant_id = %s AND n.world_id = %s AND n.npc_id = %s"
            " AND (%s::text IS NULL OR m.kind = %s)",
            (npc.tenant_id, npc.world_id, npc.npc_id, kind, kind),
        )
        return {row[0] for row in await cur.fetchall()}
