"""Perception domain: vision radius, attention bandwidth, own arena only, changes only, spatial memory."""

from __future__ import annotations

from npcworld.contracts import SectorDef, TileMap, WorldDefined
from services.perception.domain import Body, Layout, new_percepts, perceive, perceive_step, visible_places


def layout(tiled: bool = True) -> Layout:
    objects = [{"name": f"crate{i}", "tile": (i, 0) if tiled else None} for i in range(12)]
    sectors = (
        SectorDef.model_validate(
            {
                "name": "Depot",
                "arenas": [{"name": "hall", "area": (0, 0, 19, 4) if tiled else None, "objects": objects}],
            }
        ),
        SectorDef.model_validate(
            {
                "name": "Depot2",
                "arenas": [
                    {
                        "name": "yard",
                        "area": (0, 5, 19, 9) if tiled else None,
                        "objects": [{"name": "well", "tile": (0, 5) if tiled else None}],
                    }
                ],
            }
        ),
    )
    tile_map = TileMap(width=20, height=10, rows=("." * 20,) * 10) if tiled else None
    return Layout.from_definition("w", WorldDefined(sectors=sectors, tile_map=tile_map))


def test_the_nearest_eight_things_of_the_own_arena_within_eight_tiles() -> None:
    me = Body("me", "Me", "w:Depot:hall", (0, 1), None)
    other_arena = Body("y", "Yan", "w:Depot2:yard", (0, 5), "drawing water")
    seen = perceive(me, [me, other_arena], {"w:Depot:hall:crate0": "open"}, layout())
    assert [p.entity for p in seen] == [f"w:Depot:hall:crate{i}" for i in range(8)]
    assert seen[0].description == "crate0 is open"
    assert all(p.location == "w:Depot:hall" for p in seen)


def test_an_unchanged_state_is_not_perceived_again() -> None:
    me = Body("me", "Me", "w:Depot:hall", (0, 1), None)
    first = perceive(me, [me], {}, layout())
    assert new_percepts(first, {p.entity: p.description for p in first}) == []
    changed = perceive(me, [me], {"w:Depot:hall:crate1": "on fire"}, layout())
    assert [p.description for p in new_percepts(changed, {p.entity: p.description for p in first})] == [
        "crate1 is on fire"
    ]


def test_spatial_memory_is_what_lies_within_the_vision_radius() -> None:
    places = visible_places(Body("me", "Me", "w:Depot:hall", (0, 0), None), layout())
    assert "w:Depot2:yard" in places and "w:Depot2:yard:well" in places
    assert "w:Depot:hall:crate8" in places and "w:Depot:hall:crate9" not in places


def test_an_untiled_world_perceives_the_whole_arena_and_nothing_else() -> None:
    me = Body("me", "Me", "w:Depot:hall", None, None)
    friend = Body("f", "Fay", "w:Depot:hall", None, "counting crates")
    seen = perceive(me, [me, friend], {}, layout(tiled=False), bandwidth=20)
    assert len(seen) == 13 and "Fay is counting crates" in {p.description for p in seen}
    assert visible_places(me, layout(tiled=False)) == {
        "w:Depot:hall",
        *(f"w:Depot:hall:crate{i}" for i in range(12)),
    }


def test_with_a_level_of_detail_only_npcs_in_focus_perceive_but_everyone_can_be_seen() -> None:
    near = Body("near", "Nia", "w:Depot:hall", (0, 1), "sorting crates")
    far = Body("far", "Fay", "w:Depot:hall", (1, 1), "counting")
    everyone = perceive_step([near, far], {}, layout(), {}, {})
    assert sorted(s.npc_id for s in everyone) == ["far", "near"]
    focused = perceive_step([near, far], {}, layout(), {}, {}, viewers={"near"})
    assert [s.npc_id for s in focused] == ["near"]
    assert "Fay is counting" in [p.description for p in focused[0].percepts]  # the coarse NPC is still seen
