"""Keys for games: a game server's key plays but cannot administer, keys limited to worlds or in time, and
player session tokens that only chat, in one world, as one player."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest

pytestmark = pytest.mark.integration

START = "2023-02-13T07:00:00Z"
Factory = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def studio(
    client_factory: Factory, gateway_url: str
) -> AsyncIterator[Callable[..., Awaitable[httpx.AsyncClient]]]:
    """An admin client of a new tenant with two worlds (each with one NPC), and a maker of its other keys."""
    admin = await client_factory()
    made: list[httpx.AsyncClient] = []

    async def key(**body: object) -> httpx.AsyncClient:
        created = await admin.post("/v1/keys", json={"name": "k", **body})
        assert created.status_code == 201, created.text
        client = httpx.AsyncClient(
            base_url=gateway_url, timeout=10, headers={"Authorization": f"Bearer {created.json()['secret']}"}
        )
        made.append(client)
        return client

    key.admin = admin  # type: ignore[attr-defined]
    key.worlds = []  # type: ignore[attr-defined]
    for _ in range(2):
        world = f"w-{uuid.uuid4().hex[:8]}"
        assert (
            await admin.post("/v1/worlds", json={"name": "Town", "start_time": START, "world_id": world})
        ).status_code == 201
        assert (
            await admin.post(f"/v1/worlds/{world}/npcs", json={"npc_id": "ada", "name": "Ada"})
        ).status_code == 201
        key.worlds.append(world)  # type: ignore[attr-defined]
    yield key
    await asyncio.gather(*(c.aclose() for c in made))


def _chat(player: str = "p1") -> dict[str, object]:
    return {"player_id": player, "text": "Hello there", "wait": False}


def _perception() -> dict[str, object]:
    return {"description": "a cart rolls by", "world_time": START}


async def test_a_game_server_key_chats_and_perceives_but_cannot_administer(
    studio: Callable[..., Awaitable[httpx.AsyncClient]],
) -> None:
    game = await studio(scopes=["play"])
    world = studio.worlds[0]  # type: ignore[attr-defined]
    assert (await game.post(f"/v1/worlds/{world}/npcs/ada/chat", json=_chat())).status_code in (200, 202)
    assert (
        await game.post(f"/v1/worlds/{world}/npcs/ada/perceptions", json=_perception())
    ).status_code == 202
    refused = {
        "delete world": await game.delete(f"/v1/worlds/{world}"),
        "create world": await game.post("/v1/worlds", json={"name": "X", "start_time": START}),
        "inner voice": await game.post(
            f"/v1/worlds/{world}/npcs/ada/inner-voice", json={"directive": "go home"}
        ),
        "keys": await game.get("/v1/keys"),
        "read events": await game.get(f"/v1/worlds/{world}/events"),
    }
    for what, answer in refused.items():
        assert answer.status_code == 403, (what, answer.text)


async def test_inner_voice_has_a_scope_of_its_own(
    studio: Callable[..., Awaitable[httpx.AsyncClient]],
) -> None:
    voice = await studio(scopes=["voice"])
    world = studio.worlds[0]  # type: ignore[attr-defined]
    answer = await voice.post(f"/v1/worlds/{world}/npcs/ada/inner-voice", json={"directive": "go home"})
    assert answer.status_code == 202, answer.text
    assert (await voice.get("/v1/keys")).status_code == 403  # whispering is not managing keys


async def test_a_key_limited_to_a_world_reaches_nothing_else(
    studio: Callable[..., Awaitable[httpx.AsyncClient]],
) -> None:
    mine, other = studio.worlds  # type: ignore[attr-defined]
    limited = await studio(scopes=["read", "write"], worlds=[mine])
    assert (await limited.get(f"/v1/worlds/{mine}")).status_code == 200
    listed = await limited.get("/v1/worlds")
    assert [w["world_id"] for w in listed.json()["items"]] == [mine]
    missing = await limited.get("/v1/worlds/no-such-world")
    for answer in (
        await limited.get(f"/v1/worlds/{other}"),
        missing,
        await limited.post(f"/v1/worlds/{other}/npcs/ada/chat", json=_chat()),
        await limited.post("/v1/worlds", json={"name": "X", "start_time": START, "world_id": "x1"}),
        await limited.post(f"/v1/worlds/{mine}/fork", json={"at": START, "new_world_id": other}),
    ):
        assert answer.status_code == 403, answer.text
        assert (
            answer.json()["detail"] == missing.json()["detail"]
        )  # an existing world looks like a missing one


async def test_an_expired_key_stops_working_and_a_past_expiry_is_refused(
    studio: Callable[..., Awaitable[httpx.AsyncClient]],
) -> None:
    admin = studio.admin  # type: ignore[attr-defined]
    past = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    refused = await admin.post("/v1/keys", json={"name": "k", "scopes": ["read"], "expires_at": past})
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "expires_at"
    soon = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
    brief = await studio(scopes=["read"], expires_at=soon)
    assert (await brief.get("/v1/worlds")).status_code == 200
    await asyncio.sleep(2.5)
    assert (await brief.get("/v1/worlds")).status_code == 401


async def test_a_player_session_only_chats_in_its_world_as_its_player(
    studio: Callable[..., Awaitable[httpx.AsyncClient]], gateway_url: str
) -> None:
    mine, other = studio.worlds  # type: ignore[attr-defined]
    game = await studio(scopes=["play"])
    minted = await game.post(f"/v1/worlds/{mine}/sessions", json={"player_id": "p1", "ttl_seconds": 600})
    assert minted.status_code == 201, minted.text
    session = minted.json()
    assert session["scopes"] == ["chat"] and session["world_id"] == mine
    assert datetime.fromisoformat(session["expires_at"]) > datetime.now(UTC) + timedelta(seconds=590)
    async with httpx.AsyncClient(
        base_url=gateway_url, timeout=10, headers={"Authorization": f"Bearer {session['token']}"}
    ) as player:
        assert (await player.post(f"/v1/worlds/{mine}/npcs/ada/chat", json=_chat("p1"))).status_code in (
            200,
            202,
        )
        refused = {
            "as another player": await player.post(f"/v1/worlds/{mine}/npcs/ada/chat", json=_chat("p2")),
            "another world": await player.post(f"/v1/worlds/{other}/npcs/ada/chat", json=_chat("p1")),
            "perceptions": await player.post(f"/v1/worlds/{mine}/npcs/ada/perceptions", json=_perception()),
            "read": await player.get(f"/v1/worlds/{mine}/npcs/ada/state"),
            "more sessions": await player.post(f"/v1/worlds/{mine}/sessions", json={"player_id": "p1"}),
        }
        for what, answer in refused.items():
            assert answer.status_code == 403, (what, answer.text)
        listed = await studio.admin.get("/v1/keys")  # type: ignore[attr-defined]
        assert session["session_id"] not in {k["key_id"] for k in listed.json()["items"]}
        assert (await studio.admin.delete(f"/v1/keys/{session['session_id']}")).status_code == 204  # type: ignore[attr-defined]
        assert (await player.post(f"/v1/worlds/{mine}/npcs/ada/chat", json=_chat("p1"))).status_code == 401
    refused_ttl = await game.post(
        f"/v1/worlds/{mine}/sessions", json={"player_id": "p1", "ttl_seconds": 10**6}
    )
    assert refused_ttl.status_code == 422
