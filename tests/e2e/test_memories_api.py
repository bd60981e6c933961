"""Memory streams over the public REST API: gateway → memory service's internal API → Postgres + pgvector."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from npcworld.db import open_pool
from npcworld.embeddings import LocalMiniLMEmbedder
from npcworld.outbox import OutboxRelay
from tests.e2e.conftest import wait_ready
from tests.infra import BrokerForTests, free_port
from tests.integration.memory.support import running_memory_service
from tests.polling import eventually

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"
SEED = "Isabella runs Hobbs Cafe; she is planning a Valentine's Day party at Hobbs Cafe; she likes Klaus"
SEEN = [
    ("the stove is idle", "08:00"),
    ("Klaus is reading a book", "09:00"),
    ("the cafe is crowded", "10:00"),
]


@contextmanager
def _gateway(database_url: str, bootstrap: str, memory_api_url: str) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "MEMORY_API_URL": memory_api_url,
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "services.gateway.api:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, url, "the gateway", 30)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
async def memory_url(database_url: str, broker: BrokerForTests) -> AsyncIterator[str]:
    pool = await open_pool(database_url, max_size=4)  # the relay holds three connections
    stop = asyncio.Event()
    relay = asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop))
    try:
        async with running_memory_service(
            database_url, broker.bootstrap, embedder=LocalMiniLMEmbedder()
        ) as url:
            yield url
    finally:
        stop.set()
        await relay
        await pool.close()


@pytest.fixture(scope="module")
def gateway_url(database_url: str, broker: BrokerForTests, memory_url: str) -> Iterator[str]:
    with _gateway(database_url, broker.bootstrap, memory_url) as url:
        yield url


async def _npc_with_memories(client: httpx.AsyncClient) -> str:
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    r = await client.post("/v1/worlds", json={"world_id": world_id, "name": "Smallville", "start_time": T0})
    assert r.status_code == 201, r.text
    r = await client.post(
        f"/v1/worlds/{world_id}/npcs", json={"npc_id": "isabella", "name": "Isabella", "seed": SEED}
    )
    assert r.status_code == 201, r.text
    for text, at in SEEN:
        r = await client.post(
            f"/v1/worlds/{world_id}/npcs/isabella/perceptions",
            json={"description": text, "world_time": f"2023-02-13T{at}:00+00:00"},
        )
        assert r.status_code == 202, r.text

    async def count() -> int:
        r = await client.get(f"/v1/worlds/{world_id}/npcs/isabella/memories")
        assert r.status_code == 200, r.text
        return len(r.json()["items"])

    await eventually(count, lambda n: n == 6, timeout=60)
    return world_id


async def test_memories_list_with_filters_and_retrieve_with_score_breakdown(
    client_factory: MakeClient,
) -> None:
    client = await client_factory()
    world_id = await _npc_with_memories(client)
    base = f"/v1/worlds/{world_id}/npcs/isabella/memories"
    first = (await client.get(base, params={"kind": "observation", "limit": 2})).json()
    rest = (
        await client.get(base, params={"kind": "observation", "limit": 2, "cursor": first["next_cursor"]})
    ).json()
    assert [m["description"] for m in first["items"] + rest["items"]] == [t for t, _ in SEEN][::-1]
    window = (
        await client.get(
            base, params={"since": "2023-02-13T08:30:00+00:00", "until": "2023-02-13T09:30:00+00:00"}
        )
    ).json()
    assert [m["description"] for m in window["items"]] == ["Klaus is reading a book"]
    r = await client.post(
        f"{base}/retrieve",
        json={"query": "Valentine's Day party", "k": 3, "now": "2023-02-13T12:00:00+00:00"},
    )
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert (
        items[0]["description"] == "she is planning a Valentine's Day party at Hobbs Cafe" and len(items) == 3
    )
    scores = items[0]["scores"]
    assert scores["total"] == pytest.approx(scores["recency"] + scores["importance"] + scores["relevance"])
    weighted = await client.post(
        f"{base}/retrieve",
        json={
            "query": "Valentine's Day party",
            "k": 1,
            "weights": {"recency": 1, "importance": 0, "relevance": 0},
        },
    )
    assert weighted.status_code == 200 and weighted.json()["items"][0]["scores"]["relevance"] >= 0


async def test_bad_queries_and_other_tenants_get_problem_json_naming_the_field(
    client_factory: MakeClient,
) -> None:
    client, other = await client_factory(), await client_factory()
    world_id = await _npc_with_memories(client)
    base = f"/v1/worlds/{world_id}/npcs/isabella/memories"
    for body, field in [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": 101}, "k"),
        ({"query": "x", "weights": {"recency": -1}}, "weights.recency"),
    ]:
        r = await client.post(f"{base}/retrieve", json=body)
        assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json", r.text
        assert r.json()["errors"][0]["field"] == field
    r = await client.post(f"/v1/worlds/{world_id}/npcs/nobody/memories/retrieve", json={"query": "party"})
    assert r.status_code == 404 and r.headers["content-type"] == "application/problem+json"
    assert (await client.get(f"{base}", params={"cursor": "garbage"})).status_code == 422
    for r in (await other.get(base), await other.post(f"{base}/retrieve", json={"query": "party"})):
        assert r.status_code == 404, r.text


async def test_an_unreachable_memory_service_is_a_503_problem(
    client_factory: MakeClient, database_url: str, broker: BrokerForTests
) -> None:
    client = await client_factory()
    r = await client.post("/v1/worlds", json={"name": "Smallville", "start_time": T0})
    world_id = r.json()["world_id"]
    await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "isabella", "name": "Isabella"})
    with _gateway(database_url, broker.bootstrap, f"http://127.0.0.1:{free_port()}") as url:
        async with httpx.AsyncClient(base_url=url, headers=dict(client.headers)) as down:
            r = await down.post(
                f"/v1/worlds/{world_id}/npcs/isabella/memories/retrieve", json={"query": "party"}
            )
    assert r.status_code == 503 and r.headers["content-type"] == "application/problem+json", r.text
