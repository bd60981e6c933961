"""The validator API: a world's validator is registered with its secret shown once, read back without it,
removed; bad fields and non-public receivers are 422, a read-only key cannot set it and another tenant
cannot see or change it."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import httpx
import psycopg

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"


async def _reader(client: httpx.AsyncClient, gateway_url: str) -> httpx.AsyncClient:
    secret = (await client.post("/v1/keys", json={"name": "viewer", "scopes": ["read"]})).json()["secret"]
    return httpx.AsyncClient(base_url=gateway_url, timeout=10, headers={"Authorization": f"Bearer {secret}"})


async def test_a_validator_is_registered_read_back_without_its_secret_and_removed(
    client_factory: MakeClient, gateway_url: str, database_url: str
) -> None:
    client = await client_factory()
    reader = await _reader(client, gateway_url)
    w = f"val-{uuid.uuid4().hex[:8]}"
    assert (await client.post("/v1/worlds", json={"world_id": w, "name": "Mine", "start_time": T0})
            ).status_code == 201
    path = f"/v1/worlds/{w}/validator"
    assert (await client.get(path)).status_code == 404

    body = {"url": "http://127.0.0.1:9/check", "deadline_ms": 250, "on_failure": "veto",
            "npc_ids": ["ada"], "places": [f"{w}:Mine"]}
    put = await client.put(path, json=body)
    assert put.status_code == 201, put.text
    created = put.json()
    assert created["secret"].startswith("vsec_") and created["event_id"]
    assert created["validator_id"].startswith("val_")
    got = (await reader.get(path)).json()
    assert "secret" not in got
    assert got == {k: v for k, v in created.items() if k not in ("secret", "event_id")}
    assert (got["deadline_ms"], got["on_failure"], got["npc_ids"]) == (250, "veto", ["ada"])
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        cur = await conn.execute("SELECT payload::text FROM events WHERE world_id = %s"
                                 " AND type = 'ActionValidatorSet'", (w,))
        stored = [row[0] for row in await cur.fetchall()]
    assert len(stored) == 1 and created["validator_id"] in stored[0]
    assert created["secret"] not in stored[0]  # the secret never enters the event log

    again = (await client.put(path, json={"url": "http://127.0.0.1:9/other"})).json()
    assert again["validator_id"] != created["validator_id"] and again["secret"] != created["secret"]
    assert (await client.get(path)).json()["on_failure"] == "accept"  # the default

    assert (await client.delete(path)).status_code == 204
    assert (await client.get(path)).status_code == 404
    assert (await client.delete(path)).status_code == 404
    await reader.aclose()


async def test_bad_fields_and_non_public_receivers_are_refused_naming_the_field(
    client_factory: MakeClient,
) -> None:
    client = await client_factory()
    w = f"val-{uuid.uuid4().hex[:8]}"
    await client.post("/v1/worlds", json={"world_id": w, "name": "Mine", "start_time": T0})
    path = f"/v1/worlds/{w}/validator"
    for body, field in [
        ({"url": "http://127.0.0.1:9/v", "deadline_ms": 5}, "deadline_ms"),
        ({"url": "http://127.0.0.1:9/v", "deadline_ms": 60000}, "deadline_ms"),
        ({"url": "http://127.0.0.1:9/v", "on_failure": "maybe"}, "on_failure"),
        ({"url": "ftp://127.0.0.1/v"}, "url"),
        ({"url": "http://10.0.0.8/v"}, "url"),
        ({"url": "http://169.254.169.254/latest/meta-data/"}, "url"),
        ({"url": "http://127.0.0.1:9/v", "secret": "mine"}, "secret"),
    ]:
        r = await client.put(path, json=body)
        assert r.status_code == 422, (body, r.text)
        assert field in r.text, (body, r.text)
    assert (await client.get(path)).status_code == 404


async def test_a_read_key_cannot_set_a_validator_and_another_tenant_neither_sees_nor_changes_it(
    client_factory: MakeClient, gateway_url: str
) -> None:
    client, stranger = await client_factory(), await client_factory()
    reader = await _reader(client, gateway_url)
    w = f"val-{uuid.uuid4().hex[:8]}"
    await client.post("/v1/worlds", json={"world_id": w, "name": "Mine", "start_time": T0})
    path = f"/v1/worlds/{w}/validator"
    body = {"url": "http://127.0.0.1:9/v"}
    assert (await reader.put(path, json=body)).status_code == 403
    assert (await reader.delete(path)).status_code == 403
    assert (await client.put(path, json=body)).status_code == 201
    assert (await stranger.get(path)).status_code == 404
    assert (await stranger.put(path, json=body)).status_code == 404
    assert (await stranger.delete(path)).status_code == 404
    assert (await client.get(path)).status_code == 200  # untouched by the stranger
    await reader.aclose()
