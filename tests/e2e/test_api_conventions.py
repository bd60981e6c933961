"""Conventions every studio integration relies on: idempotent POSTs, rate limits, keys shown once, cursors."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import httpx
import psycopg
import pytest

from services.gateway.holder import HOLDER_LOCK_CLASS

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"


async def _world(client: httpx.AsyncClient) -> str:
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    r = await client.post(
        "/v1/worlds", json={"world_id": world_id, "name": "Brindle Hollow", "start_time": T0}
    )
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "marta", "name": "Marta"})
    assert r.status_code == 201, r.text
    return world_id


async def _event_ids(client: httpx.AsyncClient, world_id: str) -> list[str]:
    items = (await client.get(f"/v1/worlds/{world_id}/events", params={"type": "ObservationMade"})).json()[
        "items"
    ]
    return [i["event"]["event_id"] for i in items]


async def test_the_same_idempotency_key_and_body_replays_the_first_response_and_writes_once(
    client_factory: MakeClient,
) -> None:
    client = await client_factory()
    world_id = await _world(client)
    body = {"description": "the bell rang", "world_time": "2023-02-13T08:00:00+00:00"}
    path = f"/v1/worlds/{world_id}/npcs/marta/perceptions"
    headers = {"Idempotency-Key": f"perceive-{uuid.uuid4()}"}
    first = await client.post(path, json=body, headers=headers)
    again = await client.post(path, json=body, headers=headers)
    assert first.status_code == again.status_code == 202
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert await _event_ids(client, world_id) == [first.json()["event_id"]]

    changed = await client.post(path, json=body | {"description": "a different bell"}, headers=headers)
    assert changed.status_code == 409 and changed.headers["content-type"] == "application/problem+json"
    assert len(await _event_ids(client, world_id)) == 1


async def test_concurrent_retries_with_one_key_write_once(client_factory: MakeClient) -> None:
    client = await client_factory()
    world_id = await _world(client)
    body = {"description": "thunder", "world_time": "2023-02-13T08:00:00+00:00"}
    headers = {"Idempotency-Key": f"k-{uuid.uuid4()}"}
    answers = await asyncio.gather(
        *(
            client.post(f"/v1/worlds/{world_id}/npcs/marta/perceptions", json=body, headers=headers)
            for _ in range(5)
        )
    )
    assert {a.status_code for a in answers} <= {202, 409}
    assert len(await _event_ids(client, world_id)) == 1


async def _cut_short(database_url: str, key: str, holder: str | None) -> None:
    """Make ``key``'s claim look as if its gateway process died (``holder``: a name nobody holds) or the
    request failed on our side (no holder: given back) after its work committed, before its answer was
    stored."""
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        cur = await conn.execute(
            "UPDATE gw_idempotency SET status_code = NULL, headers = '{}', body = NULL, holder = %s"
            " WHERE key = %s", (holder, key))
        assert cur.rowcount == 1


@pytest.mark.parametrize(("route", "holder"), [("perceptions", "gateway-killed"), ("chat", "gateway-killed"),
                                               ("perceptions", None)])
async def test_a_request_cut_short_by_its_gateways_death_runs_again_on_retry_and_writes_once(
    client_factory: MakeClient, database_url: str, route: str, holder: str | None
) -> None:
    client = await client_factory()
    world_id = await _world(client)
    body = ({"description": "the mill wheel stopped", "world_time": "2023-02-13T08:00:00+00:00"}
            if route == "perceptions" else {"player_id": "p1", "text": "Hello there", "wait": False})
    path, key = f"/v1/worlds/{world_id}/npcs/marta/{route}", f"cut-{uuid.uuid4()}"
    first = await client.post(path, json=body, headers={"Idempotency-Key": key})
    assert first.status_code == 202, first.text
    await _cut_short(database_url, key, holder)

    again = await client.post(path, json=body, headers={"Idempotency-Key": key})
    assert again.status_code == 202, again.text
    assert "idempotent-replayed" not in again.headers  # run again, not replayed
    assert again.json()["event_id"] == first.json()["event_id"]
    kind = "ObservationMade" if route == "perceptions" else "PlayerSpoke"
    items = (await client.get(f"/v1/worlds/{world_id}/events", params={"type": kind})).json()["items"]
    assert [i["event"]["event_id"] for i in items] == [first.json()["event_id"]]
    replayed = await client.post(path, json=body, headers={"Idempotency-Key": key})
    assert replayed.json() == again.json() and replayed.headers["idempotent-replayed"] == "true"


async def test_a_request_still_running_on_a_live_gateway_is_not_run_again(
    client_factory: MakeClient, database_url: str
) -> None:
    client = await client_factory()
    world_id = await _world(client)
    body = {"description": "a dog barks", "world_time": "2023-02-13T08:00:00+00:00"}
    path, key = f"/v1/worlds/{world_id}/npcs/marta/perceptions", f"live-{uuid.uuid4()}"
    first = await client.post(path, json=body, headers={"Idempotency-Key": key})
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as alive:
        # A gateway process that is still running its first request holds its lock.
        await alive.execute("SELECT pg_advisory_lock(%s, hashtext('gateway-alive'))", (HOLDER_LOCK_CLASS,))
        await _cut_short(database_url, key, holder="gateway-alive")
        busy = await client.post(path, json=body, headers={"Idempotency-Key": key})
        assert busy.status_code == 409 and "still in progress" in busy.json()["detail"]
    # That process is gone now (its connection closed): the retry runs the request, which writes nothing new.
    again = await client.post(path, json=body, headers={"Idempotency-Key": key})
    assert again.status_code == 202 and again.json() == first.json()
    assert await _event_ids(client, world_id) == [first.json()["event_id"]]


async def test_idempotency_keys_belong_to_one_tenant(client_factory: MakeClient) -> None:
    one, two = await client_factory(), await client_factory()
    key = {"Idempotency-Key": "shared-key-name"}
    body = {"name": "Vale", "start_time": T0}
    a = await one.post("/v1/worlds", json=body, headers=key)
    b = await two.post("/v1/worlds", json=body, headers=key)
    assert a.status_code == b.status_code == 201
    assert a.json()["world_id"] != b.json()["world_id"] and "idempotent-replayed" not in b.headers


async def test_a_key_over_its_rate_limit_gets_429_with_retry_after(client_factory: MakeClient) -> None:
    admin = await client_factory()
    r = await admin.post(
        "/v1/keys", json={"name": "slow", "scopes": ["read"], "rate_per_second": 0.01, "burst": 2}
    )
    assert r.status_code == 201
    async with httpx.AsyncClient(
        base_url=admin.base_url, headers={"Authorization": f"Bearer {r.json()['secret']}"}
    ) as slow:
        answers = [await slow.get("/v1/worlds") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert int(answers[2].headers["retry-after"]) >= 1
    assert answers[2].headers["content-type"] == "application/problem+json"
    assert (await admin.get("/v1/worlds")).status_code == 200  # other keys keep their own budget


async def test_a_new_key_is_shown_once_stored_hashed_and_revocable(client_factory: MakeClient) -> None:
    admin = await client_factory()
    r = await admin.post("/v1/keys", json={"name": "ci", "scopes": ["read", "write"]})
    created = r.json()
    assert r.status_code == 201 and created["secret"].startswith("npcw_")
    listed = (await admin.get("/v1/keys")).json()["items"]
    assert created["key_id"] in [k["key_id"] for k in listed]
    assert created["secret"] not in str(listed)
    async with httpx.AsyncClient(
        base_url=admin.base_url, headers={"Authorization": f"Bearer {created['secret']}"}
    ) as ci:
        assert (await ci.get("/v1/worlds")).status_code == 200
        assert (await admin.delete(f"/v1/keys/{created['key_id']}")).status_code == 204
        assert (await ci.get("/v1/worlds")).status_code == 401
    assert (await admin.get(f"/v1/keys/{created['key_id']}")).json()["revoked_at"] is not None


async def test_tenants_cannot_be_created_over_the_api_without_the_operator_key(
    client_factory: MakeClient,
) -> None:
    admin = await client_factory()
    r = await admin.post("/v1/tenants", json={"name": "sneaky"})
    assert r.status_code == 403 and "npcworld tenant create" in r.json()["detail"]


async def test_list_endpoints_page_with_opaque_cursors(client_factory: MakeClient) -> None:
    client = await client_factory()
    made = {await _world(client) for _ in range(5)}
    seen: list[str] = []
    params: dict[str, str | int] = {"limit": 2}
    while True:
        page = (await client.get("/v1/worlds", params=params)).json()
        seen += [w["world_id"] for w in page["items"]]
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert sorted(seen) == sorted(made) and len(seen) == len(set(seen))
    r = await client.get("/v1/keys", params={"cursor": params["cursor"]})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "cursor"
