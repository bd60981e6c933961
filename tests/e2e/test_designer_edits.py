"""Designers' edits over the REST API on a real stepping town (every service process, the gateway): a persona
edit, a retired NPC, a corrected and a forgotten memory, each an event the owning services apply, so a
rebuild of the read models and a fork of the world keep them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from launcher.supervisor import ProcessGroup, process_commands
from npcworld.contracts import ClockChanged
from npcworld.db import open_pool
from npcworld.projection import differences
from services.gateway.repository import KeyRepository
from services.world_state.repository import WorldRepository
from tests.e2e.conftest import gateway_ready
from tests.infra import BrokerForTests, free_port
from tests.integration.replay.town import Town, projections, service_env, wait_for_step
from tests.polling import eventually

pytestmark = pytest.mark.integration

# Three of the template town's first four NPCs: one renamed, one retired, one whose memories are edited.
RENAMED, RETIRED, EDITED = "marta", "tobias", "helene"


class DesignerTown(Town):
    """The replay tests' town, with the gateway running and a key of the town's tenant."""

    client: httpx.AsyncClient

    @property
    def npcs(self) -> str:
        return f"/v1/worlds/{self.world_id}/npcs"

    async def run_long(self, steps: int, step_seconds: float = 600) -> int:
        """Like ``run`` with long steps, so every NPC's action ends and the next is decided each step."""
        async with self.pool.connection() as conn:
            clock = await WorldRepository(conn).clock(self.tenant_id, self.world_id)
        assert clock is not None
        until = clock.world_time + timedelta(seconds=steps * step_seconds)
        await self._append(f"clock-ops-{self.world_id}",
                           ClockChanged(paused=False, speed=None, step_seconds=step_seconds, until=until),
                           when=clock.world_time)
        return clock.step + steps

    async def events(self, *types: str, after: int = 0) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = None
        while True:
            params: dict[str, Any] = {"type": list(types), "limit": 500}
            if cursor:
                params["cursor"] = cursor
            page = (await self.client.get(f"/v1/worlds/{self.world_id}/events", params=params)).json()
            out += [e for e in page["items"] if e["seq"] > after]
            if (cursor := page["next_cursor"]) is None:
                return out

    async def memories(self, npc_id: str, world_id: str | None = None) -> dict[str, str]:
        path = f"/v1/worlds/{world_id or self.world_id}/npcs/{npc_id}/memories"
        page = (await self.client.get(path, params={"limit": 500})).json()
        return {m["memory_id"]: m["description"] for m in page["items"]}


@pytest.fixture(scope="module")
async def town(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DesignerTown]:
    root = tmp_path_factory.mktemp("designer-town")
    broker = BrokerForTests(root)
    env = service_env(database_url, broker.bootstrap)
    port = free_port()
    group = ProcessGroup(process_commands(port), env, root / "logs")
    group.start()
    pool = await open_pool(database_url, min_size=1, max_size=4)
    try:
        town = DesignerTown(pool, group, env)
        await town.create()
        async with pool.connection() as conn, conn.transaction():
            scopes = ("read", "write", "admin")
            _, secret = await KeyRepository(conn).create_key(town.tenant_id, "designer", scopes)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30,
                                     headers={"Authorization": f"Bearer {secret}"}) as client:
            town.client = client
            await eventually(lambda: gateway_ready(client), bool, timeout=60)
            yield town
    finally:
        await pool.close()
        group.stop()
        broker.stop()


async def test_the_town_has_the_npcs_these_tests_edit(town: DesignerTown) -> None:
    listed = {n["npc_id"] for n in (await town.client.get(town.npcs)).json()["items"]}
    assert {RENAMED, RETIRED, EDITED} <= listed


