"""Talking to NPCs over the public REST API: gateway → event store → Kafka → dialogue service → reply."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from npcworld.contracts.planning import ConversationRequested
from npcworld.embeddings import LocalMiniLMEmbedder
from tests.infra import BrokerForTests
from tests.integration.dialogue.support import PARTY, Stack, Town, plant, recent, running_dialogue, seeded
from tests.polling import eventually

pytestmark = pytest.mark.integration
MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture(scope="module")
async def stack(database_url: str, broker: BrokerForTests) -> AsyncIterator[Stack]:
    async with running_dialogue(database_url, broker.bootstrap, LocalMiniLMEmbedder()) as running:
        yield running


async def _town(client: httpx.AsyncClient, stack: Stack) -> tuple[Town, str]:
    world_id = f"w-{uuid.uuid4().hex[:8]}"
    r = await client.post(
        "/v1/worlds", json={"name": "Smallville", "start_time": "2023-02-14T15:00:00Z", "world_id": world_id}
    )
    assert r.status_code == 201, r.text
    for npc, name, seed in (
        ("isabella", "Isabella Rodriguez", PARTY),
        ("sam", "Sam Moore", "Sam likes coffee"),
    ):
        r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": npc, "name": name, "seed": seed})
        assert r.status_code == 201, r.text
    tenant_id = (await client.get("/v1/tenant")).json()["tenant_id"]
    return Town(tenant_id, world_id), f"/v1/worlds/{world_id}/npcs"


async def test_a_player_chats_and_gets_a_reply_grounded_in_the_npcs_memories(
    stack: Stack, client_factory: MakeClient
) -> None:
    client = await client_factory()
    town, npcs = await _town(client, stack)
    await eventually(lambda: seeded(stack, town, "isabella"), bool, timeout=60)

    r = await client.post(f"{npcs}/isabella/chat", json={"player_id": "p1", "text": "Any plans for tonight?"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert "party" in body["reply"] and body["provider"] == "offline" and body["memory_ids"]

    async def replies() -> list[str]:
        page = await client.get(f"/v1/worlds/{town.world_id}/events", params={"type": "NpcReplied"})
        return [e["event"]["causation_id"] for e in page.json()["items"]]

    assert await eventually(replies, bool, timeout=30) == [body["event_id"]]

    r = await client.post(f"{npcs}/isabella/chat", json={"player_id": "p1", "text": "Hi", "wait": False})
    assert r.status_code == 202 and r.json()["status"] == "pending"
    # The chat's result is a resource: 202 while pending, then the reply.
    result = f"{npcs}/isabella/chats/{r.json()['event_id']}"
    answered = await eventually(lambda: client.get(result), lambda a: a.status_code == 200, timeout=30)
    assert answered.json()["event_id"] == r.json()["event_id"] and answered.json()["reply"]
    assert (await client.get(f"{npcs}/isabella/chats/{body['event_id']}")).json()["reply"] == body["reply"]
    stranger = await client_factory()
    assert (await stranger.get(result)).status_code == 404
    assert (await client.get(f"{npcs}/sam/chats/{r.json()['event_id']}")).status_code == 404

    r = await client.post(
        f"{npcs}/isabella/interview",
        json={"interviewer": "a reporter from the Smallville Gazette", "question": "Any news?"},
    )
    assert r.status_code == 200 and "party" in r.json()["reply"]


async def test_inner_voice_needs_the_admin_scope(stack: Stack, client_factory: MakeClient) -> None:
    admin = await client_factory()
    town, npcs = await _town(admin, stack)
    r = await admin.post("/v1/keys", json={"name": "game client", "scopes": ["read", "write"]})
    writer = httpx.AsyncClient(
        base_url=str(admin.base_url), timeout=10, headers={"Authorization": f"Bearer {r.json()['secret']}"}
    )
    try:
        assert (
            await writer.post(f"{npcs}/sam/chat", json={"player_id": "p", "text": "hi", "wait": False})
        ).status_code == 202
        r = await writer.post(f"{npcs}/sam/inner-voice", json={"directive": "You will run for mayor"})
        assert r.status_code == 403
    finally:
        await writer.aclose()
    # The world and dialogue topics are not ordered with each other: let the memory service meet Sam first,
    # so his thought carries his name.
    await eventually(lambda: recent(stack, town, "sam", "seed"), bool, timeout=60)
    r = await admin.post(f"{npcs}/sam/inner-voice", json={"directive": "You will run for mayor"})
    assert r.status_code == 202, r.text

    async def given() -> list[str]:
        page = await admin.get(f"/v1/worlds/{town.world_id}/events", params={"type": "InnerVoiceGiven"})
        return [e["event"]["payload"]["directive"] for e in page.json()["items"]]

    assert await eventually(given, bool, timeout=30) == ["You will run for mayor"]

    # The NPC holds it as its own thought, and it is what the NPC brings up when it next talks.
    thoughts = await eventually(lambda: recent(stack, town, "sam", "reflection"), bool, timeout=60)
    assert thoughts[0].description == 'Sam Moore thinks: "You will run for mayor"'
    event_id = r.json()["event_id"]
    await eventually(lambda: _handled_by_dialogue(stack, event_id), bool, timeout=60)
    await plant(
        stack.pool,
        town,
        ConversationRequested(target_npc_id="isabella", reason="Sam sees Isabella"),
        npc_id="sam",
    )

    async def first_line() -> list[str]:
        page = await admin.get(f"/v1/worlds/{town.world_id}/events", params={"type": "UtteranceSpoken"})
        return [e["event"]["payload"]["text"] for e in page.json()["items"]]

    lines = await eventually(first_line, bool, timeout=60)
    assert "I will run for mayor" in lines[0]


async def _handled_by_dialogue(stack: Stack, event_id: str) -> bool:
    async with stack.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT 1 FROM processed_events WHERE event_id = %s AND consumer LIKE 'dialogue-%%'", (event_id,)
        )
        return await cur.fetchone() is not None


async def test_relationships_are_queryable_and_other_tenants_see_nothing(
    stack: Stack, client_factory: MakeClient
) -> None:
    client = await client_factory()
    town, npcs = await _town(client, stack)
    assert (await client.get(f"{npcs}/sam/relationships")).json() == []
    for npc in ("isabella", "sam"):
        await eventually(lambda npc=npc: seeded(stack, town, npc), bool, timeout=60)  # type: ignore[misc]
    await plant(
        stack.pool,
        town,
        ConversationRequested(target_npc_id="sam", reason="meeting at the cafe"),
        npc_id="isabella",
    )

    async def known() -> list[dict[str, object]]:
        return (await client.get(f"{npcs}/sam/relationships")).json()  # type: ignore[no-any-return]

    (rel,) = await eventually(known, bool, timeout=90)
    assert rel["other_id"] == "isabella" and rel["familiarity"] == 1

    other = await client_factory()
    for path in ("sam/relationships", "sam/chat"):
        r = await (
            other.get(f"{npcs}/{path}")
            if path.endswith("ships")
            else other.post(f"{npcs}/{path}", json={"player_id": "p1", "text": "hello"})
        )
        assert r.status_code == 404 and "isabella" not in r.text
    assert (await client.get(f"{npcs}/nobody/relationships")).status_code == 404


async def test_bad_chat_input_is_a_problem_naming_the_field(stack: Stack, client_factory: MakeClient) -> None:
    client = await client_factory()
    _town_made, npcs = await _town(client, stack)
    r = await client.post(f"{npcs}/isabella/chat", json={"player_id": "p1", "text": "   "})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["errors"][0]["field"] == "text"
    r = await client.post(f"{npcs}/isabella/chat", json={"player_id": "p1", "text": "hi", "timeout_s": 0})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "timeout_s"


async def test_a_player_met_in_an_earlier_session_is_recognised_and_the_relationship_grew(
    stack: Stack, client_factory: MakeClient
) -> None:
    studio = await client_factory()
    town, npcs = await _town(studio, stack)
    await eventually(lambda: seeded(stack, town, "isabella"), bool, timeout=60)

    async def session_chat(player_id: str, text: str) -> dict[str, object]:
        r = await studio.post(f"/v1/worlds/{town.world_id}/sessions", json={"player_id": player_id})
        assert r.status_code == 201, r.text
        session = r.json()
        game = httpx.AsyncClient(base_url=studio.base_url, timeout=30,
                                 headers={"Authorization": f"Bearer {session['token']}"})
        async with game:
            said = await game.post(f"{npcs}/isabella/chat", json={"player_id": player_id, "text": text})
        assert said.status_code == 200, said.text
        assert (await studio.delete(f"/v1/keys/{session['session_id']}")).status_code == 204  # session over
        return said.json()  # type: ignore[no-any-return]

    first = await session_chat("p1", "Hello! I restore old clocks in the next town.")
    assert not str(first["reply"]).startswith("Good to see you again")
    heard = await eventually(lambda: recent(stack, town, "isabella", "observation"),
                             lambda ms: any("clocks" in m.description for m in ms), timeout=60)
    (clocks,) = [m.memory_id for m in heard if "clocks" in m.description]

    later = await session_chat("p1", "Any plans for tonight?")
    assert str(later["reply"]).startswith("Good to see you again!") and "party" in str(later["reply"])
    assert clocks in later["memory_ids"]  # type: ignore[operator]
    stranger = await session_chat("p2", "Any plans for tonight?")
    assert not str(stranger["reply"]).startswith("Good to see you again")

    known = {r["other_id"]: r for r in (await studio.get(f"{npcs}/isabella/relationships")).json()}
    assert known["player:p1"]["player_id"] == "p1" and known["player:p1"]["familiarity"] == 2
    assert known["player:p1"]["sentiment"] > known["player:p2"]["sentiment"] >= 5


async def _sse(client: httpx.AsyncClient, url: str, **headers: str) -> list[tuple[str, str, str]]:
    """(id, event, data) of every event of a stream that ends by itself."""
    out, fields = [], {"id": "", "event": "", "data": ""}
    async with client.stream("GET", url, headers=headers, timeout=60) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        async for line in r.aiter_lines():
            if not line:
                if fields["event"]:
                    out.append((fields["id"], fields["event"], fields["data"]))
                fields = {"id": "", "event": "", "data": ""}
            elif not line.startswith(":") and ":" in line:
                name, value = line.split(":", 1)
                fields[name] = value.strip()
    return out


async def test_a_reply_streams_word_by_word_and_a_late_client_resumes_with_last_event_id(
    stack: Stack, client_factory: MakeClient
) -> None:
    client = await client_factory()
    town, npcs = await _town(client, stack)
    await eventually(lambda: seeded(stack, town, "isabella"), bool, timeout=60)
    said = {"player_id": "p1", "text": "Any plans?", "wait": False}
    r = await client.post(f"{npcs}/isabella/chat", json=said)
    assert r.status_code == 202, r.text
    stream = f"{npcs}/isabella/chats/{r.json()['event_id']}/stream"
    events = await _sse(client, stream)
    chunks = [(int(i), json.loads(d)["text"]) for i, e, d in events if e == "chunk"]
    (reply,) = [json.loads(d) for _, e, d in events if e == "reply"]
    assert events[-1][1] == "reply" and len(chunks) > 3
    assert [i for i, _ in chunks] == list(range(1, len(chunks) + 1))
    assert "".join(t for _, t in chunks) == reply["reply"] and "party" in reply["reply"]
    assert reply == (await client.get(f"{npcs}/isabella/chats/{r.json()['event_id']}")).json()
    resumed = await _sse(client, stream, **{"Last-Event-ID": "2"})
    assert [(int(i), json.loads(d)["text"]) for i, e, d in resumed if e == "chunk"] == chunks[2:]
    assert resumed[-1][1] == "reply"
    assert (await (await client_factory()).get(stream)).status_code == 404  # another tenant
    bad = await client.get(stream, headers={"Last-Event-ID": "x"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "Last-Event-ID"
