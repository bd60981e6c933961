"""An NPC walks to the place of its decided action along a valid shortest path, then uses the object."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import ActionDecided, NpcCreated, ObjectStateChange, ObjectStateChanged, WorldDefined
from tests.infra import BrokerForTests
from tests.integration.world_state.support import T0, running_pipeline, sectors, walled_map

pytestmark = pytest.mark.integration

WALLS = [(10, y) for y in range(12) if y != 6] + [(19, y) for y in range(12) if y != 2]
DOORS = {(10, 6), (19, 2)}


def two_rooms_and_a_street() -> WorldDefined:
    return WorldDefined(
        sectors=sectors(
            ("Home", "bedroom", (0, 0, 9, 11), [("bed", (1, 1))]),
            ("Street", "road", (10, 0, 18, 11), []),
            ("Cafe", "counter", (19, 0, 29, 11), [("coffee machine", (25, 3))]),
        ),
        tile_map=walled_map(30, 12, WALLS),
        source="studio",
    )


async def test_npc_walks_to_its_planned_location_along_a_valid_path(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    async with running_pipeline(pool, broker.bootstrap) as p:
        w = p.world_id
        await p.create(
            two_rooms_and_a_street(), [NpcCreated(npc_id="ada", name="Ada", location=f"{w}:Home:bedroom")]
        )
        start = await p.last_seq()
        target = f"{w}:Cafe:counter:coffee machine"
        decided = await p.append(
            f"planning-{w}-ada",
            [
                ActionDecided(
                    description="making coffee",
                    location_path=target,
                    start=T0,
                    duration_minutes=30,
                    object_state=ObjectStateChange(object_path=target, state="brewing coffee"),
                )
            ],
            npc_id="ada",
        )
        await p.digested(decided)
        for _ in range(40):
            await p.step()
            if await p.events("ObjectStateChanged", after=start):
                break
        moved = [m for e in await p.events("NpcsMoved", after=start) for m in e.payload.moves]  # type: ignore[attr-defined]
        changes = await p.events("ObjectStateChanged", after=start)

    tiles = [(4, 5)] + [m.tile for m in moved]
    blocked = set(WALLS)
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in itertools.pairwise(tiles))
    assert not blocked & set(tiles)
    assert set(tiles) >= DOORS
    assert len(moved) == 7 + 13 + 7  # the shortest route through both doors
    assert moved[-1].tile == (25, 3) and moved[-1].arrived and moved[-1].path == target
    assert not any(m.arrived for m in moved[:-1])
    assert [(c.npc_id, c.payload) for c in changes] == [
        ("ada", ObjectStateChanged(object_path=target, state="brewing coffee", source="action", by_npc="ada"))
    ]
    # the clock moved one step per tile and the action's object is freed once the action ends
    assert changes[0].world_time - T0 <= timedelta(minutes=30)
