"""The SSE stream of a world's events resumes from Last-Event-ID without gaps or duplicates."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable

import httpx

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"


async def _read(
    client: httpx.AsyncClient,
    url: str,
    count: int,
    headers: dict[str, str] | None = None,
    while_open: Callable[[], Awaitable[None]] | None = None,
) -> list[tuple[int, str, str]]:
    """(id, type, event_id) of the first ``count`` events; ``while_open`` runs once the stream is open."""
    frames: list[tuple[int, str, str]] = []

    async def consume() -> None:
        async with client.stream("GET", url, headers=headers or {}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            writer = asyncio.create_task(while_open()) if while_open else None
            fields: dict[str, str] = {}
            async for line in response.aiter_lines():
                if line:
                    name, _, value = line.partition(":")
                    fields[name] = value.strip()
                    continue
                if "data" in fields:
                    frames.append(
                        (int(fields["id"]), fields["event"], json.loads(fields["data"])["event_id"])
                    )
                fields = {}
                if len(frames) == count:
                    break
            if writer:
                await writer

    await asyncio.wait_for(consume(), 30)
    return frames


async def test_a_stream_resumed_from_last_event_id_misses_nothing_and_repeats_nothing(
    client_factory: MakeClient,
) -> None:
    client = await client_factory()
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    await client.post("/v1/worlds", json={"world_id": world_id, "name": "Vale", "start_time": T0})
    for npc in ("marta", "tobias"):
        await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": npc, "name": npc})
    url = f"/v1/worlds/{world_id}/events/stream"

    async def perceive(n: int, tag: str) -> None:
        await asyncio.gather(
            *(
                client.post(
                    f"/v1/worlds/{world_id}/npcs/marta/perceptions",
                    json={"description": f"{tag} {i}", "world_time": T0},
                )
                for i in range(n)
            )
        )

    first = await _read(client, url, 2)
    await perceive(4, "while away")
    rest = await _read(
        client,
        url,
        1 + 4 + 6,
        headers={"Last-Event-ID": str(first[-1][0])},
        while_open=lambda: perceive(6, "live"),
    )

    streamed = first + rest
    log = (await client.get(f"/v1/worlds/{world_id}/events", params={"limit": 500})).json()["items"]
    assert [(f[0], f[2]) for f in streamed] == [(e["seq"], e["event"]["event_id"]) for e in log]
    assert len({f[2] for f in streamed}) == len(streamed) == 13
    assert [f[1] for f in streamed][:3] == ["WorldCreated", "NpcCreated", "NpcCreated"]


async def test_a_stream_filters_by_type_and_refuses_a_bad_last_event_id(client_factory: MakeClient) -> None:
    client = await client_factory()
    world_id = f"w-{uuid.uuid4().hex[:10]}"
    await client.post("/v1/worlds", json={"world_id": world_id, "name": "Vale", "start_time": T0})
    await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "marta", "name": "Marta"})
    await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": "tobias", "name": "Tobias"})
    frames = await _read(client, f"/v1/worlds/{world_id}/events/stream?type=NpcCreated", 1)
    assert frames[0][1] == "NpcCreated"
    events = (await client.get(f"/v1/worlds/{world_id}/events", params={"npc_id": "tobias"})).json()["items"]
    frames = await _read(client, f"/v1/worlds/{world_id}/events/stream?npc_id=tobias", 1)
    assert frames[0][2] == events[0]["event"]["event_id"]  # marta's NpcCreated (stored first) is skipped
    r = await client.get(f"/v1/worlds/{world_id}/events/stream", headers={"Last-Event-ID": "yesterday"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "Last-Event-ID"
