"""Simulation API end to end: a studio world without a tile map driven by posted positions, object edits
perceived on the next step, templates, the clock and tenant isolation."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from psycopg_pool import AsyncConnectionPool

from npcworld.eventstore import EventFilter, EventStore
from tests.infra import BrokerForTests
from tests.integration.world_state.support import running_pipeline
from tests.polling import eventually

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"
INN = [
    {
        "name": "Inn",
        "arenas": [
            {"name": "tavern", "objects": [{"name": "hearth"}, {"name": "bar"}]},
            {"name": "cellar", "objects": [{"name": "barrel"}]},
        ],
    }
]


async def _observations(pool: AsyncConnectionPool, world_id: str) -> list[tuple[str, str, str]]:
    async with pool.connection() as conn:
        stored = await EventStore().read_all(
            conn, 0, 1000, EventFilter(world_id=world_id, types=("ObservationMade",))
        )
    return [
        (s.envelope.npc_id or "", s.envelope.payload.description, s.envelope.payload.source)  # type: ignore[attr-defined]
        for s in stored
    ]


async def _ok(response: httpx.Response, status: int = 202) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def test_a_studio_world_without_tile_map_works_through_posted_positions_and_perceptions(
    client_factory: MakeClient, pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    client, stranger = await client_factory(), await client_factory()
    w = f"studio-{uuid.uuid4().hex[:8]}"
    await _ok(await client.post("/v1/worlds", json={"world_id": w, "name": "Inn", "start_time": T0}), 201)
    for npc in ("ana", "ben"):
        await _ok(await client.post(f"/v1/worlds/{w}/npcs", json={"npc_id": npc, "name": npc.title()}), 201)
    async with running_pipeline(pool, broker.bootstrap) as p:
        # Set-up is asynchronous: the world says how far it is, and has a (paused) clock before any place.
        world = await eventually(lambda: client.get(f"/v1/worlds/{w}"),
                                 lambda r: r.json()["readiness"]["ready"])
        assert world.json()["readiness"] == {"ready": True, "clock": True, "tree": False, "npcs_known": 2}
        clock = await _ok(await client.get(f"/v1/worlds/{w}/clock"), 200)
        assert clock["paused"] is True and clock["step"] == 0
        await _ok(await client.post(f"/v1/worlds/{w}/definition", json={"sectors": INN}))
        tree = await eventually(lambda: client.get(f"/v1/worlds/{w}/tree"), lambda r: r.status_code == 200)
        assert (await client.get(f"/v1/worlds/{w}")).json()["readiness"]["tree"] is True
        assert tree.json()["tiled"] is False and len(tree.json()["objects"]) == 3
        await _ok(await client.post(f"/v1/worlds/{w}/clock", json={"paused": False, "mode": "stepped"}))
        await eventually(lambda: client.get(f"/v1/worlds/{w}/clock"), lambda r: r.json()["paused"] is False)
        await _ok(
            await client.post(
                f"/v1/worlds/{w}/positions",
                json={
                    "moves": [
                        {"npc_id": "ana", "path": f"{w}:Inn:tavern"},
                        {"npc_id": "ben", "path": f"{w}:Inn:cellar"},
                    ]
                },
            )
        )
        await eventually(
            lambda: client.get(f"/v1/worlds/{w}/npcs/ben/state"),
            lambda r: r.json()["location"] == f"{w}:Inn:cellar",
        )
        await _ok(
            await client.post(
                f"/v1/worlds/{w}/object-states",
                json={"object_path": f"{w}:Inn:tavern:hearth", "state": "roaring"},
            )
        )
        await eventually(
            lambda: client.get(f"/v1/worlds/{w}/tree"),
            lambda r: {"path": f"{w}:Inn:tavern:hearth", "state": "roaring"} in r.json()["objects"],
        )
        p.world_id = w
        p.tenant_id = (await client.get("/v1/tenant")).json()["tenant_id"]
        # The gateway shows the running clock at once (it folds its own event); the ticker steps once
        # world_state has it.
        await p.digested(await p.events("ClockChanged"))
        await p.step()
        await _ok(
            await client.post(
                f"/v1/worlds/{w}/npcs/ana/perceptions",
                json={"description": "a bard starts singing", "world_time": T0},
            )
        )
        seen = await eventually(lambda: _observations(pool, w), lambda rows: len(rows) >= 4)
        state = await _ok(await client.get(f"/v1/worlds/{w}/npcs/ana/state"), 200)
        # Level of detail: a focus names places of the tree; the clock shows it until it is lifted.
        bad = await client.post(f"/v1/worlds/{w}/clock", json={"focus": [f"{w}:Inn:attic"]})
        assert bad.status_code == 422 and "focus.0" in bad.text
        await _ok(await client.post(f"/v1/worlds/{w}/clock", json={"focus": [f"{w}:Inn:tavern"]}))
        await eventually(lambda: client.get(f"/v1/worlds/{w}/clock"),
                         lambda r: r.json()["focus"] == [f"{w}:Inn:tavern"])
        await _ok(await client.post(f"/v1/worlds/{w}/clock", json={"paused": True}))  # focus kept
        await eventually(lambda: client.get(f"/v1/worlds/{w}/clock"), lambda r: r.json()["paused"] is True)
        assert (await client.get(f"/v1/worlds/{w}/clock")).json()["focus"] == [f"{w}:Inn:tavern"]
        await _ok(await client.post(f"/v1/worlds/{w}/clock", json={"focus": None}))
        await eventually(lambda: client.get(f"/v1/worlds/{w}/clock"), lambda r: r.json()["focus"] is None)

    # ana (tavern) perceives its objects, the edit included; ben (cellar) only the barrel
    assert sorted(seen) == [
        ("ana", "a bard starts singing", "studio"),
        ("ana", "bar is idle", "perception"),
        ("ana", "hearth is roaring", "perception"),
        ("ben", "barrel is idle", "perception"),
    ]
    assert ("ben", "hearth is roaring", "perception") not in seen
    assert set(state["known_places"]) == {f"{w}:Inn:tavern", f"{w}:Inn:tavern:hearth", f"{w}:Inn:tavern:bar"}
    # another tenant sees none of it; bad input names its field
    assert (await stranger.get(f"/v1/worlds/{w}/tree")).status_code == 404
    assert (
        await stranger.post(
            f"/v1/worlds/{w}/object-states", json={"object_path": f"{w}:Inn:tavern:hearth", "state": "out"}
        )
    ).status_code == 404
    bad = await client.post(
        f"/v1/worlds/{w}/object-states", json={"object_path": f"{w}:Inn:attic:chest", "state": "x"}
    )
    assert bad.status_code == 422 and "object_path" in bad.text


async def test_templates_are_listed_and_a_world_created_from_one_gets_its_town(
    client_factory: MakeClient, pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    client = await client_factory()
    listed = await _ok(await client.get("/v1/templates"), 200)
    assert any(t["name"] == "brindle-hollow" and t["npc_count"] == 25 for t in listed)
    bad = await client.post("/v1/worlds", json={"name": "x", "start_time": T0, "template": "atlantis"})
    assert bad.status_code == 422 and "template" in bad.text
    w = f"town-{uuid.uuid4().hex[:8]}"
    await _ok(
        await client.post(
            "/v1/worlds", json={"world_id": w, "name": "Town", "start_time": T0, "template": "brindle-hollow"}
        ),
        201,
    )
    async with running_pipeline(pool, broker.bootstrap):
        world = await eventually(lambda: client.get(f"/v1/worlds/{w}"), lambda r: r.json()["npc_count"] == 25)
        tree = await eventually(
            lambda: client.get(f"/v1/worlds/{w}/tree", params={"tiles": "true"}),
            lambda r: r.status_code == 200,
        )
        marta = await eventually(
            lambda: client.get(f"/v1/worlds/{w}/npcs/marta/state"),
            lambda r: r.json()["tile"] is not None and r.json()["known_places"],
        )
    assert world.json()["template"] == "brindle-hollow"
    assert tree.json()["tiled"] and len(tree.json()["tile_rows"]) == 45
    assert marta.json()["location"] == f"{w}:Quill house:bedroom"
    assert f"{w}:Lantern Cafe:kitchen" in marta.json()["known_places"]
