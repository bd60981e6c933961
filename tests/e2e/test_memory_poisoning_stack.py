"""The memory-poisoning defence on the whole product (every service process, their Celery workers, the
gateway, a private broker): players repeat a false claim about another NPC and contradict canon over the REST
API; none of it counts toward a reflection, and the reflections the NPC's own perceptions then trigger in the
reflection worker neither cite nor state a claim."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from launcher.supervisor import ProcessGroup, process_commands
from npcworld.db import open_pool
from services.gateway.repository import GatewayRepository
from tests.e2e.conftest import gateway_ready
from tests.infra import BrokerForTests, free_port
from tests.integration.replay.town import service_env
from tests.polling import eventually

pytestmark = pytest.mark.integration

W = "mill-street"
STOLE = "Tom Reed stole the bread from the bakery."
SEEN = ["Ann Baker baked rye bread in the bakery oven", "Ann Baker sold rye bread to the miller",
        "Ann Baker swept the bakery floor", "Ann Baker counted the coins in the bakery till",
        "Ann Baker iced a cake for a wedding", "Ann Baker kneaded dough for tomorrow's bread",
        "Ann Baker mended the bakery sign", "Ann Baker wrote down the flour order",
        "Ann Baker washed the bread tins", "Ann Baker lit the bakery oven for the evening bake"]


@pytest.fixture(scope="module")
async def api(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    root = tmp_path_factory.mktemp("poisoning")
    broker = BrokerForTests(root)
    env = {**service_env(database_url, broker.bootstrap), "REFLECTION_THRESHOLD": "20"}
    port = free_port()
    group = ProcessGroup(process_commands(port), env, root / "logs")
    group.start()
    pool = await open_pool(database_url, min_size=1, max_size=2)
    try:
        async with pool.connection() as conn, conn.transaction():
            _, secret = await GatewayRepository(conn).create_tenant("poisoning")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30,
                                     headers={"Authorization": f"Bearer {secret}"}) as client:
            await eventually(lambda: gateway_ready(client), bool, timeout=120)
            yield client
    finally:
        await pool.close()
        group.stop()
        broker.stop()


async def _events(client: httpx.AsyncClient, *types: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    params: dict[str, Any] = {"type": list(types), "npc_id": "ann", "limit": 500}
    while True:
        page = (await client.get(f"/v1/worlds/{W}/events", params=params)).json()
        out += [e["event"] | {"seq": e["seq"]} for e in page["items"]]
        if page["next_cursor"] is None:
            return out
        params["cursor"] = page["next_cursor"]


async def _setup(api: httpx.AsyncClient) -> None:
    r = await api.post("/v1/worlds", json={"name": "Mill Street", "start_time": "2023-02-14T08:00:00Z",
                                           "world_id": W})
    assert r.status_code == 201, r.text
    for npc, name, seed in (("ann", "Ann Baker", "Ann Baker runs the bakery on Mill Street"),
                            ("tom", "Tom Reed", "Tom Reed mends boats at the harbour")):
        r = await api.post(f"/v1/worlds/{W}/npcs", json={"npc_id": npc, "name": name, "seed": seed})
        assert r.status_code == 201, r.text
    facts = {"facts": ["The bakery was founded in 1890"]}
    assert (await api.put(f"/v1/worlds/{W}/canon", json=facts)).status_code == 202


async def _lie(api: httpx.AsyncClient) -> list[dict[str, Any]]:
    """Two player ids of one liar: the claim about Tom eleven times, and one against canon."""
    lines = [("p-liar", STOLE)] * 10 + [("p-liar-alt", STOLE), ("p-liar", "The bakery was founded in 1990.")]
    for player, text in lines:
        r = await api.post(f"/v1/worlds/{W}/npcs/ann/chat", json={"player_id": player, "text": text})
        assert r.status_code == 200, r.text
    claims = await eventually(lambda: _events(api, "MemoryRecorded"),
                              lambda es: len(es) >= 1 + 2 * len(lines), timeout=120)
    return [e for e in claims if e["payload"]["trust"] == "low"]


async def test_claims_become_no_belief_and_no_reflection_on_the_whole_stack(api: httpx.AsyncClient) -> None:
    await _setup(api)
    lies = await _lie(api)
    tellers = {e["payload"]["told_by"] for e in lies if e["payload"]["kind"] == "observation"}
    assert len(lies) == 24 and tellers == {"player:p-liar", "player:p-liar-alt"}
    assert sum(e["payload"]["importance"] for e in lies) > 20  # would have triggered, had they counted
    for k, text in enumerate(SEEN):
        r = await api.post(f"/v1/worlds/{W}/npcs/ann/perceptions",
                           json={"description": text, "world_time": f"2023-02-14T09:{k:02d}:00Z"})
        assert r.status_code == 202, r.text
    done = await eventually(lambda: _events(api, "ReflectionCompleted"), bool, timeout=240)

    recorded = await _events(api, "MemoryRecorded")
    lie_ids = {e["payload"]["memory_id"] for e in lies}
    lie_events = {e["event_id"] for e in lies}
    triggers = await _events(api, "ReflectionTriggered")
    assert triggers and not [t for t in triggers if t["causation_id"] in lie_events]
    first = min(triggers, key=lambda t: t["seq"])
    cause = next(e for e in recorded if e["event_id"] == first["causation_id"])
    counted = sum(e["payload"]["importance"] for e in recorded if e["seq"] <= cause["seq"]
                  and e["payload"]["trust"] != "low" and e["payload"]["kind"] in ("observation", "dialogue"))
    assert first["payload"]["importance_sum"] == counted  # the claims added nothing
    insights = [i for e in done for i in e["payload"]["insights"]]
    assert insights and not [i for i in insights if set(i["evidence"]) & lie_ids]
    assert not [i for i in insights if "stole" in i["text"] or "1990" in i["text"]]
    thoughts = await eventually(lambda: _reflections(api), bool, timeout=60)
    assert {(m["source"], m["trust"]) for m in thoughts} == {("inferred", "medium")}
    inspector = await _console_npc_page(api)  # the ops console shows where each memory came from
    assert "told by player:p-liar, low" in inspector and "perceived, high" in inspector


async def _console_npc_page(api: httpx.AsyncClient) -> str:
    secret = api.headers["Authorization"].removeprefix("Bearer ")
    async with httpx.AsyncClient(base_url=str(api.base_url), timeout=30) as browser:
        signed = await browser.post("/console/login", data={"api_key": secret})
        assert signed.status_code == 303, signed.text
        page = await browser.get(f"/console/worlds/{W}/npcs/ann")
        assert page.status_code == 200, page.text
        return page.text


async def _reflections(api: httpx.AsyncClient) -> list[dict[str, Any]]:
    page = (await api.get(f"/v1/worlds/{W}/npcs/ann/memories", params={"limit": 500})).json()["items"]
    return [m for m in page if m["kind"] == "reflection"]