async def test_a_retired_npc_stops_perceiving_and_acting_and_its_history_stays(town: DesignerTown) -> None:
    await wait_for_step(town, await town.run_long(2))
    await town.settle()
    assert [e for e in await town.events("ActionStarted") if e["event"]["npc_id"] == RETIRED]
    before = await town.memories(RETIRED)
    r = await town.client.delete(f"{town.npcs}/{RETIRED}", params={"reason": "moved away"})
    assert r.status_code == 204, r.text
    await town.settle()
    retired_at = max(e["seq"] for e in await town.events("NpcRetired"))

    await wait_for_step(town, await town.run_long(3))
    await town.settle()
    after = await town.events("ObservationMade", "PlacesDiscovered", "ActionDecided", "ActionStarted",
                              "DayPlanned", after=retired_at)
    assert [e["event"]["type"] for e in after if e["event"]["npc_id"] == RETIRED] == []
    assert {e["event"]["npc_id"] for e in after if e["event"]["type"] == "ActionStarted"} >= {RENAMED, EDITED}
    seen = [e["event"]["payload"] for e in after if e["event"]["type"] == "ObservationMade"]
    assert not [p for p in seen if p["subject"] == "Tobias Wren"], "others still see the retired NPC"
    gone = (await town.client.get(f"{town.npcs}/{RETIRED}/state")).json()
    assert gone["location"] is None and gone["action"] is None
    assert (await town.client.get(f"{town.npcs}/{EDITED}/state")).json()["location"] is not None

    listed = {n["npc_id"]: n for n in (await town.client.get(town.npcs)).json()["items"]}
    assert listed[RETIRED]["retired"] is True and listed[RENAMED]["retired"] is False
    assert (await town.client.get(f"/v1/worlds/{town.world_id}")).json()["npc_count"] == len(listed) - 1
    # Its history stays readable, unchanged. A line it heard before its retirement may still become a memory
    # after it (the memory service reaches that line after the retirement was stored); nothing later does.
    kept = await town.memories(RETIRED)
    assert before.items() <= kept.items()
    stored_at = {e["event"]["event_id"]: e["seq"] for e in await town.events()}
    causes = {e["event"]["payload"]["memory_id"]: e["event"]["causation_id"]
              for e in await town.events("MemoryRecorded") if e["event"]["npc_id"] == RETIRED}
    assert all(stored_at[causes[m]] < retired_at for m in kept.keys() - before.keys())
    for r in (
        await town.client.post(f"{town.npcs}/{RETIRED}/chat", json={"player_id": "p1", "text": "Hello?"}),
        await town.client.post(f"{town.npcs}/{RETIRED}/perceptions",
                               json={"description": "a bell rings", "world_time": "2023-02-13T09:00:00Z"}),
        await town.client.patch(f"{town.npcs}/{RETIRED}", json={"name": "Tobias Again"}),
    ):
        assert r.status_code == 409 and r.json()["errors"][0]["field"] == "npc_id", r.text
    assert (await town.client.delete(f"{town.npcs}/{RETIRED}")).status_code == 204  # again: nothing new
    assert len(await town.events("NpcRetired")) == 1


async def test_a_persona_edit_is_what_the_npc_is_listed_and_remembered_as(town: DesignerTown) -> None:
    r = await town.client.patch(f"{town.npcs}/{RENAMED}",
                                json={"name": "Marta Brandt", "traits": ["wary"], "occupation": None})
    assert r.status_code == 200, r.text
    assert r.json() | {"location": None} == {
        "npc_id": RENAMED, "name": "Marta Brandt", "age": r.json()["age"], "traits": ["wary"],
        "occupation": None, "location": None, "retired": False,
    }
    await town.settle()  # every service has taken the edit in
    r = await town.client.post(f"{town.npcs}/{RENAMED}/chat", json={"player_id": "p7", "text": "Hi there"})
    assert r.status_code == 200, r.text
    heard = await eventually(lambda: town.memories(RENAMED),
                             lambda m: any("(p7) said to Marta Brandt" in d for d in m.values()), timeout=60)
    assert not [d for d in heard.values() if "(p7) said to Marta Quill" in d]
    for body, field in [({"name": None}, "name"), ({"name": "  "}, "name"), ({"age": -1}, "age"),
                        ({"traits": ["x"] * 21}, "traits"), ({"mood": "grim"}, "mood")]:
        r = await town.client.patch(f"{town.npcs}/{RENAMED}", json=body)
        assert r.status_code == 422 and r.json()["errors"][0]["field"] == field, (body, r.text)
    assert (await town.client.patch(f"{town.npcs}/nobody", json={"age": 3})).status_code == 404


async def test_a_corrected_memory_is_found_by_its_new_text_a_forgotten_one_is_gone_and_replay_and_fork_agree(
    town: DesignerTown,
) -> None:
    base = f"{town.npcs}/{EDITED}/memories"
    kept = await eventually(lambda: town.memories(EDITED), lambda m: len(m) >= 2, timeout=60)
    corrected, forgotten = sorted(kept)[:2]
    text = "Helene keeps a pet dragon called Ember in the town library"
    r = await town.client.patch(f"{base}/{corrected}", json={"description": text})
    assert r.status_code == 202, r.text
    r = await town.client.delete(f"{base}/{forgotten}")
    assert r.status_code == 202, r.text
    now = await eventually(lambda: town.memories(EDITED),
                           lambda m: m.get(corrected) == text and forgotten not in m, timeout=60)
    untouched = {k: v for k, v in kept.items() if k not in (corrected, forgotten)}
    assert {k: now[k] for k in untouched} == untouched
    found = (await town.client.post(f"{base}/retrieve", json={"query": "a pet dragon", "k": 100})).json()
    assert found["items"][0]["memory_id"] == corrected and found["items"][0]["description"] == text
    assert forgotten not in {m["memory_id"] for m in found["items"]}
    for r in (await town.client.delete(f"{base}/{forgotten}"),
              await town.client.patch(f"{base}/{forgotten}", json={"description": "back"}),
              await town.client.delete(f"{base}/00000000-0000-0000-0000-000000000001")):
        assert r.status_code == 404, r.text
    r = await town.client.patch(f"{base}/{corrected}", json={"description": " "})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "description"

    await town.settle()
    assert await differences(town.pool, projections()["memory"]) == []  # a rebuild gives the same streams
    at = (await town.events("MemoryForgotten"))[-1]["event"]["world_time"]
    r = await town.client.post(f"/v1/worlds/{town.world_id}/fork", json={"at": at})
    assert r.status_code == 201, r.text
    forked = await eventually(lambda: town.memories(EDITED, r.json()["world_id"]),
                              lambda m: m.get(corrected) == text, timeout=60)
    assert forgotten not in forked
