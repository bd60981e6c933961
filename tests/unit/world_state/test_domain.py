"""World-state domain: A* paths, routes for decided actions, one tile per step, object states, the clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from npcworld.contracts import (
    ActionDecided,
    ClockChanged,
    ObjectStateChange,
    SectorDef,
    TileMap,
    WorldDefined,
)
from services.world_state.domain import (
    ClockState,
    NpcState,
    WorldTree,
    apply_change,
    find_path,
    in_focus,
    is_due,
    next_tick,
    start_action,
    step_npcs,
)

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)
ROWS = ("....#....", "....#....", ".........", "....#....")


def tree() -> WorldTree:
    sectors = (
        SectorDef.model_validate({"name": "West", "arenas": [{"name": "room", "area": (0, 0, 3, 3)}]}),
        SectorDef.model_validate(
            {
                "name": "East",
                "arenas": [
                    {"name": "room", "area": (5, 0, 8, 3), "objects": [{"name": "stove", "tile": (8, 0)}]}
                ],
            }
        ),
    )
    return WorldTree.from_definition(
        "w", WorldDefined(sectors=sectors, tile_map=TileMap(width=9, height=4, rows=ROWS))
    )


def test_a_star_goes_around_walls_by_a_shortest_path() -> None:
    grid = tree().grid
    assert grid is not None
    path = find_path(grid, (0, 0), (8, 0))
    assert path[0] == (0, 0) and path[-1] == (8, 0) and (4, 2) in path
    assert len(path) - 1 == 8 + 4  # across, plus down to the door row and back up
    assert find_path(grid, (0, 0), (4, 0)) == []  # a wall is never a goal


def test_an_npc_walks_one_tile_per_step_and_uses_the_object_on_arrival() -> None:
    t = tree()
    npc = NpcState("ada", "w:West:room", (0, 0))
    action = ActionDecided(
        description="cooking",
        location_path="w:East:room:stove",
        start=T0,
        duration_minutes=30,
        object_state=ObjectStateChange(object_path="w:East:room:stove", state="cooking"),
    )
    npc = start_action(t, npc, action)
    assert len(npc.route) == 12
    changes = []
    for step in range(12):
        result = step_npcs(t, [npc], T0 + timedelta(seconds=10 * step))
        npc, changes = result.npcs[0], result.object_changes
        assert len(result.moves) == 1
    assert npc.tile == (8, 0) and npc.path == "w:East:room:stove" and npc.held_object == "w:East:room:stove"
    assert [c.state for _, c in changes] == ["cooking"]
    freed = step_npcs(t, [npc], T0 + timedelta(minutes=31)).object_changes
    assert [(c.state, c.source) for _, c in freed] == [("idle", "idle")]


def test_an_unknown_place_leaves_the_npc_where_it_is() -> None:
    npc = start_action(
        tree(),
        NpcState("ada", "w:West:room", (0, 0)),
        ActionDecided(description="flying", location_path="w:Moon:crater", start=T0, duration_minutes=5),
    )
    assert npc.route == () and npc.target is None and npc.action == "flying"


def test_the_clock_paces_real_time_fast_and_stepped_and_stops_at_until() -> None:
    clock = ClockState("t", "w", T0, 0, 10.0, 1.0, False, last_tick_wall=100.0)
    assert not is_due(clock, 105.0) and is_due(clock, 110.0)  # real time: 10 s per step
    fast = apply_change(clock, ClockChanged(paused=False, speed=60, step_seconds=10), 100.0)
    assert is_due(fast, 100.2) and not is_due(fast, 100.1)  # 60x: a step every 1/6 s
    stepped = apply_change(
        clock,
        ClockChanged(paused=False, speed=None, step_seconds=10, until=T0 + timedelta(seconds=20)),
        100.0,
    )
    assert is_due(stepped, 100.0)
    stepped, ticked = next_tick(stepped, 100.0)
    assert ticked.step == 1 and stepped.world_time == T0 + timedelta(seconds=10)
    stepped, _ = next_tick(stepped, 100.0)
    assert not is_due(stepped, 100.0)  # reached ``until``
    assert not is_due(replace(clock, paused=True), 1e9)


def test_a_real_time_clock_keeps_its_schedule_when_ticks_are_taken_late() -> None:
    clock = ClockState("t", "w", T0, 0, 10.0, 1.0, False, last_tick_wall=100.0)
    for n in range(1, 61):  # every tick taken 0.4 s after it was due: an hour of them, never a step lost
        assert is_due(clock, 100.0 + 10 * n + 0.4)
        clock, ticked = next_tick(clock, 100.0 + 10 * n + 0.4)
        assert ticked.due_at == clock.last_tick_wall == 100.0 + 10 * n
    assert clock.step == 60 and not is_due(clock, 100.0 + 10 * 61 - 0.1)
    held_up = 100.0 + 10 * 61 + 21.0  # a ticker held up 21 s: the two steps due meanwhile follow at once
    for n in (61, 62, 63):
        assert is_due(clock, held_up)
        clock, ticked = next_tick(clock, held_up)
        assert ticked.due_at == 100.0 + 10 * n
    assert not is_due(clock, held_up) and clock.step == 63
    resumed, ticked = next_tick(clock, 5_000.0)  # far behind (the run was down): a new schedule, no burst
    assert ticked.due_at == resumed.last_tick_wall == 5_000.0 and not is_due(resumed, 5_009.0)
    stepped = replace(clock, speed=None)
    assert next_tick(stepped, 7_000.0)[1].due_at is None  # a stepped clock has no schedule


def test_a_tiled_world_addresses_tiles_to_arenas() -> None:
    t = tree()
    assert t.address((6, 2)) == "w:East:room" and t.address((4, 2)) is None
    assert t.resolve("other-world:East:room:stove") == "w:East:room:stove"


def test_with_a_focus_each_tick_names_the_npcs_in_full_detail() -> None:
    clock = ClockState("t", "w", T0, 0, 10.0, None, False, last_tick_wall=100.0)
    places = {"ada": "w:Cafe:counter", "bo": "w:Cafe", "cy": "w:Cafeteria:hall", "di": None}
    assert next_tick(clock, 101.0, places)[1].detail is None  # no focus: everyone in full detail
    focused = apply_change(clock, ClockChanged(paused=False, step_seconds=10, focus=("w:Cafe",)), 100.0)
    assert next_tick(focused, 101.0, places)[1].detail == ("ada", "bo")  # not "w:Cafeteria", not nowhere
    assert in_focus("w:Cafe:counter:stool", ("w:Cafe:counter",)) and not in_focus(None, ("w",))
