"""Perception on the real pipeline: object edits reach NPCs in range within one step; spatial memory."""

from __future__ import annotations

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import (
    ActionDecided,
    NpcCreated,
    NpcMove,
    NpcsMoved,
    ObjectStateChanged,
    WorldDefined,
)
from tests.infra import BrokerForTests
from tests.integration.world_state.support import T0, running_pipeline, sectors, walled_map

pytestmark = pytest.mark.integration


async def test_object_edit_is_perceived_within_one_step_by_npcs_in_range_only(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    async with running_pipeline(pool, broker.bootstrap) as p:
        w = p.world_id
        kitchen, pantry, stove = f"{w}:House:kitchen", f"{w}:House:pantry", f"{w}:House:kitchen:stove"
        definition = WorldDefined(
            sectors=sectors(
                ("House", "kitchen", (0, 0, 29, 6), [("stove", (2, 5))]),
                ("House", "pantry", (0, 7, 29, 11), []),
            ),
            tile_map=walled_map(30, 12, []),
        )
        npcs = [NpcCreated(npc_id=n, name=n.title(), location=kitchen) for n in ("near", "far", "next_door")]
        await p.create(definition, npcs)
        placed = await p.append(
            f"positions-{w}",
            [
                NpcsMoved(
                    source="studio",
                    moves=(
                        NpcMove(npc_id="near", path=kitchen, tile=(3, 5)),  # 1 tile from the stove
                        NpcMove(npc_id="far", path=kitchen, tile=(25, 3)),  # same room, 23 tiles away
                        NpcMove(npc_id="next_door", path=pantry, tile=(2, 8)),  # 3 tiles away, another arena
                    ),
                )
            ],
        )
        await p.digested(placed)
        await p.step()
        start = await p.last_seq()
        edit = await p.append(
            f"objects-{w}", [ObjectStateChanged(object_path=stove, state="burning", source="user")]
        )
        await p.digested(edit)
        await p.step()
        after_edit = await p.events("ObservationMade", after=start)
        mark = await p.last_seq()
        await p.step()
        unchanged = await p.events("ObservationMade", after=mark)

    assert [(e.npc_id, e.payload.description, e.payload.location) for e in after_edit] == [  # type: ignore[attr-defined]
        ("near", "stove is burning", kitchen)
    ]
    assert unchanged == []


async def test_spatial_memory_grows_only_with_what_was_seen(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    async with running_pipeline(pool, broker.bootstrap) as p:
        w = p.world_id
        west, corridor, east = f"{w}:West:hall", f"{w}:Middle:corridor", f"{w}:East:hall"
        definition = WorldDefined(
            sectors=sectors(
                ("West", "hall", (0, 0, 19, 11), [("lamp", (5, 5))]),
                ("Middle", "corridor", (20, 0, 39, 11), []),
                ("East", "hall", (40, 0, 59, 11), [("clock", (55, 5))]),
            ),
            tile_map=walled_map(60, 12, []),
        )
        await p.create(definition, [NpcCreated(npc_id="kim", name="Kim", location=f"{w}:West:hall:lamp")])
        await p.step()
        known_at_start = {path for e in await p.events("PlacesDiscovered") for path in e.payload.paths}  # type: ignore[attr-defined]
        start = await p.last_seq()
        decided = await p.append(
            f"planning-{w}-kim",
            [
                ActionDecided(
                    description="checking the time",
                    location_path=f"{east}:clock",
                    start=T0,
                    duration_minutes=10,
                )
            ],
            npc_id="kim",
        )
        await p.digested(decided)
        for _ in range(60):
            await p.step()
            moves = [m for e in await p.events("NpcsMoved", after=start) for m in e.payload.moves]  # type: ignore[attr-defined]
            if moves and moves[-1].arrived:
                break
        log = await p.events("NpcsMoved", "PlacesDiscovered", after=start)

    assert known_at_start == {west, f"{west}:lamp"}
    position = (5, 5)
    discovered: set[str] = set()
    for event in log:
        if event.type == "NpcsMoved":
            position = event.payload.moves[-1].tile  # type: ignore[attr-defined]
            continue
        for path in event.payload.paths:  # type: ignore[attr-defined]
            discovered.add(path)
            if path == east:
                assert position[0] >= 40 - 8  # east hall entered the 8-tile vision radius
            if path == f"{east}:clock":
                assert abs(position[0] - 55) <= 8
    assert {corridor, east, f"{east}:clock"} <= discovered
    assert not discovered & known_at_start  # nothing discovered twice
