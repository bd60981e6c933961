"""An NPC's plan over the public REST API: created through the gateway, planned by the planning service on
the world tick, re-planned by an admin's inner voice, and private to its tenant."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from npcworld.contracts import Envelope, WorldTicked
from npcworld.eventstore import EventStore, UnitOfWork
from tests.integration.planning.conftest import embedder, stack  # noqa: F401  (planning stack fixtures)
from tests.integration.planning.support import Stack
from tests.polling import eventually

pytestmark = pytest.mark.integration
MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
NINE = datetime(2023, 2, 14, 9, 0, tzinfo=UTC)


async def _world(client: httpx.AsyncClient) -> tuple[str, str]:
    world_id = f"w-{uuid.uuid4().hex[:8]}"
    r = await client.post("/v1/worlds", json={"world_id": world_id, "name": "Brindle Hollow",
                                              "start_time": NINE.isoformat()})
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/worlds/{world_id}/npcs", json={
        "npc_id": "marta", "name": "Marta Quill", "age": 34, "occupation": "owner of the Lantern Cafe",
        "location": f"{world_id}:Mill Street:Lantern Cafe", "seed": "Marta runs the Lantern Cafe"})
    assert r.status_code == 201, r.text
    return world_id, (await client.get("/v1/tenant")).json()["tenant_id"]


async def _tick(planning: Stack, tenant_id: str, world_id: str) -> None:
    """The world clock's tick (world-state's ticker is not part of this test)."""
    event = Envelope.new(WorldTicked(step=1, step_seconds=10), tenant_id=tenant_id, world_id=world_id,
                         world_time=NINE)
    async with planning.pool.connection() as conn, conn.transaction():
        await UnitOfWork(conn, EventStore()).append(f"clock:{world_id}", [event])


async def _plan(client: httpx.AsyncClient, world_id: str) -> dict[str, Any]:
    r = await client.get(f"/v1/worlds/{world_id}/npcs/marta/plan")
    return r.json() if r.status_code == 200 else {}


async def test_the_plan_is_readable_changes_with_the_inner_voice_and_stays_with_its_tenant(
    stack: Stack, client_factory: MakeClient  # noqa: F811
) -> None:
    client = await client_factory()
    world_id, tenant_id = await _world(client)
    await _tick(stack, tenant_id, world_id)
    plan = await eventually(lambda: _plan(client, world_id), lambda p: p.get("current_action") is not None)
    assert plan["day"] == "2023-02-14" and 5 <= len(plan["outline"]) <= 8
    assert any("Lantern Cafe" in b["description"] for b in plan["outline"])
    assert plan["current_action"]["start"].startswith("2023-02-14T09:00")

    r = await client.post(f"/v1/worlds/{world_id}/npcs/marta/inner-voice",
                          json={"directive": "you will run for mayor", "world_time": "2023-02-14T11:00:00Z"})
    assert r.status_code == 202, r.text
    plan = await eventually(lambda: _plan(client, world_id), lambda p: "you will run for mayor" in p["goals"])
    assert any("run for mayor" in i["description"] and i["start"].startswith("2023-02-14T11:00")
               for i in plan["items"])

    reader = await client_factory(("read",))
    assert (await reader.get(f"/v1/worlds/{world_id}/npcs/marta/plan")).status_code == 404  # another tenant
    assert (await client.get(f"/v1/worlds/{world_id}/npcs/nobody/plan")).status_code == 404
