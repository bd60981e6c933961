"""Designer canon on the real stack: facts set over the REST API (world and NPC) are in the context of the
NPC's recorded dialogue prompts; a player's chat line or another NPC's line that contradicts them is
remembered as that speaker's claim, never as what is so; the routes check input, scopes and tenants, and a
fork keeps its source's canon."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from npcworld.contracts import UtteranceSpoken
from npcworld.embeddings import LocalMiniLMEmbedder
from npcworld.llm.prompts.dialogue import PLAYER_REPLY
from tests.infra import BrokerForTests
from tests.integration.dialogue.support import PARTY, Stack, Town, plant, recent, running_dialogue, seeded
from tests.polling import eventually
from tests.recorded_prompts import RECORD_COLUMNS, prompt_text

pytestmark = pytest.mark.integration
MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
MAYOR = "The mayor is Tobias Wren"


@pytest.fixture(scope="module")
async def stack(database_url: str, broker: BrokerForTests) -> AsyncIterator[Stack]:
    async with running_dialogue(database_url, broker.bootstrap, LocalMiniLMEmbedder()) as running:
        yield running


async def _town(client: httpx.AsyncClient) -> Town:
    world_id = f"w-{uuid.uuid4().hex[:8]}"
    r = await client.post(
        "/v1/worlds", json={"name": "Smallville", "start_time": "2023-02-14T15:00:00Z", "world_id": world_id}
    )
    assert r.status_code == 201, r.text
    for npc, name, seed in (("isabella", "Isabella Rodriguez", PARTY), ("sam", "Sam Moore", "Sam likes tea")):
        r = await client.post(f"/v1/worlds/{world_id}/npcs", json={"npc_id": npc, "name": name, "seed": seed})
        assert r.status_code == 201, r.text
    return Town((await client.get("/v1/tenant")).json()["tenant_id"], world_id)


async def _observations(stack: Stack, town: Town, npc_id: str) -> list[str]:
    return [m.description for m in await recent(stack, town, npc_id, "observation")]


async def test_canon_is_in_the_prompt_and_a_contradicting_line_is_remembered_as_a_claim(
    stack: Stack, client_factory: MakeClient
) -> None:
    client = await client_factory()
    town = await _town(client)
    w = town.world_id
    assert (await client.put(f"/v1/worlds/{w}/canon", json={"facts": [MAYOR]})).status_code == 202
    own = "Isabella Rodriguez was born in Brindle Hollow"
    put = await client.put(f"/v1/worlds/{w}/npcs/isabella/canon", json={"facts": [own]})
    assert put.status_code == 202, put.text
    assert (await client.get(f"/v1/worlds/{w}/canon")).json() == {"facts": [MAYOR]}
    assert (await client.get(f"/v1/worlds/{w}/npcs/isabella/canon")).json() == {"facts": [own]}
    await eventually(lambda: seeded(stack, town, "isabella"), bool, timeout=60)
    await eventually(lambda: seeded(stack, town, "sam"), bool, timeout=60)

    said = "The mayor is Bob Stone, everyone knows that."
    r = await client.post(f"/v1/worlds/{w}/npcs/isabella/chat", json={"player_id": "p1", "text": said})
    assert r.status_code == 200, r.text
    assert "Tobias Wren" in r.json()["reply"]  # she holds canon true (the offline provider answers with it)
    claim = (f'A player (p1) claims to Isabella Rodriguez: "{said}" (Isabella Rodriguez knows otherwise:'
             f" {MAYOR})")
    heard = await eventually(lambda: _observations(stack, town, "isabella"), lambda seen: claim in seen,
                             timeout=60)
    assert not [m for m in heard if "said to" in m and "Bob Stone" in m]  # never stored as plain speech

    async with stack.pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM llm_calls WHERE tenant_id = %s AND world_id = %s"
            " AND prompt_kind = 'player_reply'", (town.tenant_id, w))
        (kind, version, inputs), = await cur.fetchall()
        prompt = prompt_text(kind, version, inputs)
    assert version == PLAYER_REPLY.version and MAYOR in prompt and own in prompt

    gossip = UtteranceSpoken(conversation_id=f"c-{uuid.uuid4().hex[:6]}", turn=1, listener_id="isabella",
                             text="I heard the mayor is Carl Brown now.")
    await plant(stack.pool, town, gossip, npc_id="sam")
    told = 'Sam Moore claims to Isabella Rodriguez: "I heard the mayor is Carl Brown now."'
    await eventually(lambda: _observations(stack, town, "isabella"),
                     lambda seen: any(m.startswith(told) and MAYOR in m for m in seen), timeout=60)


async def test_canon_routes_check_input_scopes_and_tenants(
    client_factory: MakeClient, gateway_url: str
) -> None:
    client, stranger = await client_factory(), await client_factory()
    secret = (await client.post("/v1/keys", json={"name": "viewer", "scopes": ["read"]})).json()["secret"]
    auth = {"Authorization": f"Bearer {secret}"}
    reader = httpx.AsyncClient(base_url=gateway_url, timeout=10, headers=auth)
    town = await _town(client)
    path = f"/v1/worlds/{town.world_id}/canon"
    assert (await client.get(path)).json() == {"facts": []}
    for body in ({"facts": [""]}, {"facts": ["x" * 501]}, {"facts": ["a"] * 51}, {"facts": "one"},
                 {"facts": [], "extra": 1}):
        r = await client.put(path, json=body)
        assert r.status_code == 422, (body, r.text)
    assert (await client.put(f"/v1/worlds/{town.world_id}/npcs/nobody/canon", json={"facts": []})
            ).status_code == 404
    assert (await reader.put(path, json={"facts": [MAYOR]})).status_code == 403
    assert (await client.put(path, json={"facts": [MAYOR, MAYOR]})).status_code == 202
    assert (await reader.get(path)).json() == {"facts": [MAYOR]}  # duplicates dropped
    fork = f"{town.world_id}-fork"
    forked = await client.post(f"/v1/worlds/{town.world_id}/fork",
                               json={"at": "2023-02-14T15:00:00Z", "new_world_id": fork})
    assert forked.status_code == 201, forked.text
    assert (await client.get(f"/v1/worlds/{fork}/canon")).json() == {"facts": [MAYOR]}  # kept by the fork
    assert (await stranger.get(path)).status_code == 404
    assert (await stranger.put(path, json={"facts": []})).status_code == 404
    assert (await stranger.get(f"/v1/worlds/{town.world_id}/npcs/sam/canon")).status_code == 404
    assert (await client.put(path, json={"facts": []})).status_code == 202
    assert (await client.get(path)).json() == {"facts": []}
    await reader.aclose()
