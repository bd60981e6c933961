"""Dialogue integration helpers: the relay, the memory service and the dialogue consumer running for real,
and small probes of what they wrote."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, EventPayload, MemoryKind, NpcCreated
from npcworld.db import open_pool
from npcworld.embeddings import Embedder
from npcworld.errors import NotFoundError
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.llm import build_llm
from npcworld.memory_client import MemoryView
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.messaging import ConsumerLoop, RetryPolicy
from npcworld.outbox import OutboxRelay
from services.dialogue.deps import DialogueDeps
from services.dialogue.handlers import ROUTES
from services.dialogue.settings import Settings
from tests.integration.memory.support import running_memory_service
from tests.integration.probes import ProbedLLM, TrackedPool
from tests.polling import eventually

T0 = datetime(2023, 2, 14, 15, 0, tzinfo=UTC)
PARTY = (
    "Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe on February 14th from 5pm to 7pm"
)


@dataclass(frozen=True)
class Stack:
    pool: AsyncConnectionPool
    memory: HttpMemoryReader
    # Each model call the dialogue consumer made: (prompt kind, whether one of its connections was then
    # inside a transaction), and the world it was made for, beside it. The consumer reads the topics from
    # the start, so earlier tests' worlds are in both.
    llm_calls: list[tuple[str, bool]]
    llm_worlds: list[str]

    def calls_in(self, world_id: str) -> list[tuple[str, bool]]:
        return [c for c, w in zip(self.llm_calls, self.llm_worlds, strict=True) if w == world_id]


@dataclass(frozen=True)
class Town:
    tenant_id: str
    world_id: str

    @property
    def cafe(self) -> str:
        return f"{self.world_id}:Hobbs Cafe"


@asynccontextmanager
async def running_dialogue(database_url: str, bootstrap: str, embedder: Embedder) -> AsyncIterator[Stack]:
    """Relay + memory service + dialogue consumer in this process until the block exits."""
    pool = await open_pool(database_url, min_size=1, max_size=6)
    stop = asyncio.Event()
    settings = Settings(database_url=database_url, kafka_bootstrap_servers=bootstrap)
    async with running_memory_service(database_url, bootstrap, embedder=embedder) as memory_url:
        memory = HttpMemoryReader(memory_url)
        tracked, calls, worlds = TrackedPool(pool), list[tuple[str, bool]](), list[str]()
        llm = ProbedLLM(build_llm(settings, pool), tracked, calls, worlds=worlds)
        deps = DialogueDeps(llm=llm, memory=memory, rules=settings.rules())
        loop = ConsumerLoop(
            f"dialogue-{uuid.uuid4().hex[:8]}",
            ROUTES,
            deps,
            pool=tracked,  # type: ignore[arg-type]
            bootstrap=bootstrap,
            policy=RetryPolicy(handler_attempts=2, base_delay=0.01, max_delay=0.1),
        )
        tasks = [
            asyncio.create_task(OutboxRelay(pool, bootstrap).run(stop)),
            asyncio.create_task(loop.run(stop)),
        ]

        async def started() -> bool:
            for task in tasks:
                if task.done():
                    task.result()
            return loop.started.is_set()

        try:
            await eventually(started, lambda ok: ok, timeout=60)
            yield Stack(pool, memory, calls, worlds)
        finally:
            stop.set()
            await asyncio.gather(*tasks)
            await memory.aclose()
            await pool.close()


def new_town() -> Town:
    return Town(f"tenant-{uuid.uuid4().hex[:8]}", f"world-{uuid.uuid4().hex[:8]}")


async def plant(
    pool: AsyncConnectionPool, town: Town, payload: EventPayload, *, npc_id: str | None, at: datetime = T0
) -> Envelope:
    event = Envelope.new(
        payload, tenant_id=town.tenant_id, world_id=town.world_id, world_time=at, npc_id=npc_id
    )
    async with pool.connection() as conn, conn.transaction():
        await UnitOfWork(conn, EventStore()).append(f"test-{town.world_id}-{uuid.uuid4().hex[:6]}", [event])
    return event


async def create_pair(pool: AsyncConnectionPool, town: Town) -> None:
    """Isabella, who plans a party at Hobbs Cafe, and Sam, who runs for mayor; both know the cafe."""
    await plant(
        pool,
        town,
        NpcCreated(
            npc_id="isabella",
            name="Isabella Rodriguez",
            occupation="cafe owner",
            seed=PARTY,
            known_places=(town.cafe,),
        ),
        npc_id=None,
        at=T0.replace(hour=6),
    )
    await plant(
        pool,
        town,
        NpcCreated(
            npc_id="sam",
            name="Sam Moore",
            occupation="shopkeeper",
            seed="Sam Moore is running for mayor",
            known_places=(town.cafe,),
        ),
        npc_id=None,
        at=T0.replace(hour=6),
    )


async def recent(stack: Stack, town: Town, npc_id: str, *kinds: MemoryKind) -> list[MemoryView]:
    """The NPC's newest memories of these kinds (none while the memory service has not heard of it)."""
    try:
        return await stack.memory.recent(town.tenant_id, town.world_id, npc_id, kinds=kinds)
    except NotFoundError:
        return []


async def seeded(stack: Stack, town: Town, npc_id: str) -> bool:
    return bool(await recent(stack, town, npc_id, "seed"))


async def world_events(pool: AsyncConnectionPool, town: Town) -> list[Envelope]:
    """Every event of the town, in order."""
    async with pool.connection() as conn:
        stored = await EventStore().read_all(
            conn, 0, 10_000, EventFilter(tenant_id=town.tenant_id, world_id=town.world_id)
        )
    return [s.envelope for s in stored]
