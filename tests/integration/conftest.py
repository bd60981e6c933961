"""Session fixtures: the real embedded Postgres + pgvector and Tansu broker (never mocked, never skipped)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.db import open_pool
from tests.infra import BrokerForTests, PostgresForTests


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresForTests]:
    server = PostgresForTests(tmp_path_factory.mktemp("pg"))
    yield server
    server.close()


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerForTests]:
    instance = BrokerForTests(tmp_path_factory.mktemp("kafka"))
    yield instance
    instance.stop()


@pytest.fixture(scope="module")
def database_url(postgres: PostgresForTests) -> str:
    """A freshly migrated database for this test module."""
    return postgres.fresh_database()


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[AsyncConnectionPool]:
    db_pool = await open_pool(database_url, min_size=1, max_size=8)
    yield db_pool
    await db_pool.close()


@pytest.fixture
def private_broker(tmp_path: Path) -> Iterator[BrokerForTests]:
    """A broker of this test's own, for tests that restart it."""
    instance = BrokerForTests(tmp_path)
    yield instance
    instance.stop()
