"""REST in → events → projection, replay and fork, through the real gateway, broker and database."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import httpx
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.projection import differences, rebuild
from npcworld.service import serve
from services.world_state.handlers import CONSUMER, PROJECTION, ROUTES, WorldStateDeps
from services.world_state.settings import Settings
from services.world_state.trees import TreeCache
from tests.infra import BrokerForTests
from tests.polling import eventually

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"


async def _world(client: httpx.AsyncClient, npcs: tuple[str, ...] = ("marta", "tobias")) -> str:
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    r = await client.post(
        "/v1/worlds", json={"world_id": world_id, "name": "Brindle Hollow", "start_time": T0}
    )
    assert r.status_code == 201, r.text
    for npc in npcs:
        r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": npc, "name": npc.title()})
        assert r.status_code == 201, r.text
    return world_id


async def _projected(pool: AsyncConnectionPool, world_id: str) -> list[tuple[str, str]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT world_id, npc_id FROM ws_npcs WHERE world_id = %s ORDER BY npc_id", (world_id,)
        )
        return [(r[0], r[1]) for r in await cur.fetchall()]


async def test_a_world_created_over_rest_reaches_the_world_state_projection_and_replays_identically(
    client_factory: MakeClient, pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests
) -> None:
    client = await client_factory()
    world_id = await _world(client)
    settings = Settings(database_url=database_url, kafka_bootstrap_servers=broker.bootstrap)
    stop = asyncio.Event()
    from npcworld.outbox import OutboxRelay

    tasks = [
        asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
        asyncio.create_task(
            serve(
                CONSUMER,
                settings,
                ROUTES,
                deps=WorldStateDeps(TreeCache()),
                projection=PROJECTION,
                stop=stop,
            )
        ),
    ]
    try:
        live = await eventually(lambda: _projected(pool, world_id), lambda rows: len(rows) == 2)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    assert live == [(world_id, "marta"), (world_id, "tobias")]
    applied = await rebuild(pool, PROJECTION)
    assert applied >= 3
    assert await _projected(pool, world_id) == live


async def test_a_forks_inherited_history_reaches_the_live_world_state_a_chunk_at_a_time(
    client_factory: MakeClient, pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from npcworld.messaging import loop
    from npcworld.outbox import OutboxRelay

    monkeypatch.setattr(loop, "_FORK_CHUNK", 1)  # one inherited event a transaction
    client = await client_factory()
    world_id = await _world(client, npcs=("marta", "tobias", "sam"))
    r = await client.post(f"/v1/worlds/{world_id}/fork", json={"at": T0, "new_world_id": f"{world_id}-save"})
    assert r.status_code == 201, r.text
    assert r.json()["npc_count"] == 3 and r.json()["forked_from"] == world_id
    settings = Settings(database_url=database_url, kafka_bootstrap_servers=broker.bootstrap)
    stop = asyncio.Event()
    tasks = [
        asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
        asyncio.create_task(serve(CONSUMER, settings, ROUTES, deps=WorldStateDeps(TreeCache()),
                                  projection=PROJECTION, stop=stop)),
    ]
    try:
        live = await eventually(lambda: _projected(pool, f"{world_id}-save"), lambda rows: len(rows) == 3)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    assert [npc for _, npc in live] == ["marta", "sam", "tobias"]
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM events WHERE world_id = %s", (f"{world_id}-save",))
        assert await cur.fetchone() == (1,)  # the WorldForked: nothing copied
        cur = await conn.execute("SELECT after_seq > 0 FROM fork_folds WHERE consumer = %s", (CONSUMER,))
        assert await cur.fetchall() == [(True,)]
    assert await differences(pool, PROJECTION) == []


async def test_the_event_log_pages_without_gaps_or_duplicates(client_factory: MakeClient) -> None:
    client = await client_factory()
    world_id = await _world(client, npcs=tuple(f"npc{i}" for i in range(7)))
    seen: list[str] = []
    params: dict[str, str | int] = {"limit": 3}
    while True:
        page = (await client.get(f"/v1/worlds/{world_id}/events", params=params)).json()
        seen += [item["event"]["type"] for item in page["items"]]
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert seen == ["WorldCreated"] + ["NpcCreated"] * 7


async def test_a_fork_at_world_time_t_inherits_history_up_to_t_only(client_factory: MakeClient) -> None:
    client = await client_factory()
    world_id = await _world(client, npcs=("marta",))
    for hour, text in ((8, "smelled coffee"), (15, "heard about the party")):
        r = await client.post(
            f"/v1/worlds/{world_id}/npcs/marta/perceptions",
            json={"description": text, "world_time": f"2023-02-13T{hour:02d}:00:00+00:00"},
        )
        assert r.status_code == 202, r.text
    r = await client.post(f"/v1/worlds/{world_id}/fork", json={"at": "2023-02-13T12:00:00+00:00"})
    assert r.status_code == 201, r.text
    fork = r.json()
    assert fork["forked_from"] == world_id and fork["npc_count"] == 1
    events = (await client.get(f"/v1/worlds/{fork['world_id']}/events")).json()["items"]
    observed = [
        e["event"]["payload"]["description"] for e in events if e["event"]["type"] == "ObservationMade"
    ]
    assert observed == ["smelled coffee"]
    assert all(e["event"]["forked_from"] for e in events if e["event"]["type"] != "WorldForked")


async def test_another_tenant_sees_404_and_no_data(client_factory: MakeClient) -> None:
    owner, other = await client_factory(), await client_factory()
    world_id = await _world(owner)
    for method, path in (("GET", ""), ("GET", "/npcs"), ("GET", "/events"), ("DELETE", "")):
        r = await other.request(method, f"/v1/worlds/{world_id}{path}")
        assert r.status_code == 404, (method, path, r.text)
        assert "marta" not in r.text
    r = await other.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "x", "name": "X"})
    assert r.status_code == 404
    assert world_id not in (await other.get("/v1/worlds")).text


async def test_bad_input_gets_a_problem_document_naming_the_field(client_factory: MakeClient) -> None:
    client = await client_factory()
    r = await client.post("/v1/worlds", json={"name": "", "start_time": T0})
    assert r.status_code == 422
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["errors"][0]["field"] == "name"
    r = await client.post("/v1/worlds", json={"name": "x", "start_time": "yesterday-ish"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "start_time"


async def test_keys_are_required_and_scopes_enforced(client_factory: MakeClient, gateway_url: str) -> None:
    async with httpx.AsyncClient(base_url=gateway_url) as anonymous:
        assert (await anonymous.get("/v1/worlds")).status_code == 401
    reader = await client_factory(("read",))
    r = await reader.post("/v1/worlds", json={"name": "x", "start_time": T0})
    assert r.status_code == 403 and "write" in r.json()["detail"]
