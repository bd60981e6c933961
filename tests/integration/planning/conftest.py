"""Planning integration fixtures: the relay, the memory service and the planning consumer, running for real
on the embedded Postgres and Tansu broker of the session, one stack per test module."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from npcworld.db import open_pool
from npcworld.embeddings import LocalMiniLMEmbedder
from npcworld.llm import build_llm
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.messaging import ConsumerLoop, RetryPolicy
from npcworld.outbox import OutboxRelay
from services.planning.deps import PlanningDeps
from services.planning.handlers import EVENTS_PER_TRANSACTION, ROUTES
from services.planning.settings import Settings
from tests.infra import BrokerForTests
from tests.integration.memory.support import running_memory_service
from tests.integration.planning.support import Stack
from tests.integration.probes import ProbedLLM, TrackedPool
from tests.polling import eventually


@pytest.fixture(scope="session")
def embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


@pytest.fixture(scope="module")
async def stack(
    database_url: str, broker: BrokerForTests, embedder: LocalMiniLMEmbedder
) -> AsyncIterator[Stack]:
    pool = await open_pool(database_url, min_size=1, max_size=6)
    stop = asyncio.Event()
    settings = Settings(database_url=database_url, kafka_bootstrap_servers=broker.bootstrap)
    async with running_memory_service(database_url, broker.bootstrap, embedder=embedder) as memory_url:
        memory = HttpMemoryReader(memory_url)
        tracked, calls, chains = TrackedPool(pool), list[tuple[str, bool]](), list[uuid.UUID | None]()
        deps = PlanningDeps(llm=ProbedLLM(build_llm(settings, pool), tracked, calls, chains), memory=memory)
        loop = ConsumerLoop(f"planning-{uuid.uuid4().hex[:8]}", ROUTES, deps,
                            pool=tracked,  # type: ignore[arg-type]
                            bootstrap=broker.bootstrap, events_per_transaction=EVENTS_PER_TRANSACTION,
                            policy=RetryPolicy(handler_attempts=2, base_delay=0.01, max_delay=0.1))
        relay = OutboxRelay(pool, broker.bootstrap)
        tasks = [asyncio.create_task(relay.run(stop)), asyncio.create_task(loop.run(stop))]
        try:
            await eventually(_started(loop, tasks), lambda ok: ok, timeout=60)
            yield Stack(pool, memory, calls, chains)
        finally:
            stop.set()
            await asyncio.gather(*tasks)
            await memory.aclose()
            await pool.close()


def _started(
    loop: ConsumerLoop[PlanningDeps], tasks: list[asyncio.Task[None]]
) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        for task in tasks:
            if task.done():
                task.result()
        return loop.started.is_set()

    return probe
