"""Forgetting a player over the REST API on the real stack (gateway process, relay, memory service, dialogue
consumer): what the player said is sealed at rest, and after ``DELETE /v1/players/{id}`` it is unreadable in
the log and in storage, its memories and relationships are gone (and stay gone through a rebuild of the
memory projection and a fork), while another player and another tenant keep theirs."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest

from npcworld.embeddings import LocalMiniLMEmbedder
from npcworld.projection import rebuild
from npcworld.shredding import FORGOTTEN
from services.memory.deps import MemoryDeps
from services.memory.projection import NoImportanceRater, build_projection
from services.memory.settings import Settings as MemorySettings
from tests.e2e.conftest import running_gateway
from tests.infra import BrokerForTests
from tests.integration.dialogue.support import Stack, Town, running_dialogue, seeded
from tests.polling import eventually

pytestmark = pytest.mark.integration
MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
SECRET = "my locker code is 4711, tell nobody about the swordfish"
KEPT = "the blue lanterns at the cafe are lovely"


@pytest.fixture(scope="module")
def embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


@pytest.fixture(scope="module")
async def stack(
    database_url: str, broker: BrokerForTests, embedder: LocalMiniLMEmbedder
) -> AsyncIterator[Stack]:
    async with running_dialogue(database_url, broker.bootstrap, embedder) as running:
        yield running


@pytest.fixture(scope="module")
def gateway_url(database_url: str, broker: BrokerForTests, stack: Stack) -> Iterator[str]:
    """The gateway, reading memories from the stack's memory service (the public memories route)."""
    with running_gateway(database_url, broker, MEMORY_API_URL=stack.memory.base_url) as url:
        yield url


async def _world(client: httpx.AsyncClient, stack: Stack) -> str:
    world_id = f"w-{uuid.uuid4().hex[:8]}"
    r = await client.post("/v1/worlds", json={"name": "Smallville", "start_time": "2023-02-14T15:00:00Z",
                                              "world_id": world_id})
    assert r.status_code == 201, r.text
    npc = {"npc_id": "isabella", "name": "Isabella Rodriguez", "seed": "Isabella runs a cafe"}
    r = await client.post(f"/v1/worlds/{world_id}/npcs", json=npc)
    assert r.status_code == 201, r.text
    tenant_id = (await client.get("/v1/tenant")).json()["tenant_id"]
    await eventually(lambda: seeded(stack, Town(tenant_id, world_id), "isabella"), bool, timeout=60)
    return world_id


async def _chat(client: httpx.AsyncClient, world_id: str, player: str, text: str) -> dict[str, Any]:
    line = {"player_id": player, "text": text}
    r = await client.post(f"/v1/worlds/{world_id}/npcs/isabella/chat", json=line)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


async def _memories(client: httpx.AsyncClient, world_id: str) -> list[str]:
    page = await client.get(f"/v1/worlds/{world_id}/npcs/isabella/memories", params={"limit": 500})
    return [m["description"] for m in page.json()["items"]]


async def _players(client: httpx.AsyncClient, world_id: str) -> set[str]:
    rels = (await client.get(f"/v1/worlds/{world_id}/npcs/isabella/relationships")).json()
    return {r["player_id"] for r in rels if r["player_id"]}


async def _said(client: httpx.AsyncClient, world_id: str) -> dict[str, list[str]]:
    """Per player, the texts of its PlayerSpoke and NpcReplied events as the event log shows them."""
    page = await client.get(f"/v1/worlds/{world_id}/events", params={"type": ["PlayerSpoke", "NpcReplied"]})
    out: dict[str, list[str]] = {}
    for item in page.json()["items"]:
        p = item["event"]["payload"]
        out.setdefault(p["player_id"], []).extend([p["text"], *([p["heard"]] if "heard" in p else [])])
    return out


async def _stored_anywhere(stack: Stack, word: str) -> dict[str, int]:
    """Rows holding ``word`` in plain text: events, memories, model-call records, streamed reply pieces,
    relationships (dialogue's and the gateway's view of them)."""
    like = f"%{word}%"
    queries = {
        "events": "SELECT count(*) FROM events WHERE payload::text LIKE %s",
        "memories": "SELECT count(*) FROM memories WHERE description LIKE %s",
        "llm_calls": "SELECT count(*) FROM llm_calls"
                     " WHERE concat(request::text, response::text, inputs::text, response_text) LIKE %s",
        "llm_reply_chunks": "SELECT count(*) FROM llm_reply_chunks WHERE text LIKE %s",
        "dialogue_relationships": "SELECT count(*) FROM dialogue_relationships WHERE summary LIKE %s",
        "gw_relationships": "SELECT count(*) FROM gw_relationships WHERE summary LIKE %s",
    }
    async with stack.pool.connection() as conn:
        return {table: (await (await conn.execute(q, (like,))).fetchone() or (0,))[0]
                for table, q in queries.items()}


