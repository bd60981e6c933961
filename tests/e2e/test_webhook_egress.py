"""Webhooks cannot reach inside the network: non-public receivers are refused at registration with a 422
naming `url`, and a delivery whose name resolves to a refused address fails at once without being sent."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from services.webhooks.consumer import serve
from services.webhooks.settings import Settings
from tests.e2e.dispatching import gateway_url, webhooks_api_port  # noqa: F401  (fixtures)
from tests.e2e.receiver import Receiver
from tests.infra import BrokerForTests
from tests.polling import eventually

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
REFUSED = {
    "http://10.0.0.8/hook": "private",
    "http://172.20.1.1/hook": "private",
    "http://192.168.0.10:8080/hook": "private",
    "http://100.64.12.1/hook": "CGNAT",
    "http://127.0.0.2:9/hook": "loopback",  # the suite allows 127.0.0.1 only
    "http://[::1]:9/hook": "loopback",
    "http://169.254.169.254/latest/meta-data/": "cloud metadata",
    "http://[fd00:ec2::254]/latest/meta-data/": "cloud metadata",
    "http://metadata.google.internal/computeMetadata/v1/": "cloud metadata",
    "http://[fe80::1]/hook": "link-local",
    "http://[fd12::1]/hook": "unique-local",
    "http://[::ffff:10.0.0.1]/hook": "private",
    "http://224.0.0.1/hook": "multicast",
    "http://0.0.0.0:9/hook": "unspecified",
    "http://255.255.255.255/hook": "broadcast",
    "https://user:secret@hooks.example.org/in": "credentials",
}


async def _world(client: httpx.AsyncClient) -> str:
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    r = await client.post(
        "/v1/worlds", json={"world_id": world_id, "name": "Brindle", "start_time": "2023-02-13T07:00:00Z"}
    )
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "marta", "name": "Marta"})
    assert r.status_code == 201, r.text
    return world_id


async def test_non_public_receivers_are_refused_naming_url_and_the_secret_is_shown_only_once(
    client_factory: MakeClient,
) -> None:
    client = await client_factory()
    world_id = await _world(client)
    path = f"/v1/worlds/{world_id}/webhooks"
    for url, why in REFUSED.items():
        r = await client.post(path, json={"url": url})
        assert r.status_code == 422, (url, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
        [error] = r.json()["errors"]
        assert error["field"] == "url" and why in error["message"], (url, error)

    r = await client.post(path, json={"url": "http://127.0.0.1:9/hook"})  # allowed by WEBHOOK_ALLOW_HOSTS
    assert r.status_code == 201 and r.json()["secret"]
    hook = r.json()["webhook_id"]
    r = await client.patch(f"{path}/{hook}", json={"url": "http://169.254.169.254/latest/"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "url"
    r = await client.patch(f"{path}/{hook}", json={"description": "renamed"})
    assert r.status_code == 200 and "secret" not in r.json()
    assert "secret" not in (await client.get(f"{path}/{hook}")).json()
    assert all("secret" not in h for h in (await client.get(path)).json()["items"])
    assert (await client.get(f"{path}/{hook}")).json()["url"] == "http://127.0.0.1:9/hook"


@pytest.fixture
async def strict_dispatcher(
    database_url: str, broker: BrokerForTests, webhooks_api_port: int  # noqa: F811
) -> AsyncIterator[None]:
    """A dispatcher with the default (empty) allow-list, while the suite's gateway allows ``localhost``."""
    settings = Settings(
        database_url=database_url,
        kafka_bootstrap_servers=broker.bootstrap,
        webhook_allow_hosts="",
        webhooks_api_port=webhooks_api_port,
        webhook_backoff_base_seconds=0.05,
        webhook_poll_seconds=0.05,
    )
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, stop))
    yield
    stop.set()
    await task


async def test_a_delivery_to_a_refused_loopback_name_fails_at_once_and_is_never_sent(
    client_factory: MakeClient, strict_dispatcher: None
) -> None:
    # The name passed registration (the suite's gateway allows it); this dispatcher allows nothing, so at
    # delivery the loopback name is refused: one attempt, failed, nothing sent. (Names that resolve to a
    # refused address are covered with a resolver of the tests' own in tests/unit/egress.)
    receiver = Receiver(fail_first=0).start()
    try:
        client = await client_factory()
        world_id = await _world(client)
        port = receiver.url.rsplit(":", 1)[1]
        r = await client.post(f"/v1/worlds/{world_id}/webhooks", json={"url": f"http://localhost:{port}/ok"})
        assert r.status_code == 201, r.text
        path = f"/v1/worlds/{world_id}/webhooks/{r.json()['webhook_id']}/deliveries"
        r = await client.post(
            f"/v1/worlds/{world_id}/npcs/marta/perceptions",
            json={"description": "a knock at the door", "world_time": "2023-02-13T08:00:00Z"},
        )
        assert r.status_code == 202, r.text

        async def failed() -> list[dict[str, object]]:
            return list((await client.get(path, params={"status": "failed"})).json()["items"])

        deliveries = await eventually(failed, lambda items: len(items) >= 1, timeout=30)
        assert all(d["attempts"] == 1 and d["last_status_code"] is None for d in deliveries)
        errors = [str(d["last_error"]) for d in deliveries]
        assert all("refused" in e and "loopback" in e for e in errors)
        assert (await client.get(path, params={"status": "pending"})).json()["items"] == []
        assert receiver.received == []
    finally:
        receiver.stop()
