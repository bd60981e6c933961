"""Taking a world id another tenant holds: refused the same way as one's own, with nothing internal shown."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import httpx
import pytest

pytestmark = pytest.mark.integration

START = "2023-02-13T07:00:00Z"
Factory = Callable[..., Awaitable[httpx.AsyncClient]]


async def _world(client: httpx.AsyncClient, world_id: str) -> httpx.Response:
    return await client.post("/v1/worlds", json={"name": "Town", "start_time": START, "world_id": world_id})


async def test_an_id_taken_by_another_tenant_answers_like_ones_own_and_reveals_nothing(
    client_factory: Factory,
) -> None:
    owner, other = await client_factory(), await client_factory()
    taken, own = f"town-{uuid.uuid4().hex[:8]}", f"mine-{uuid.uuid4().hex[:8]}"
    assert (await _world(owner, taken)).status_code == 201
    for _ in range(3):  # history in the owner's world: its size must not show either
        assert (await owner.post(f"/v1/worlds/{taken}/npcs", json={
            "npc_id": f"npc-{uuid.uuid4().hex[:6]}", "name": "Ada"})).status_code == 201
    assert (await _world(other, own)).status_code == 201

    answers = {
        "create, another tenant's id": await _world(other, taken),
        "create, own id": await _world(other, own),
        "fork into another tenant's id": await other.post(
            f"/v1/worlds/{own}/fork", json={"at": START, "new_world_id": taken}),
        "fork into own id": await other.post(
            f"/v1/worlds/{own}/fork", json={"at": START, "new_world_id": own}),
    }
    for case, answer in answers.items():
        assert answer.status_code == 409, (case, answer.text)
        assert answer.headers["content-type"].startswith("application/problem+json")
        text = answer.text.lower()
        for leak in ("stream", "version", "world-", "expected", "tenant"):
            assert leak not in text, (case, answer.text)
    details = {case: a.json()["detail"].replace(taken, "ID").replace(own, "ID")
               for case, a in answers.items()}
    assert len(set(details.values())) == 1, details  # whose id it is makes no difference
    assert (await other.get(f"/v1/worlds/{taken}")).status_code == 404
