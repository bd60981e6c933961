"""World events reach a real webhook receiver, signed, retried after failures, logged and redeliverable."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest
from psycopg_pool import AsyncConnectionPool

from services.webhooks.consumer import serve
from services.webhooks.domain import verify
from services.webhooks.settings import Settings
from tests.e2e.dispatching import gateway_url, webhooks_api_port  # noqa: F401  (fixtures)
from tests.e2e.receiver import Receiver
from tests.infra import BrokerForTests
from tests.integration.world_state.support import running_pipeline
from tests.polling import eventually

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    server = Receiver(fail_first=2).start()
    yield server
    server.stop()


@pytest.fixture
async def dispatcher(
    database_url: str, broker: BrokerForTests, webhooks_api_port: int  # noqa: F811
) -> AsyncIterator[None]:
    settings = Settings(
        database_url=database_url,
        kafka_bootstrap_servers=broker.bootstrap,
        webhooks_api_port=webhooks_api_port,
        webhook_backoff_base_seconds=0.05,
        webhook_max_attempts=4,
        webhook_poll_seconds=0.05,
    )
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, stop))
    yield
    stop.set()
    await task


async def _world(client: httpx.AsyncClient) -> str:
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    r = await client.post(
        "/v1/worlds", json={"world_id": world_id, "name": "Brindle Hollow", "start_time": T0}
    )
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "marta", "name": "Marta"})
    assert r.status_code == 201, r.text
    return world_id


async def _perceive(client: httpx.AsyncClient, world_id: str, text: str) -> str:
    r = await client.post(
        f"/v1/worlds/{world_id}/npcs/marta/perceptions",
        json={"description": text, "world_time": "2023-02-13T08:00:00+00:00"},
    )
    assert r.status_code == 202, r.text
    return str(r.json()["event_id"])


async def test_events_reach_the_receiver_signed_after_it_fails_twice_and_the_log_shows_each_try(
    client_factory: MakeClient, receiver: Receiver, dispatcher: None
) -> None:
    client = await client_factory()
    world_id, other_world = await _world(client), await _world(client)
    r = await client.post(
        f"/v1/worlds/{world_id}/webhooks",
        json={"url": f"{receiver.url}/ok", "event_types": ["ObservationMade", "NpcCreated"]},
    )
    assert r.status_code == 201, r.text
    hook = r.json()
    sent = [await _perceive(client, world_id, f"heard bell {i}") for i in range(3)]
    await _perceive(client, other_world, "not subscribed")
    r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "tobias", "name": "Tobias"})
    assert r.status_code == 201

    acked = await eventually(lambda: _acked(receiver), lambda got: len(got) >= 4, timeout=30)
    by_event = {r.json["event_id"]: r for r in acked}
    assert set(sent) <= set(by_event) and len(by_event) == 4
    for got in acked:
        assert verify(hook["secret"], got.headers["Npcworld-Signature"], got.body, now=int(time.time()))
        assert got.headers["Npcworld-Event-Id"] == got.json["event_id"] == got.json["event"]["event_id"]
        assert got.json["world_id"] == world_id and got.json["type"] in ("ObservationMade", "NpcCreated")
    assert all(receiver.tries[e] == 3 for e in by_event)

    log = (await client.get(f"/v1/worlds/{world_id}/webhooks/{hook['webhook_id']}/deliveries")).json()
    assert {d["status"] for d in log["items"]} == {"delivered"} and len(log["items"]) == 4
    first = log["items"][0]
    assert first["attempts"] == 3 and first["last_status_code"] == 200
    detail = (
        await client.get(
            f"/v1/worlds/{world_id}/webhooks/{hook['webhook_id']}/deliveries/{first['delivery_id']}"
        )
    ).json()
    assert [a["status_code"] for a in detail["attempt_log"]] == [500, 500, 200]


async def _acked(receiver: Receiver) -> list:  # type: ignore[type-arg]
    return receiver.acked()


async def test_a_receiver_that_stays_down_gets_bounded_retries_then_a_manual_redelivery(
    client_factory: MakeClient, receiver: Receiver, dispatcher: None
) -> None:
    client = await client_factory()
    world_id = await _world(client)
    r = await client.post(f"/v1/worlds/{world_id}/webhooks", json={"url": f"{receiver.url}/down"})
    hook = r.json()["webhook_id"]
    event_id = await _perceive(client, world_id, "a crash in the bakery")
    path = f"/v1/worlds/{world_id}/webhooks/{hook}/deliveries"

    async def failed() -> list[dict[str, object]]:
        return list((await client.get(path, params={"status": "failed"})).json()["items"])

    [delivery] = await eventually(failed, lambda items: len(items) == 1, timeout=30)
    assert delivery["attempts"] == 4 and delivery["last_status_code"] == 503
    assert str(delivery["event_id"]) == event_id
    assert receiver.tries[event_id] == 4

    await client.patch(f"/v1/worlds/{world_id}/webhooks/{hook}", json={"url": f"{receiver.url}/ok"})
    receiver.tries[event_id] = receiver.fail_first  # the receiver is healthy again
    r = await client.post(f"{path}/{delivery['delivery_id']}/redeliver")
    assert r.status_code == 202 and r.json()["status"] == "pending"
    redelivered = await eventually(lambda: _acked(receiver), lambda got: len(got) == 1, timeout=30)
    assert redelivered[0].json["event_id"] == event_id
    detail = (await client.get(f"{path}/{delivery['delivery_id']}")).json()
    assert detail["status"] == "delivered"
    assert [a["status_code"] for a in detail["attempt_log"]] == [503, 503, 503, 503, 200]


async def test_webhooks_are_validated_and_listed_without_their_secret(client_factory: MakeClient) -> None:
    client = await client_factory()
    world_id = await _world(client)
    r = await client.post(f"/v1/worlds/{world_id}/webhooks", json={"url": "ftp://example.org/x"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "url"
    r = await client.post(
        f"/v1/worlds/{world_id}/webhooks",
        json={"url": "http://127.0.0.1:9/x", "event_types": ["NoSuchEvent"]},
    )
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "event_types"
    r = await client.post(f"/v1/worlds/{world_id}/webhooks", json={"url": "http://127.0.0.1:9/x"})
    assert "secret" in r.json()
    listed = (await client.get(f"/v1/worlds/{world_id}/webhooks")).json()["items"]
    assert [h["webhook_id"] for h in listed] == [r.json()["webhook_id"]]
    assert "secret" not in listed[0]
    assert (
        await client.delete(f"/v1/worlds/{world_id}/webhooks/{listed[0]['webhook_id']}")
    ).status_code == 204
    assert (await client.get(f"/v1/worlds/{world_id}/webhooks")).json()["items"] == []


async def test_a_world_created_from_the_template_ticks_and_its_events_reach_the_receiver(
    client_factory: MakeClient,
    pool: AsyncConnectionPool,
    broker: BrokerForTests,
    receiver: Receiver,
    dispatcher: None,
) -> None:
    client = await client_factory()
    world_id = f"tpl-{uuid.uuid4().hex[:8]}"
    r = await client.post(
        "/v1/worlds",
        json={"world_id": world_id, "name": "Brindle Hollow", "start_time": T0, "template": "brindle-hollow"},
    )
    assert r.status_code == 201, r.text
    hook = (
        await client.post(
            f"/v1/worlds/{world_id}/webhooks",
            json={"url": f"{receiver.url}/ok", "event_types": ["WorldTicked", "NpcCreated"]},
        )
    ).json()
    async with running_pipeline(pool, broker.bootstrap) as pipeline:
        await eventually(lambda: client.get(f"/v1/worlds/{world_id}/tree"), lambda r: r.status_code == 200)
        r = await client.post(f"/v1/worlds/{world_id}/clock", json={"paused": False, "mode": "stepped"})
        assert r.status_code == 202, r.text
        pipeline.world_id = world_id
        pipeline.tenant_id = (await client.get("/v1/tenant")).json()["tenant_id"]
        # The gateway shows the running clock at once (it folds its own event); the ticker steps once
        # world_state has it.
        await pipeline.digested(await pipeline.events("ClockChanged"))
        for _ in range(2):
            await pipeline.step()
        acked = await eventually(
            lambda: _acked(receiver),
            lambda got: sum(g.json["type"] == "WorldTicked" for g in got) >= 2,
            timeout=30,
        )
    types = [g.json["type"] for g in acked]
    assert "NpcCreated" in types  # the template's personas
    ticks = sorted(g.json["event"]["payload"]["step"] for g in acked if g.json["type"] == "WorldTicked")
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks)))  # consecutive steps, each once
    for got in acked:
        assert verify(hook["secret"], got.headers["Npcworld-Signature"], got.body, now=int(time.time()))
        assert receiver.tries[got.json["event_id"]] == 3 and got.json["world_id"] == world_id
