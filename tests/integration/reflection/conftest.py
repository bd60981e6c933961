"""Reflection fixtures: the real memory service (consumer + internal API) on the module's database, its
HTTP reader, and deps for recording memories and running the reflection consumer's handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from npcworld.embeddings import LocalMiniLMEmbedder
from npcworld.memory_client.http import HttpMemoryReader
from services.memory.deps import MemoryDeps
from services.memory.settings import MemorySettings
from tests.infra import BrokerForTests
from tests.integration.memory.support import running_memory_service
from tests.integration.reflection.support import ListQueue
from tests.unit.memory.fakes import FakeImportanceRater


@pytest.fixture(scope="session")
def local_embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


@pytest.fixture(scope="module")
async def memory_url(
    database_url: str, broker: BrokerForTests, local_embedder: LocalMiniLMEmbedder
) -> AsyncIterator[str]:
    async with running_memory_service(database_url, broker.bootstrap, embedder=local_embedder) as url:
        yield url


@pytest.fixture
async def reader(memory_url: str) -> AsyncIterator[HttpMemoryReader]:
    client = HttpMemoryReader(memory_url)
    yield client
    await client.aclose()


@pytest.fixture
def memory_deps(local_embedder: LocalMiniLMEmbedder) -> MemoryDeps:
    """The memory service's handlers with a keyword importance rater: a party 9, anything else 2."""
    return MemoryDeps(embedder=local_embedder, rater=FakeImportanceRater(), settings=MemorySettings())


@pytest.fixture
def queue() -> ListQueue:
    return ListQueue()
