"""The memory service's internal API with a service credential: nothing without it, everything with it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.errors import NotFoundError, PermanentError
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.service_auth import TOKEN_ENV, client_headers
from services.memory.api import create_app
from services.memory.deps import MemoryDeps
from tests.unit.memory.fakes import FakeImportanceRater, HashingEmbedder

pytestmark = pytest.mark.integration

TOKEN = "a-shared-secret-for-tests"
IDS = {"tenant_id": "t-a", "world_id": "w-a", "npc_id": "marta"}


@pytest.fixture
async def transport(pool: AsyncConnectionPool) -> AsyncIterator[httpx.ASGITransport]:
    app = create_app(MemoryDeps(embedder=HashingEmbedder(16), rater=FakeImportanceRater()), pool=pool,
                     token=TOKEN)
    app.state.pool = pool  # the lifespan is not run by the in-process transport
    yield httpx.ASGITransport(app=app)


async def test_every_internal_route_refuses_a_request_without_the_credential(
    transport: httpx.ASGITransport,
) -> None:
    async with httpx.AsyncClient(transport=transport, base_url="http://memory") as client:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
            for method, path in (("GET", "/internal/v1/recent"), ("GET", "/internal/v1/memories"),
                                 ("POST", "/internal/v1/retrieve")):
                answer = await client.request(method, path, params=IDS, headers=headers,
                                              json={**IDS, "query": "x", "now": "2023-02-13T07:00:00Z"})
                assert answer.status_code == 401, (method, path, headers, answer.text)
                assert answer.headers["www-authenticate"] == "Bearer"
                assert "marta" not in answer.text
        assert (await client.get("/healthz")).status_code == 200  # liveness needs no secret


async def test_a_client_with_the_credential_is_served_and_one_without_is_told_why(
    transport: httpx.ASGITransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    async with httpx.AsyncClient(transport=transport, base_url="http://memory",
                                 headers=client_headers()) as client:
        with pytest.raises(NotFoundError):  # reached the handler: this NPC has no memories
            await HttpMemoryReader("http://memory", client=client).recent(**IDS)
    async with httpx.AsyncClient(transport=transport, base_url="http://memory") as client:
        with pytest.raises(PermanentError, match="401"):
            await HttpMemoryReader("http://memory", client=client).recent(**IDS)
