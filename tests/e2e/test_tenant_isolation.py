"""Tenant isolation and scopes over every route in the app's OpenAPI table (later routes are covered too).

With two tenants, each route is called by the other tenant's admin key with the owner's ids: it must
answer 403/404 and mention none of the owner's ids or names. A read-scoped key cannot use any writing
route, and admin-only routes refuse a read+write key.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from services.gateway.api import create_app
from tests.e2e.openapi_instances import minimal

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
SPEC: dict[str, Any] = create_app().openapi()
OPS = [
    (method.upper(), path) for path, ops in SPEC["paths"].items() for method in ops if path.startswith("/v1/")
]
# POST routes that only read (a query with a body); every other non-GET route writes.
READ_POSTS = {"/v1/worlds/{world_id}/npcs/{npc_id}/memories/retrieve"}
ADMIN_ONLY = [op for op in OPS if op[1].startswith(("/v1/keys", "/v1/players")) or "inner-voice" in op[1]]
WRITES = [op for op in OPS if op[0] != "GET" and op[1] not in READ_POSTS]


def _body(method: str, path: str) -> Any:
    op = SPEC["paths"][path][method.lower()]
    schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    return None if schema is None else minimal(schema, SPEC)


def _url(path: str, ids: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: ids.get(m.group(1), "x"), path)


@pytest.fixture(scope="module")
async def owner_admin(client_factory_module: MakeClient) -> httpx.AsyncClient:
    return await client_factory_module()


async def _scoped(admin: httpx.AsyncClient, scopes: list[str]) -> httpx.AsyncClient:
    r = await admin.post("/v1/keys", json={"name": "+".join(scopes), "scopes": scopes})
    assert r.status_code == 201, r.text
    return httpx.AsyncClient(
        base_url=admin.base_url, headers={"Authorization": f"Bearer {r.json()['secret']}"}
    )


@pytest.fixture(scope="module")
async def owner_reader(owner_admin: httpx.AsyncClient) -> AsyncIterator[httpx.AsyncClient]:
    async with await _scoped(owner_admin, ["read"]) as client:
        yield client


@pytest.fixture(scope="module")
async def owner_writer(owner_admin: httpx.AsyncClient) -> AsyncIterator[httpx.AsyncClient]:
    async with await _scoped(owner_admin, ["read", "write"]) as client:
        yield client


@pytest.fixture(scope="module")
async def owner(owner_admin: httpx.AsyncClient) -> dict[str, str]:
    client = owner_admin
    world_id = f"secret-world-{uuid.uuid4().hex[:8]}"
    r = await client.post(
        "/v1/worlds",
        json={"world_id": world_id, "name": "Hidden Vale", "start_time": "2023-02-13T07:00:00+00:00"},
    )
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "marta", "name": "Marta Hiddenname"})
    assert r.status_code == 201, r.text
    hook = (await client.post(f"/v1/worlds/{world_id}/webhooks", json={"url": "http://127.0.0.1:9/h"})).json()
    chat = await client.post(f"/v1/worlds/{world_id}/npcs/marta/chat",
                             json={"player_id": "p1", "text": "hello", "wait": False})
    assert chat.status_code == 202, chat.text
    key_id = (await client.get("/v1/keys")).json()["items"][0]["key_id"]
    tenant_id = (await client.get("/v1/tenant")).json()["tenant_id"]
    return {
        "world_id": world_id,
        "npc_id": "marta",
        "webhook_id": hook["webhook_id"],
        "key_id": key_id,
        "delivery_id": "1",
        "event_id": chat.json()["event_id"],
        "memory_id": str(uuid.uuid4()),  # another tenant's edit answers 404 before any memory is looked up
        "tenant_id": tenant_id,
        "name": "Hidden Vale",
        "npc_name": "Marta Hiddenname",
    }


def _leaks(text: str, owner: dict[str, str], sent: str) -> list[str]:
    """Owner values in a response that the caller did not send itself (echoing its own URL is no leak)."""
    return [v for k, v in owner.items() if k not in ("npc_id", "delivery_id") and v in text and v not in sent]


@pytest.mark.parametrize(("method", "path"), OPS, ids=[f"{m} {p}" for m, p in OPS])
async def test_another_tenant_cannot_reach_the_owners_resources(
    method: str, path: str, owner: dict[str, str], client_factory_module: MakeClient
) -> None:
    other = await client_factory_module()
    url = _url(path, owner)
    r = await other.request(method, url, json=_body(method, path))
    if "{" in path:
        assert r.status_code in (403, 404), (method, path, r.status_code, r.text)
    else:
        assert r.status_code < 500, (method, path, r.status_code, r.text)
    assert not _leaks(r.text, owner, sent=url), (method, path, r.text)


@pytest.mark.parametrize(("method", "path"), WRITES, ids=[f"{m} {p}" for m, p in WRITES])
async def test_a_read_scoped_key_cannot_write(
    method: str, path: str, owner: dict[str, str], owner_reader: httpx.AsyncClient
) -> None:
    r = await owner_reader.request(method, _url(path, owner), json=_body(method, path))
    assert r.status_code == 403, (method, path, r.status_code, r.text)


@pytest.mark.parametrize(("method", "path"), ADMIN_ONLY, ids=[f"{m} {p}" for m, p in ADMIN_ONLY])
async def test_admin_only_routes_refuse_a_read_write_key(
    method: str, path: str, owner: dict[str, str], owner_writer: httpx.AsyncClient
) -> None:
    r = await owner_writer.request(method, _url(path, owner), json=_body(method, path))
    needed = "voice" if "inner-voice" in path else "admin"  # admin implies voice; write does not
    assert r.status_code == 403 and needed in r.json()["detail"], (method, path, r.text)
