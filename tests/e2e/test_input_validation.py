"""Text the API requires must say something, and every timestamp it takes must carry a zone: otherwise a
422 problem naming the field, before anything is written."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import httpx

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
BLANK = " \t\n "
NAIVE = "2023-02-13T08:00:00"
ZONED = "2023-02-13T08:00:00+01:00"


def _requests(world: str) -> list[tuple[str, str, dict[str, object], str]]:
    """(method, path, body or query, the field the 422 must name) for each refusal."""
    npc, w = f"/v1/worlds/{world}/npcs/marta", f"/v1/worlds/{world}"
    return [
        ("POST", "/v1/worlds", {"name": BLANK, "start_time": ZONED}, "name"),
        ("POST", "/v1/worlds", {"name": "Brindle", "start_time": NAIVE}, "start_time"),
        ("POST", f"/v1/worlds/{world}/npcs", {"npc_id": "ines", "name": BLANK}, "name"),
        ("POST", f"{w}/npcs", {"npc_id": "ines", "name": "Ines", "traits": [BLANK]}, "traits.0"),
        ("POST", f"{npc}/perceptions", {"description": BLANK, "world_time": ZONED}, "description"),
        ("POST", f"{npc}/perceptions", {"description": "a bell", "world_time": NAIVE}, "world_time"),
        ("POST", f"{npc}/chat", {"player_id": "p1", "text": BLANK}, "text"),
        ("POST", f"{npc}/chat", {"player_id": "p1", "text": "hello", "world_time": NAIVE}, "world_time"),
        ("POST", f"{npc}/interview", {"interviewer": "a reporter", "question": BLANK}, "question"),
        ("POST", f"{npc}/inner-voice", {"directive": BLANK}, "directive"),
        ("POST", f"{npc}/inner-voice", {"directive": "be kind", "world_time": NAIVE}, "world_time"),
        ("POST", f"{npc}/memories/retrieve", {"query": BLANK}, "query"),
        ("POST", f"{npc}/memories/retrieve", {"query": "bell", "now": NAIVE}, "now"),
        ("GET", f"{npc}/memories", {"since": NAIVE}, "since"),
        ("GET", f"/v1/worlds/{world}/events", {"until": NAIVE}, "until"),
        ("GET", f"/v1/worlds/{world}/llm-usage", {"since": NAIVE}, "since"),
        ("POST", f"{w}/object-states", {"object_path": f"{world}:a:b:c", "state": BLANK}, "state"),
        ("POST", f"{w}/positions", {"moves": [{"npc_id": "marta", "path": BLANK}]}, "moves.0.path"),
        ("POST", f"/v1/worlds/{world}/clock", {"until": NAIVE}, "until"),
        ("POST", f"/v1/worlds/{world}/fork", {"at": NAIVE}, "at"),
        (
            "POST",
            f"/v1/worlds/{world}/definition",
            {"sectors": [{"name": "town", "arenas": [{"name": "   ", "objects": [{"name": "bed"}]}]}]},
            "sectors",
        ),
        ("POST", "/v1/keys", {"name": BLANK, "scopes": ["read"]}, "name"),
    ]


async def test_blank_text_and_timestamps_without_a_zone_are_refused_naming_the_field(
    client_factory: MakeClient,
) -> None:
    client = await client_factory()
    world = f"w-{uuid.uuid4().hex[:10]}"
    r = await client.post("/v1/worlds", json={"world_id": world, "name": "Brindle", "start_time": ZONED})
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/worlds/{world}/npcs", json={"npc_id": "marta", "name": "Marta"})
    assert r.status_code == 201, r.text
    before = (await client.get(f"/v1/worlds/{world}/events")).json()["items"]

    for method, path, data, field in _requests(world):
        if method == "GET":
            r = await client.get(path, params=data)  # type: ignore[arg-type]
        else:
            r = await client.post(path, json=data)
        assert r.status_code == 422, (path, data, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
        fields = [e["field"] for e in r.json()["errors"]]
        assert fields == [field], (path, data, r.json())
        message = r.json()["errors"][0]["message"]
        assert ("blank" in message) or ("time zone" in message), (path, message)

    assert (await client.get(f"/v1/worlds/{world}/events")).json()["items"] == before
    r = await client.post(
        f"/v1/worlds/{world}/npcs/marta/perceptions", json={"description": "a bell", "world_time": ZONED}
    )
    assert r.status_code == 202, r.text
