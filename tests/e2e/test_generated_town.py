"""A generated town's name (town-<npcs>-<seed>) creates a world through the API like a built-in template:
world-state loads its map and residents, who start in their homes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import httpx
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.outbox import OutboxRelay
from npcworld.service import serve
from npcworld.templates.generator import generate_town
from services.world_state import handlers as world_state
from services.world_state.settings import Settings as WorldStateSettings
from services.world_state.trees import TreeCache
from tests.infra import BrokerForTests
from tests.polling import eventually

pytestmark = pytest.mark.integration

Factory = Callable[..., Awaitable[httpx.AsyncClient]]


async def test_a_world_created_from_a_generated_town_has_its_residents_in_their_homes(
    client_factory: Factory, pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests
) -> None:
    client = await client_factory()
    world = f"gen-{uuid.uuid4().hex[:8]}"
    body = {"world_id": world, "name": "Generated", "start_time": "2023-02-13T07:00:00Z"}
    too_small = await client.post("/v1/worlds", json={**body, "template": "town-5-2"})
    assert too_small.status_code == 422, too_small.text
    created = await client.post("/v1/worlds", json={**body, "template": "town-40-2"})
    assert created.status_code == 201, created.text
    stop = asyncio.Event()
    ws = WorldStateSettings(database_url=database_url, kafka_bootstrap_servers=broker.bootstrap)
    tasks = [
        asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
        asyncio.create_task(serve(world_state.CONSUMER, ws, world_state.ROUTES,
                                  deps=world_state.WorldStateDeps(TreeCache()),
                                  projection=world_state.PROJECTION, stop=stop)),
    ]

    async def listed() -> list[dict[str, str]]:
        r = await client.get(f"/v1/worlds/{world}/npcs")
        return list(r.json()["items"]) if r.status_code == 200 else []

    try:
        npcs = await eventually(listed, lambda items: len(items) == 40, timeout=60)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    town = generate_town(40, 2)
    assert sorted(n["npc_id"] for n in npcs) == sorted(n["npc_id"] for n in town["npcs"])
    homes = {n["npc_id"]: n["location"] for n in town["npcs"]}
    state = await client.get(f"/v1/worlds/{world}/npcs/{town['npcs'][0]['npc_id']}/state")
    assert state.status_code == 200, state.text
    assert homes[town["npcs"][0]["npc_id"]] in str(state.json())
