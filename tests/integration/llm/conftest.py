"""LLM-layer fixtures: the fake OpenAI server, an LLMClient built on it, and query helpers."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypedDict

import pytest
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from npcworld.llm import LLMClient, LLMSettings, build_llm
from npcworld.llm.testing import FakeOpenAIServer


class RecordedSleeps(list[float]):
    """Stands in for asyncio.sleep in backoff: records each delay, waits for nothing."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


class FakeClock:
    """The breaker's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def sleeps() -> RecordedSleeps:
    return RecordedSleeps()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


class Scope(TypedDict):
    """Whose call it is: the keyword arguments of ``complete``."""

    tenant_id: str
    world_id: str
    npc_id: str


@pytest.fixture
def scope() -> Scope:
    """Fresh tenant, world and NPC ids for each test."""
    suffix = uuid.uuid4().hex[:10]
    return Scope(tenant_id=f"tenant-{suffix}", world_id=f"world-{suffix}", npc_id=f"npc-{suffix}")


@pytest.fixture
async def make_llm(
    pool: AsyncConnectionPool, server: FakeOpenAIServer, sleeps: RecordedSleeps, clock: FakeClock
) -> AsyncIterator[Callable[..., LLMClient]]:
    """Build LLMClients on the fake server (keyword arguments override settings); closed afterwards."""
    built: list[LLMClient] = []

    def build(**overrides: Any) -> LLMClient:
        values: dict[str, Any] = {
            "openai_base_url": server.base_url,
            "openai_api_key": "test-key",
            "llm_model": "fake-model",
            "llm_max_retries": 2,
            "llm_backoff_base_s": 0.01,
            "llm_timeout_s": 5.0,
            "llm_breaker_failures": 5,
        }
        values.update(overrides)
        built.append(build_llm(LLMSettings(**values), pool, sleep=sleeps, clock=clock))
        return built[-1]

    yield build
    for client in built:
        await client.close()


async def call_rows(pool: AsyncConnectionPool, tenant_id: str) -> list[dict[str, Any]]:
    """The tenant's llm_calls rows in order."""
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute("SELECT * FROM llm_calls WHERE tenant_id = %s ORDER BY id", (tenant_id,))
        return list(await cur.fetchall())
