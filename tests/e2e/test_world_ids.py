"""World ids are each tenant's own: another tenant's id is free to take, and it is a different world."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import httpx
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.outbox import OutboxRelay
from npcworld.service import serve
from services.perception import handlers as perception
from services.perception.layouts import LayoutCache
from services.perception.settings import Settings as PerceptionSettings
from services.world_state import handlers as world_state
from services.world_state.settings import Settings as WorldStateSettings
from services.world_state.trees import TreeCache
from tests.infra import BrokerForTests
from tests.polling import eventually

pytestmark = pytest.mark.integration

START = "2023-02-13T07:00:00Z"
Factory = Callable[..., Awaitable[httpx.AsyncClient]]


async def _world(client: httpx.AsyncClient, world_id: str, **extra: str) -> httpx.Response:
    return await client.post(
        "/v1/worlds", json={"name": "Town", "start_time": START, "world_id": world_id, **extra}
    )


async def _npcs(client: httpx.AsyncClient, world_id: str) -> list[str]:
    r = await client.get(f"/v1/worlds/{world_id}/npcs")
    assert r.status_code == 200, r.text
    return [n["npc_id"] for n in r.json()["items"]]


async def test_two_tenants_each_have_their_own_world_of_the_same_id(client_factory: Factory) -> None:
    a, b = await client_factory(), await client_factory()
    town = f"town-{uuid.uuid4().hex[:8]}"
    assert (await _world(a, town)).status_code == 201
    for npc in ("ada", "bo", "cy"):
        assert (await a.post(f"/v1/worlds/{town}/npcs", json={"npc_id": npc, "name": npc})).status_code == 201

    assert (await _world(b, town)).status_code == 201, "another tenant's world id is not taken"
    added = await b.post(f"/v1/worlds/{town}/npcs", json={"npc_id": "ada", "name": "B's Ada"})
    assert added.status_code == 201, added.text
    assert await _npcs(a, town) == ["ada", "bo", "cy"]
    assert await _npcs(b, town) == ["ada"]
    b_events = (await b.get(f"/v1/worlds/{town}/events")).json()["items"]
    assert [e["event"]["type"] for e in b_events] == ["WorldCreated", "NpcCreated"]
    assert {e["event"]["tenant_id"] for e in b_events} == {(await b.get("/v1/tenant")).json()["tenant_id"]}

    # Forking into an id another tenant holds is as free as creating it; deleting one world leaves the other.
    source = f"src-{uuid.uuid4().hex[:8]}"
    taken_by_a = f"fork-{uuid.uuid4().hex[:8]}"
    assert (await _world(a, taken_by_a)).status_code == 201
    assert (await _world(b, source)).status_code == 201
    fork = await b.post(f"/v1/worlds/{source}/fork", json={"at": START, "new_world_id": taken_by_a})
    assert fork.status_code == 201, fork.text
    assert fork.json()["forked_from"] == source
    assert (await b.delete(f"/v1/worlds/{town}")).status_code == 204
    assert (await a.get(f"/v1/worlds/{town}")).status_code == 200
    assert (await b.get(f"/v1/worlds/{town}")).status_code == 404


async def test_an_id_the_tenant_already_used_is_refused_with_nothing_internal_shown(
    client_factory: Factory,
) -> None:
    client = await client_factory()
    own, gone = f"mine-{uuid.uuid4().hex[:8]}", f"gone-{uuid.uuid4().hex[:8]}"
    assert (await _world(client, own)).status_code == 201
    assert (await _world(client, gone)).status_code == 201
    assert (await client.delete(f"/v1/worlds/{gone}")).status_code == 204
    answers = {
        "create, live id": await _world(client, own),
        "create, deleted id": await _world(client, gone),
        "fork into live id": await client.post(
            f"/v1/worlds/{own}/fork", json={"at": START, "new_world_id": own}),
    }
    for case, answer in answers.items():
        assert answer.status_code == 409, (case, answer.text)
        assert answer.headers["content-type"].startswith("application/problem+json")
        assert answer.json()["errors"][0]["field"] in ("world_id", "new_world_id")
        text = answer.text.lower()
        for leak in ("stream", "version", "world-", "expected", "tenant", "/"):
            assert leak not in text, (case, answer.text)


async def test_template_worlds_of_the_same_id_run_side_by_side_in_world_state_and_perception(
    client_factory: Factory, pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests
) -> None:
    a, b = await client_factory(), await client_factory()
    town = f"hollow-{uuid.uuid4().hex[:8]}"
    for client in (a, b):
        assert (await _world(client, town, template="brindle-hollow")).status_code == 201
    tenants = [(await c.get("/v1/tenant")).json()["tenant_id"] for c in (a, b)]
    stop = asyncio.Event()
    ws = WorldStateSettings(database_url=database_url, kafka_bootstrap_servers=broker.bootstrap)
    pc = PerceptionSettings(database_url=database_url, kafka_bootstrap_servers=broker.bootstrap)
    tasks = [
        asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
        asyncio.create_task(serve(world_state.CONSUMER, ws, world_state.ROUTES,
                                  deps=world_state.WorldStateDeps(TreeCache()),
                                  projection=world_state.PROJECTION, stop=stop)),
        asyncio.create_task(serve(perception.CONSUMER, pc, perception.ROUTES,
                                  deps=perception.PerceptionDeps(LayoutCache()),
                                  projection=perception.PROJECTION, stop=stop)),
    ]

    async def counts() -> list[tuple[str, int, int, int, int]]:
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT t, (SELECT count(*) FROM ws_npcs WHERE tenant_id = t AND world_id = %(w)s),"
                " (SELECT count(*) FROM ws_clocks WHERE tenant_id = t AND world_id = %(w)s),"
                " (SELECT count(*) FROM pc_npcs WHERE tenant_id = t AND world_id = %(w)s),"
                " (SELECT count(DISTINCT npc_id) FROM pc_known_places"
                "   WHERE tenant_id = t AND world_id = %(w)s)"
                " FROM unnest(%(t)s::text[]) AS t ORDER BY t",
                {"w": town, "t": tenants},
            )
            return [tuple(r) for r in await cur.fetchall()]  # type: ignore[misc]

    try:
        done = await eventually(counts, lambda rows: all(r[1:] == (25, 1, 25, 25) for r in rows), timeout=60)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    assert [r[0] for r in done] == sorted(tenants)
    for client in (a, b):
        assert len(await _npcs(client, town)) == 25
        clock = await client.get(f"/v1/worlds/{town}/clock")
        assert clock.status_code == 200 and clock.json()["step"] == 0
