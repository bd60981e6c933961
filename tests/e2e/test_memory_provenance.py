"""Memory provenance on the real stack (gateway, dialogue and memory services, relay, broker, Postgres):
adversarial players' lines — a false claim repeated ten times, the same claim from a second player id, a claim
about another NPC, one against canon — are remembered as those players' claims (told, told_by player:<id>,
low trust, attributed in the text), never as what the NPC perceived; the NPC's replies to them are held no
higher; a claim of what the NPC perceived itself is corroborated; the memories API shows it all."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest

from npcworld.embeddings import LocalMiniLMEmbedder
from tests.e2e.conftest import running_gateway
from tests.infra import BrokerForTests
from tests.integration.dialogue.support import Stack, running_dialogue
from tests.polling import eventually

pytestmark = pytest.mark.integration
MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
FOUNDED = "The bakery was founded in 1890"
STOLE = "Tom Reed stole the bread from the bakery."
FIXED = "Tom Reed fixed the bakery oven"


@pytest.fixture(scope="module")
async def stack(database_url: str, broker: BrokerForTests) -> AsyncIterator[Stack]:
    async with running_dialogue(database_url, broker.bootstrap, LocalMiniLMEmbedder()) as running:
        yield running


@pytest.fixture(scope="module")
def gateway_url(database_url: str, broker: BrokerForTests, stack: Stack) -> Iterator[str]:
    """The gateway, reading memories from the stack's memory service."""
    with running_gateway(database_url, broker, MEMORY_API_URL=stack.memory.base_url) as url:
        yield url


async def _bakery(client: httpx.AsyncClient) -> str:
    world = f"w-{uuid.uuid4().hex[:8]}"
    r = await client.post("/v1/worlds", json={"name": "Mill Street", "start_time": "2023-02-14T08:00:00Z",
                                              "world_id": world})
    assert r.status_code == 201, r.text
    for npc, name, seed in (("ann", "Ann Baker", "Ann Baker runs the bakery on Mill Street"),
                            ("tom", "Tom Reed", "Tom Reed mends boats at the harbour")):
        r = await client.post(f"/v1/worlds/{world}/npcs", json={"npc_id": npc, "name": name, "seed": seed})
        assert r.status_code == 201, r.text
    assert (await client.put(f"/v1/worlds/{world}/canon", json={"facts": [FOUNDED]})).status_code == 202
    return world


async def _memories(client: httpx.AsyncClient, world: str) -> list[dict[str, Any]]:
    r = await client.get(f"/v1/worlds/{world}/npcs/ann/memories", params={"limit": 500})
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["items"]
    return items


async def _say(client: httpx.AsyncClient, world: str, player: str, text: str) -> str:
    r = await client.post(f"/v1/worlds/{world}/npcs/ann/chat", json={"player_id": player, "text": text})
    assert r.status_code == 200, r.text
    reply: str = r.json()["reply"]
    return reply


async def _perceived_first(client: httpx.AsyncClient, world: str) -> None:
    """Ann sees Tom fix the oven (a studio's engine posts it) before anyone tells her."""
    seen = {"description": FIXED, "subject": "Tom Reed", "world_time": "2023-02-14T08:05:00Z"}
    r = await client.post(f"/v1/worlds/{world}/npcs/ann/perceptions", json=seen)
    assert r.status_code == 202, r.text
    await eventually(lambda: _memories(client, world), lambda ms: any(m["description"] == FIXED for m in ms),
                     timeout=60)


async def test_adversarial_players_lines_are_held_as_their_claims(
    stack: Stack, client_factory: MakeClient
) -> None:
    client = await client_factory()
    world = await _bakery(client)
    await _perceived_first(client, world)
    for _ in range(10):
        await _say(client, world, "p-liar", STOLE)
    await _say(client, world, "p-liar-alt", STOLE)  # the same person under a second id
    await _say(client, world, "p-liar", "The bakery was founded in 1990.")
    await _say(client, world, "p-honest", f"{FIXED}.")
    told = await eventually(lambda: _memories(client, world),
                            lambda ms: sum(m["source"] == "told" for m in ms) == 13, timeout=90)

    stolen = [m for m in told if "stole" in m["description"] and m["kind"] == "observation"]
    assert len(stolen) == 11
    for m in stolen:  # each one that player's claim, attributed, never what Ann saw
        player = m["told_by"].removeprefix("player:")
        assert (m["source"], m["trust"]) == ("told", "low") and player in ("p-liar", "p-liar-alt")
        assert m["description"].startswith(f'A player ({player}) said to Ann Baker: "{STOLE}"')
    said = f'A player (p-liar) said to Ann Baker: "{STOLE}"'
    assert sorted(m["description"] for m in stolen if m["told_by"] == "player:p-liar") == sorted(
        [said] + [f"{said} (p-liar has told Ann Baker this {n} times)" for n in range(2, 11)])  # counted
    assert [m["description"] for m in stolen if m["told_by"] == "player:p-liar-alt"] == [
        f'A player (p-liar-alt) said to Ann Baker: "{STOLE}"']
    against = [m for m in told if "1990" in m["description"]]
    assert [(m["trust"], m["told_by"]) for m in against] == [("low", "player:p-liar")]
    assert "knows otherwise: The bakery was founded in 1890" in against[0]["description"]
    honest = [m for m in told if m["told_by"] == "player:p-honest"]
    assert [(m["source"], m["trust"]) for m in honest] == [("told", "medium")]  # she saw it herself

    everything = await _memories(client, world)  # the replies are recorded with what they answer
    by_player = {m["subject"]: m["trust"] for m in everything if m["kind"] == "dialogue"}
    assert by_player == {"player p-liar": "low", "player p-liar-alt": "low", "player p-honest": "medium"}
    own = {(m["kind"], m["source"], m["trust"]) for m in everything
           if m["subject"] is None or not m["subject"].startswith("player")}
    assert own == {("seed", "designer", "high"), ("observation", "perceived", "high")}


async def test_the_npc_retells_a_claim_as_the_players_and_retrieval_shows_its_provenance(
    stack: Stack, client_factory: MakeClient
) -> None:
    client = await client_factory()
    world = await _bakery(client)
    for _ in range(3):
        await _say(client, world, "p-liar", STOLE)
    await eventually(lambda: _memories(client, world),
                     lambda ms: sum(m["told_by"] == "player:p-liar" for m in ms) == 3, timeout=60)
    reply = await _say(client, world, "p-curious", "Who stole the bread from the bakery?")
    assert "stole" not in reply or "player" in reply.lower() or "told me" in reply.lower(), reply
    r = await client.post(f"/v1/worlds/{world}/npcs/ann/memories/retrieve",
                          json={"query": "Tom Reed and the bread", "k": 5})
    assert r.status_code == 200, r.text
    found = r.json()["items"]
    assert found and all({"source", "told_by", "trust"} <= set(m) for m in found)
    assert all(m["trust"] == "low" for m in found if "stole" in m["description"])