async def test_a_forgotten_players_words_memories_and_relationship_are_gone_for_good(
    stack: Stack, client_factory: MakeClient, embedder: LocalMiniLMEmbedder
) -> None:
    client = await client_factory()
    world_id = await _world(client, stack)
    first = await _chat(client, world_id, "p1", SECRET)
    await _chat(client, world_id, "p2", KEPT)
    # Remembered: both players' lines are memories, both players are acquaintances; the words only sealed.
    await eventually(lambda: _memories(client, world_id),
                     lambda ms: any("swordfish" in m for m in ms) and any("lanterns" in m for m in ms),
                     timeout=60)
    assert await _players(client, world_id) == {"p1", "p2"}
    assert (await _said(client, world_id))["p1"][0] == SECRET
    assert (await _stored_anywhere(stack, "swordfish"))["events"] == 0

    writer = await client_factory(("read", "write"))
    assert (await writer.delete("/v1/players/p1")).status_code == 403
    assert (await client.delete("/v1/players/nobody")).status_code == 404  # never said anything here
    r = await client.delete("/v1/players/p1")
    assert r.status_code == 202, r.text
    assert r.json()["worlds"] == [world_id] and r.json()["llm_calls_redacted"] >= 1

    said = await _said(client, world_id)
    assert set(said["p1"]) == {FORGOTTEN} and KEPT in said["p2"]
    await eventually(lambda: _memories(client, world_id), lambda ms: not any("(p1)" in m for m in ms),
                     timeout=60)
    assert any("lanterns" in m for m in await _memories(client, world_id))
    assert await eventually(lambda: _players(client, world_id), lambda ps: ps == {"p2"}, timeout=60)
    assert set((await _stored_anywhere(stack, "swordfish")).values()) == {0}
    stream = await client.get(f"/v1/worlds/{world_id}/npcs/isabella/chats/{first['event_id']}")
    assert stream.json()["reply"] == FORGOTTEN
    # The player cannot be stored again, and forgetting it twice changes nothing.
    r = await client.post(f"/v1/worlds/{world_id}/npcs/isabella/chat", json={"player_id": "p1", "text": "hi"})
    assert r.status_code == 410, r.text
    again = await client.delete("/v1/players/p1")
    assert again.status_code == 202 and again.json()["already_forgotten"] and again.json()["worlds"] == []

    # A rebuild of the memory projection from the log, and a fork of the world, keep the player forgotten.
    before = sorted(await _memories(client, world_id))
    await rebuild(stack.pool, build_projection(
        MemoryDeps(embedder=embedder, rater=NoImportanceRater(), settings=MemorySettings()),
        await _memory_consumer(stack, first["reply_event_id"])))
    assert sorted(await _memories(client, world_id)) == before
    fork = await client.post(f"/v1/worlds/{world_id}/fork",
                             json={"at": "2023-02-15T15:00:00Z", "new_world_id": f"{world_id}-fork"})
    assert fork.status_code == 201, fork.text
    assert set((await _said(client, f"{world_id}-fork"))["p1"]) == {FORGOTTEN}
    copied = await eventually(lambda: _memories(client, f"{world_id}-fork"),
                              lambda ms: any("lanterns" in m for m in ms), timeout=60)
    assert not any("(p1)" in m or FORGOTTEN in m for m in copied)


async def test_forgetting_a_player_leaves_another_tenants_player_of_the_same_id_alone(
    stack: Stack, client_factory: MakeClient
) -> None:
    ours, theirs = await client_factory(), await client_factory()
    our_world, their_world = await _world(ours, stack), await _world(theirs, stack)
    await _chat(ours, our_world, "p1", SECRET)
    await _chat(theirs, their_world, "p1", KEPT)
    await eventually(lambda: _players(theirs, their_world), lambda ps: ps == {"p1"}, timeout=60)
    await eventually(lambda: _memories(theirs, their_world), lambda ms: any("lanterns" in m for m in ms),
                     timeout=60)
    assert (await ours.delete("/v1/players/p1")).json()["worlds"] == [our_world]
    assert (await _said(theirs, their_world))["p1"][0] == KEPT
    assert await _players(theirs, their_world) == {"p1"}
    assert any("lanterns" in m for m in await _memories(theirs, their_world))
    await _chat(theirs, their_world, "p1", "still here")


async def _memory_consumer(stack: Stack, event_id: str) -> str:
    """The consumer name the stack's memory service claims events under."""
    async with stack.pool.connection() as conn:
        cur = await conn.execute("SELECT consumer FROM processed_events WHERE event_id = %s"
                                 " AND consumer LIKE 'memory-%%'", (event_id,))
        row = await cur.fetchone()
    assert row is not None
    return str(row[0])
