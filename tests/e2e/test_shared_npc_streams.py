"""Many clients talking to one NPC at once: each request is accepted and written once, never a 409 because
another request extended the same NPC's stream first."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import httpx
import pytest

pytestmark = pytest.mark.integration
MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]


async def test_players_chatting_with_one_npc_at_once_are_all_accepted_and_each_written_once(
    client_factory: MakeClient,
) -> None:
    client = await client_factory()
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    r = await client.post(
        "/v1/worlds", json={"world_id": world_id, "name": "Vale", "start_time": "2023-02-13T07:00:00+00:00"}
    )
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "marta", "name": "Marta"})
    assert r.status_code == 201, r.text

    async def chat(i: int) -> httpx.Response:
        body = {"player_id": f"p{i}", "text": f"hello number {i}", "wait": False}
        return await client.post(f"/v1/worlds/{world_id}/npcs/marta/chat", json=body)

    answers = await asyncio.gather(*(chat(i) for i in range(12)))
    assert [a.status_code for a in answers] == [202] * 12, [a.text for a in answers if a.status_code != 202]
    page = await client.get(f"/v1/worlds/{world_id}/events", params={"type": "PlayerSpoke", "limit": 100})
    stored = sorted(item["event"]["event_id"] for item in page.json()["items"])
    assert stored == sorted(a.json()["event_id"] for a in answers)


async def test_perceptions_and_chats_see_a_new_npc_and_a_deleted_world_at_once(
    client_factory: MakeClient,
) -> None:
    client = await client_factory()
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    r = await client.post(
        "/v1/worlds", json={"world_id": world_id, "name": "Vale", "start_time": "2023-02-13T07:00:00+00:00"}
    )
    assert r.status_code == 201, r.text
    npcs = f"/v1/worlds/{world_id}/npcs"
    seen = {"description": "a bell rings", "world_time": "2023-02-13T08:00:00+00:00"}
    assert (await client.post(f"{npcs}/marta/perceptions", json=seen)).status_code == 404

    assert (await client.post(npcs, json={"npc_id": "marta", "name": "Marta"})).status_code == 201
    assert (await client.post(f"{npcs}/marta/perceptions", json=seen)).status_code == 202
    said = {"player_id": "p1", "text": "hello", "wait": False}
    assert (await client.post(f"{npcs}/marta/chat", json=said)).status_code == 202

    assert (await client.delete(f"/v1/worlds/{world_id}")).status_code == 204
    assert (await client.post(f"{npcs}/marta/perceptions", json=seen)).status_code == 404
    assert (await client.post(f"{npcs}/marta/chat", json=said)).status_code == 404
